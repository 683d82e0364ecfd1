"""A new contributor's real trial (the quick profile on a file target, real fio: conftest's `real_bundle_file`) through
the site's own pipeline: published to its owner alone and never held for review; its page draws the drive page's
charts with readable labels and claims nothing about a drive; the owner's include=trial exports hold it while it is
published or held (by another check); nobody else sees any of it."""

from __future__ import annotations

import re

import pytest

from analysis.models import TestRun
from analysis.tests.test_datasets_exports import body, export, parsed
from nvmedb_client.bundle import verify_bundle
from submissions import services
from submissions.models import Submission, SubmissionStatus
from submissions.review import accepted_count, review_reason

pytestmark = pytest.mark.fio

RAW_ID = re.compile(r"\b[a-z_]+\.[a-z_]+\.rw\d{3}\.bs\d+\b")
HELD_BY_A_CHECK = {"outcome": "held", "rule": "outlier", "summary": "Far from its model's other runs.", "detail": "",
                   "reasons": ["tp.read_bw_bytes_per_s.rw100.bs1048576 is far from the other units'"]}  # fmt: skip


def submit(user, bundle_file, tmp_path) -> Submission:
    """What `nvmedb-client login` and `upload` do, then the worker: the key that signed the bundle registered for
    `user`, the bundle stored and validated."""
    signed = verify_bundle(bundle_file, extract_to=tmp_path / "signed-by")
    services.signing_key_register(user=user, public_key=signed.public_key)
    with bundle_file.open("rb") as stream:
        submission, _ = services.submission_create(uploader=user, stream=stream, original_name=bundle_file.name)
    return services.submission_validate(submission_id=submission.pk)


@pytest.fixture
def trial(newcomer, real_bundle_file, tmp_path) -> Submission:
    return submit(newcomer, real_bundle_file, tmp_path)


def page_text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def rows(client, table: str, **params) -> list[dict]:
    response = export(client, table, "json", **params)
    assert response.status_code == 200, response
    return parsed(table, "json", body(response))


def trial_rows(client, trial, table: str = "runs", **params) -> list[dict]:
    run_ids = set(TestRun.objects.filter(submission=trial).values_list("id", flat=True))
    return [r for r in rows(client, table, **params) if r.get("run_id") in run_ids]


def hold(trial) -> None:
    """As a check staff look at holds a run (an outlier, a cross-check)."""
    Submission.objects.filter(pk=trial.pk).update(status=SubmissionStatus.HELD, report=HELD_BY_A_CHECK)
    trial.refresh_from_db()


def test_a_new_contributors_trial_is_published_to_them_alone_never_held_for_review(client, trial, newcomer):
    assert trial.status == SubmissionStatus.PUBLISHED, trial.report
    assert trial.published_at is not None and trial.report["rule"] == ""
    assert not [r for r in trial.report["reasons"] if "staff review" in r]
    assert [e.to_status for e in trial.events.all()][-1] == SubmissionStatus.PUBLISHED
    # a trial proves nothing about its contributor: still in review for their real runs
    assert accepted_count(newcomer.pk) == 0 and review_reason(newcomer) is not None

    assert client.get(f"/submissions/{trial.pk}/").status_code == 404
    assert client.get(f"/api/v1/submissions/{trial.pk}/").status_code == 404
    assert client.get(f"/api/v1/published-submissions/{trial.pk}/").status_code == 404
    assert trial_rows(client, trial) == [] and trial_rows(client, trial, "measurements") == []
    assert export(client, "runs", "json", include="trial").status_code == 403


def test_the_api_tells_its_owner_it_is_a_trial(trial, newcomer):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(newcomer)
    answer = api.get(f"/api/v1/submissions/{trial.pk}/").json()
    assert (answer["status"], answer["trial"]) == ("published", True)
    assert answer["explanation"] is None, "a file is no unit of any drive: there is nothing to place it among"


def test_the_owners_trial_page_draws_its_charts_with_readable_labels(client, trial, newcomer):
    client.force_login(newcomer)
    html = client.get(f"/submissions/{trial.pk}/").content.decode()
    assert 'id="trial-notice"' in html
    for section in ("tp", "lat"):  # the drive page's sections of the tests it ran
        assert f'id="test-{section}"' in html, section
    assert html.count('<figure class="chart"') >= 4 and html.count('class="plot" data-figure=') >= 4
    assert "vendor/plotly/plotly.min.js" in html and "js/charts.js" in html
    assert 'id="test-spread"' not in html, "one trial is no population of units"
    assert not RAW_ID.search(html), RAW_ID.search(html).group(0)
    text = page_text(html)
    assert "Throughput" in text and "Rule that failed" not in text and "staff review" not in text


def test_a_file_target_makes_no_hardware_claim(client, trial, newcomer):
    client.force_login(newcomer)
    html = client.get(f"/submissions/{trial.pk}/").content.decode()
    text = page_text(html)
    assert "Unknown drive" not in text and "drive-detail" not in text
    assert "nothing amiss" not in text and "Why is this unit different?" not in text
    assert "<dt>PCIe link</dt>" not in html and "<dt>Firmware</dt>" not in html and "the drive's" not in text
    assert "it measured a file on the host's file system" in text and "says nothing about any drive" in text
    assert "Throughput of a file on the host's file system" in text


def test_a_trial_held_by_another_check_still_shows_its_owner_charts_and_export_rows(client, trial, newcomer):
    hold(trial)
    client.force_login(newcomer)
    html = client.get(f"/submissions/{trial.pk}/").content.decode()
    assert 'id="test-tp"' in html and html.count('<figure class="chart"') >= 4
    assert "Far from its model" in html and not RAW_ID.search(html), "the report's ids read as labels too"
    assert len(trial_rows(client, trial, include="trial")) == TestRun.objects.filter(submission=trial).count()
    assert trial_rows(client, trial, "measurements", include="trial")
    submissions = rows(client, "submissions", include="trial")
    assert str(trial.pk) in {str(s["submission_id"]) for s in submissions}
    assert trial_rows(client, trial) == [], "without include=trial the owner gets the public rows only"

    client.logout()
    assert client.get(f"/submissions/{trial.pk}/").status_code == 404
    assert trial_rows(client, trial) == []


def test_the_owners_include_trial_export_holds_the_published_trial_and_nobody_elses(
    client, trial, newcomer, django_user_model
):
    client.force_login(newcomer)
    owned = trial_rows(client, trial, include="trial")
    assert len(owned) == TestRun.objects.filter(submission=trial).count()
    assert trial_rows(client, trial) == [], "without include=trial the owner gets the public rows only"

    client.force_login(django_user_model.objects.create_user("someone-else", password="pw-for-tests-only"))
    assert trial_rows(client, trial, include="trial") == []
    assert trial_rows(client, trial, "measurements", include="trial") == []
    assert client.get(f"/submissions/{trial.pk}/").status_code == 404


def test_a_rejected_trial_has_no_charts_and_no_export_rows(client, trial, newcomer, django_user_model):
    staff = django_user_model.objects.create_user("staff", password="pw-for-tests-only", is_staff=True)
    services.submission_reject(submission=trial, reason="not a real run", by=staff)
    client.force_login(newcomer)
    response = client.get(f"/submissions/{trial.pk}/")
    assert response.status_code == 200 and '<figure class="chart"' not in response.content.decode()
    assert trial_rows(client, trial, include="trial") == []
