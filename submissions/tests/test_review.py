"""A contributor's first NVMEDB_REVIEW_FIRST_N submissions wait for staff; staff publish them from the admin, and the
drive's aggregates follow. Through the API, the real pipeline and the admin's action."""

import pytest
from django.test import Client

from submissions.models import Submission, SubmissionStatus
from submissions.tests.conftest import register_key

CHANGELIST = "/admin/submissions/submission/"


@pytest.fixture(autouse=True)
def review_first_two(settings):
    settings.NVMEDB_REVIEW_FIRST_N = 2


def staff_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client


def approve(staff, *submission_ids):
    return staff_client(staff).post(
        CHANGELIST, {"action": "approve_submissions", "_selected_action": [str(i) for i in submission_ids]}, follow=True
    )


def aggregates_counting(submission_id) -> list[int]:
    from analysis.models import DriveModelAggregate, TestRun

    model_ids = TestRun.objects.filter(submission_id=submission_id).values_list("drive_model_id", flat=True)
    rows = DriveModelAggregate.objects.filter(drive_model_id__in=model_ids, factor="all")
    return sorted(set(rows.values_list("n_runs", flat=True)))


def test_a_new_contributors_first_submissions_wait_for_staff_then_publish_directly(
    owner, owner_api, anonymous_api, staff, publishable_bundle, upload
):
    key = register_key(owner)

    first = upload(owner_api, publishable_bundle(key, label="1"))
    assert first["status"] == "held"
    assert first["report"]["rule"] == "review"
    assert (
        "first 2 submissions are published after staff review them; 0 of yours have been accepted"
        in (first["report"]["reasons"][-1])
    )
    assert anonymous_api.get(first["url"]).status_code == 404, "a held submission is not public"
    waiting = staff_client(staff).get(CHANGELIST, {"awaiting": "review"})
    assert [str(i) for i in waiting.context["cl"].queryset.values_list("id", flat=True)] == [first["id"]]
    assert aggregates_counting(first["id"]) == [], "a held submission is in no aggregate"

    response = approve(staff, first["id"])
    assert response.status_code == 200
    assert "Published 1 submission(s)." in response.content.decode()
    approved = Submission.objects.get(pk=first["id"])
    assert approved.status == SubmissionStatus.PUBLISHED and approved.published_at is not None
    assert approved.events.last().note == f"approved by {staff}"
    assert anonymous_api.get(first["url"]).json()["status"] == "published"
    assert aggregates_counting(first["id"]) == [1], "approval refreshes the drive's aggregates"

    second = upload(owner_api, publishable_bundle(key, label="2"))
    assert second["status"] == "held"
    assert "1 of yours has been accepted" in second["report"]["reasons"][-1]
    approve(staff, second["id"])
    assert aggregates_counting(second["id"]) == [2]

    third = upload(owner_api, publishable_bundle(key, label="3"))
    assert third["status"] == "published", third["report"]
    assert third["report"]["rule"] == ""
    assert aggregates_counting(third["id"]) == [3]


def test_a_submission_held_for_review_is_not_compliant_until_approved(
    owner, owner_api, staff, publishable_bundle, upload
):
    """The review hold comes after the ingest: the runs follow the submission's status, and approval gives them back
    the server's own verdict (a quick run's: not compliant, for its own reasons)."""
    from analysis.models import TestRun

    held = upload(owner_api, publishable_bundle(register_key(owner)))
    assert held["status"] == "held"
    runs = TestRun.objects.filter(submission_id=held["id"])
    assert runs.exists() and not runs.filter(compliant=True).exists()
    for run in runs:
        assert run.compliance_reasons[0].startswith("held: "), run.compliance_reasons
        assert "first 2 submissions are published after staff review them" in run.compliance_reasons[0]

    approve(staff, held["id"])
    for run in TestRun.objects.filter(submission_id=held["id"]):
        assert run.compliant == run.derived_compliant
        assert run.compliance_reasons and not any(r.startswith("held: ") for r in run.compliance_reasons)


def test_staff_accounts_are_not_held_for_review(staff, publishable_bundle, upload):
    from submissions import services
    from submissions.tests.conftest import api_client

    client = api_client(services.api_token_create(user=staff)[1])
    assert upload(client, publishable_bundle(register_key(staff)))["status"] == "published"


def test_only_a_held_submission_with_dataset_rows_can_be_approved(owner, owner_api, staff, publishable_bundle, upload):
    from submissions.tests.bundles import bundle_factory

    rejected = upload(owner_api, publishable_bundle(bundle_factory.new_signing_key()))
    assert rejected["status"] == "rejected"
    response = approve(staff, rejected["id"])
    assert "only a held submission can be approved" in response.content.decode()
    assert Submission.objects.get(pk=rejected["id"]).status == SubmissionStatus.REJECTED

    Submission.objects.filter(pk=rejected["id"]).update(status=SubmissionStatus.HELD)
    response = approve(staff, rejected["id"])
    assert "has no dataset rows" in response.content.decode()
    assert Submission.objects.get(pk=rejected["id"]).status == SubmissionStatus.HELD


def test_approval_refuses_content_another_account_sent_first(
    owner, owner_api, staff, publishable_bundle, upload, monkeypatch
):
    from submissions import pipeline, services
    from submissions.tests.conftest import api_client

    staff_api = api_client(services.api_token_create(user=staff)[1])
    first = upload(staff_api, publishable_bundle(register_key(staff)))
    assert first["status"] == "published"
    with monkeypatch.context() as before_the_rule:  # a copy that was held before copies were judged at validation
        before_the_rule.setattr(pipeline, "first_received_conflict", lambda submission, rows=None: None)
        held = upload(owner_api, publishable_bundle(register_key(owner)))  # the same fio outputs
    assert held["status"] == "held"

    response = approve(staff, held["id"])
    assert f"These fio outputs were first received from another contributor in submission {first['id']}" in (
        response.content.decode()
    )
    assert Submission.objects.get(pk=held["id"]).status == SubmissionStatus.HELD
    assert Submission.objects.get(pk=first["id"]).status == SubmissionStatus.PUBLISHED
