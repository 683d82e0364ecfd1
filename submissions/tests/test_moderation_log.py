"""Issue 20: every staff decision (and an owner's withdrawal) is written to an append-only moderation log, and
approval lifts the held-for-review and outlier flags from the unit's runs, so a "clean rows" filter of the exports
keeps the unit; the decision stays in the log, shown to staff in the admin and on the submission page."""

import pytest
from django.test import Client
from django.urls import reverse

from submissions import services
from submissions.models import ModerationAction, ModerationDecision, Submission
from submissions.tests.conftest import register_key

CHANGELIST = "/admin/submissions/submission/"


@pytest.fixture(autouse=True)
def review_first_one(settings):
    settings.NVMEDB_REVIEW_FIRST_N = 1


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def exported_flag_kinds(client: Client, submission_id: str) -> dict[int, set[str]]:
    """runs.csv's flag_kinds of each run of the submission, as a reader downloads it."""
    from analysis.models import TestRun

    run_ids = set(TestRun.objects.filter(submission_id=submission_id).values_list("pk", flat=True))
    lines = b"".join(client.get("/datasets/runs.csv").streaming_content).decode().splitlines()
    header = lines[0].split(",")
    kinds = {}
    for line in lines[1:]:
        cells = line.split(",")
        if int(cells[0]) in run_ids:
            kinds[int(cells[0])] = set(filter(None, cells[header.index("flag_kinds")].split(";")))
    return kinds


def test_approval_clears_held_and_outlier_flags_from_the_exports_and_the_decision_stays_in_the_log(
    owner, owner_api, staff, publishable_bundle, upload
):
    from analysis.models import Flag, TestRun

    held = upload(owner_api, publishable_bundle(register_key(owner)))
    assert held["status"] == "held" and held["report"]["rule"] == "review"
    kinds = set(Flag.objects.filter(submission_id=held["id"]).values_list("kind", flat=True))
    assert "held_for_review" in kinds, "a review hold is stored with the rows, from the start"
    # The crowd's outlier label, as the ingest writes it when the unit's peers disagree (their vote is tested in
    # analysis); here it rides on the held unit so approval has one to lift.
    run = TestRun.objects.filter(submission_id=held["id"]).first()
    Flag.objects.create(submission_id=held["id"], test_run=run, kind="outlier", reason="robust z 9.1 (test)")
    kept = {kind for kind in kinds if kind not in ("held_for_review", "outlier")}

    response = logged_in(staff).post(
        CHANGELIST, {"action": "approve_submissions", "_selected_action": [held["id"]]}, follow=True
    )
    assert "Published 1 submission(s)." in response.content.decode()

    exported = exported_flag_kinds(Client(), held["id"])
    assert exported, "the approved submission's runs are in the public export"
    for run_kinds in exported.values():
        assert not run_kinds & {"held_for_review", "outlier"}, run_kinds
    assert set(Flag.objects.filter(submission_id=held["id"]).values_list("kind", flat=True)) == kept

    decision = ModerationDecision.objects.get(submission_id=held["id"])
    assert decision.action == ModerationAction.APPROVE and decision.decided_by == staff
    assert decision.decided_by_name == "staff"
    assert "first 1 submissions are published after staff review them" in decision.reason

    page = logged_in(staff).get(reverse("submissions:detail", args=[held["id"]])).content.decode()
    assert 'id="moderation-log"' in page and "Approve by staff" in page
    owners_page = logged_in(owner).get(reverse("submissions:detail", args=[held["id"]])).content.decode()
    assert 'id="moderation-log"' not in owners_page, "the log is shown to staff only"
    admin_page = logged_in(staff).get(f"{CHANGELIST}{held['id']}/change/").content.decode()
    assert "Moderation decisions" in admin_page and "held for:" in admin_page


def test_reject_hide_and_withdraw_are_logged_with_who_and_why(owner, owner_api, staff, publishable_bundle, upload):
    first = upload(owner_api, publishable_bundle(register_key(owner), label="1"))
    submission = Submission.objects.get(pk=first["id"])
    services.submission_hide(submission=submission, reason="personal data in a file name", by=staff)
    services.submission_reject(submission=submission, reason="not a PTS run", by=staff)
    services.submission_withdraw(submission=submission, by=owner)

    log = list(
        ModerationDecision.objects.filter(submission=submission).values_list("action", "decided_by_name", "reason")
    )
    assert log == [
        ("hide", "staff", "personal data in a file name"),
        ("reject", "staff", "not a PTS run"),
        ("withdraw", "owner", "withdrawn by its owner"),
    ]

    second = upload(owner_api, publishable_bundle(register_key(owner), label="2"))
    services.submission_withdraw(submission=Submission.objects.get(pk=second["id"]), by=owner)
    withdrawal = ModerationDecision.objects.get(submission_id=second["id"])
    assert (withdrawal.action, withdrawal.decided_by, withdrawal.reason) == (
        "withdraw",
        owner,
        "withdrawn by its owner",
    )


def test_the_log_is_append_only(owner, owner_api, staff, publishable_bundle, upload):
    held = upload(owner_api, publishable_bundle(register_key(owner)))
    services.submission_reject(submission=Submission.objects.get(pk=held["id"]), reason="spam", by=staff)
    decision = ModerationDecision.objects.get(submission_id=held["id"])
    decision.reason = "something kinder"
    with pytest.raises(ValueError, match="append-only"):
        decision.save()
    with pytest.raises(ValueError, match="append-only"):
        decision.delete()
    assert ModerationDecision.objects.get(pk=decision.pk).reason == "spam"
    admin_page = logged_in(staff).get(f"/admin/submissions/moderationdecision/{decision.pk}/change/")
    assert admin_page.status_code == 200 and b"spam" in admin_page.content
    assert b'name="_save"' not in admin_page.content, "staff read the log in the admin, never edit it"
