"""Only honest results are public: a trial (a file target or the quick profile) is its contributor's own."""

from __future__ import annotations

import re

import pytest

from analysis.factor_effects import refresh_factor_effects
from analysis.models import DriveModelAggregate, TestRun
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from analysis.tests.factories_dirth import add_results
from analysis.tests.surface_factory import surface_run
from analysis.tests.test_datasets_exports import body, export, parsed
from datasets import export_rows
from datasets.releases import build_release
from datasets.tables import TABLES

FORMATS = ("csv", "json", "ndjson", "parquet")


def _as_trial(submission, **kind) -> list[int]:
    """Store a submission's runs as ingest stores a trial."""
    runs = TestRun.objects.filter(submission=submission)
    runs.update(**kind)
    return list(runs.values_list("id", flat=True))


@pytest.fixture
def trials(browse_drive, django_user_model):
    """Beside `browse_drive` (two real submissions): a quick run of "Unknown drive" and a file-target run of the same
    drive model as the real ones, both published, by one owner."""
    owner = django_user_model.objects.create_user("tester", password="pw-for-tests-only")
    unknown = factories.DriveModelFactory(name="Unknown drive", slug="unknown-drive", model_number="")
    quick = make_browse_submission(drive_model=unknown, uploader=owner)
    filed = make_browse_submission(drive_model=browse_drive, uploader=owner, firmware="FW9", scale=5.0)
    keys = ("submission", "drive_model", "firmware", "unit", "host", "pcie_link")
    for submission_id in set(TestRun.objects.values_list("submission_id", flat=True)):  # the surface tables' rows
        first = TestRun.objects.filter(submission_id=submission_id).order_by("pk").first()
        surface_run(**{k: getattr(first, k) for k in keys})
    run_ids = _as_trial(quick, profile="quick", target_kind="file") + _as_trial(filed, target_kind="file")
    for submission_id in set(TestRun.objects.values_list("submission_id", flat=True)):  # demand-intensity rows
        add_results(TestRun.objects.filter(submission_id=submission_id).order_by("pk").first())
    refresh_and_summarise(drive_model=unknown)
    refresh_and_summarise(drive_model=browse_drive)
    refresh_factor_effects(unknown)  # what the task queued on commit does (no commit in a test transaction)
    refresh_factor_effects(browse_drive)
    export_rows.rebuild_all()  # the measurements CSV's rows, as ingest writes them
    return {"owner": owner, "unknown": unknown, "submissions": [quick, filed], "run_ids": set(run_ids)}


def _export_rows(client, table: str, fmt: str, **params) -> list[dict]:
    response = export(client, table, fmt, **params)
    assert response.status_code == 200, response
    return parsed(table, fmt, body(response))


def _leaks(rows: list[dict], trials) -> list[dict]:
    """Rows of `rows` that belong to a trial (by run, submission or drive)."""
    sub_ids = {str(s.pk) for s in trials["submissions"]}
    return [
        row
        for row in rows
        if row.get("run_id") in trials["run_ids"]
        or str(row.get("submission_id")) in sub_ids
        or row.get("drive_slug") == trials["unknown"].slug
    ]


def test_a_trial_is_absent_from_the_home_page_counts_and_the_drive_pages(client, trials):
    html = client.get("/").content.decode()
    assert re.search(r'id="count-drives">1<', html)
    assert re.search(r'id="count-submissions">2<', html)
    assert re.search(r'id="count-units">2<', html)
    assert re.search(rf'id="count-measurements">{2 * (5 * 9 + 5 * 2 + 5 * 4 + 12)}<', html)
    assert "Unknown drive" not in html

    listed = client.get("/drives/").content.decode()
    assert "Acme NVMe 990 1TB" in listed and "Unknown drive" not in listed
    assert client.get("/drives/unknown-drive/").status_code == 404
    assert client.get("/compare/", {"drives": "acme-990-1tb,unknown-drive"}).status_code == 400

    page = client.get("/drives/acme-990-1tb/").content.decode()
    text = " ".join(re.sub(r"<[^>]+>", "", page).split())
    assert "8 public PTS test runs from 2 submissions on 2 units · 2 surface runs (nvmedb extension" in text
    assert "FW9" not in page
    chosen = client.get("/drives/acme-990-1tb/", {"submission": str(trials["submissions"][1].pk)})
    assert chosen.status_code == 404


def test_a_trial_never_enters_its_models_aggregates(trials, browse_drive):
    overall = DriveModelAggregate.objects.get(drive_model=browse_drive, metric="iops_4k_read", factor="all")
    assert (overall.n_runs, overall.n_units) == (2, 2)
    assert not DriveModelAggregate.objects.filter(drive_model=browse_drive, level="FW9").exists()
    assert not DriveModelAggregate.objects.filter(drive_model=trials["unknown"]).exists()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("table", list(TABLES))
def test_a_trial_is_absent_from_every_export_in_every_format(client, trials, table, fmt):
    rows = _export_rows(client, table, fmt)
    assert rows, "the real submissions are exported"
    assert _leaks(rows, trials) == []


def test_a_trial_is_absent_from_the_read_api(client, trials):
    drives = client.get("/api/v1/drives/").json()["results"]
    assert [d["slug"] for d in drives] == ["acme-990-1tb"]
    assert client.get("/api/v1/drives/unknown-drive/").status_code == 404
    detail = client.get("/api/v1/drives/acme-990-1tb/").json()
    assert all(a["n_runs"] <= 2 for a in detail["aggregates"]) and detail["public_runs"] == 8
    published = client.get("/api/v1/published-submissions/").json()["results"]
    assert {s["id"] for s in published}.isdisjoint({str(s.pk) for s in trials["submissions"]}) and len(published) == 2
    for submission in trials["submissions"]:
        assert client.get(f"/api/v1/published-submissions/{submission.pk}/").status_code == 404
        assert client.get(f"/api/v1/submissions/{submission.pk}/").status_code == 404
    measurements = client.get("/api/v1/measurements/", {"page_size": 5000}).json()["results"]
    assert measurements and not any(m["run_id"] in trials["run_ids"] for m in measurements)


def test_a_release_holds_no_trial(trials, releases_dir):
    import csv

    release = build_release()
    for table in TABLES:
        with open(releases_dir / str(release.number) / f"{table}.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        run_ids = {str(i) for i in trials["run_ids"]}
        assert rows and not [r for r in rows if r.get("run_id") in run_ids], table
        assert not [r for r in rows if r.get("submission_id") in {str(s.pk) for s in trials["submissions"]}], table
        assert not [r for r in rows if r.get("drive_slug") == trials["unknown"].slug], table


def test_the_owner_sees_their_trial_on_the_profile_the_submission_page_and_an_include_trial_export(client, trials):
    quick = trials["submissions"][0]
    assert client.get(f"/submissions/{quick.pk}/").status_code == 404, "a stranger never sees a trial's page"
    response = client.get("/datasets/runs.json", {"include": "trial"})
    assert response.status_code == 403 and b"sign in" in response.content

    client.force_login(trials["owner"])
    assert str(quick.pk) in client.get("/profile/").content.decode()
    page = client.get(f"/submissions/{quick.pk}/")
    assert page.status_code == 200 and 'id="trial-notice"' in page.content.decode()
    assert "Unknown drive" not in page.content.decode() and 'href="/drives/unknown-drive/"' not in page.content.decode()
    assert "a file on the host&#x27;s file system" in page.content.decode(), "a file target is not called a drive"
    for fmt in FORMATS:
        rows = _export_rows(client, "runs", fmt, include="trial")  # PTS runs; the surface runs in surface_runs
        rows += _export_rows(client, "surface_runs", fmt, include="trial")
        assert {r["run_id"] for r in rows} >= trials["run_ids"]
        assert len(rows) == 10 + len(trials["run_ids"]), "the public runs and the owner's own trials"
    public_only = {r["run_id"] for r in _export_rows(client, "runs", "json")}
    assert not public_only & trials["run_ids"], "without include=trial even the owner gets the public rows only"
    quick_rows = _export_rows(client, "measurements", "json", include="trial", compliance="quick")
    assert quick_rows and {r["run_id"] for r in quick_rows} <= trials["run_ids"]
    assert export(client, "runs", "json", include="trial")["Cache-Control"] == "private, no-store"


def test_include_trial_adds_only_the_viewers_own_trials(client, trials, django_user_model):
    client.force_login(django_user_model.objects.create_user("someone-else", password="pw-for-tests-only"))
    assert _leaks(_export_rows(client, "measurements", "ndjson", include="trial"), trials) == []
    assert client.get(f"/submissions/{trials['submissions'][0].pk}/").status_code == 404


def test_imported_results_stay_public_and_labelled(client, db):
    imported = factories.iops_run(
        rounds=1, mixes=(0,), block_sizes=(4096,), source="ssspt", profile="imported", target_kind="", signed=False
    )
    rows = _export_rows(client, "runs", "json")
    assert [(r["run_id"], r["source"]) for r in rows] == [(imported.id, "ssspt")]
    assert client.get(f"/drives/{imported.drive_model.slug}/").status_code == 200


def test_the_migration_takes_trials_out_of_aggregates_stored_before_this_rule(trials, browse_drive):
    from importlib import import_module

    from django.apps import apps

    migration = import_module("analysis.migrations.0004_honest_trial_runs_leave_aggregates")
    expected = sorted(DriveModelAggregate.objects.filter(drive_model=browse_drive).values_list(
        "metric", "factor", "level", "median", "q1", "q3", "n_runs", "n_units"))  # fmt: skip
    # as the aggregates were before: every published run counted, trials included
    polluted = factories.DriveModelAggregateFactory(drive_model=trials["unknown"], n_runs=1, n_units=1)
    factories.DriveModelAggregateFactory(drive_model=browse_drive, factor="firmware", level="FW9")
    migration.recompute(apps, None)
    assert not DriveModelAggregate.objects.filter(pk=polluted.pk).exists()
    assert not DriveModelAggregate.objects.filter(drive_model=trials["unknown"]).exists()
    assert expected == sorted(DriveModelAggregate.objects.filter(drive_model=browse_drive).values_list(
        "metric", "factor", "level", "median", "q1", "q3", "n_runs", "n_units"))  # fmt: skip


def test_published_trials_do_not_take_a_contributor_past_review(trials, settings):
    from submissions.review import accepted_count, established_uploader_ids, review_reason

    settings.NVMEDB_REVIEW_FIRST_N = 2
    owner = trials["owner"]
    assert accepted_count(owner.pk) == 0, "two published trials are no accepted submissions"
    assert review_reason(owner) is not None
    assert owner.pk not in established_uploader_ids([owner.pk])
    for trial in trials["submissions"]:  # a trial is published to its owner alone: review holds nothing back
        assert review_reason(owner, submission=trial) is None

    real = make_browse_submission(drive_model=trials["unknown"], uploader=owner, firmware="FW8")
    assert review_reason(owner, submission=real) is not None, "a real run of a contributor in review is reviewed"
    another = make_browse_submission(drive_model=trials["unknown"], uploader=owner, firmware="FW7")
    assert {real.status, another.status} == {"published"}
    assert accepted_count(owner.pk) == 2
    assert review_reason(owner) is None
    assert owner.pk in established_uploader_ids([owner.pk])


def test_a_trial_held_by_another_check_stays_its_owners_on_its_page_and_in_include_trial_exports(client, trials):
    from submissions.models import Submission

    quick = trials["submissions"][0]
    run_ids = set(TestRun.objects.filter(submission=quick).exclude(test="surface").values_list("id", flat=True))
    Submission.objects.filter(pk=quick.pk).update(status="held", published_at=None)
    assert client.get(f"/submissions/{quick.pk}/").status_code == 404
    assert not {r["run_id"] for r in _export_rows(client, "runs", "json")} & run_ids

    client.force_login(trials["owner"])
    page = client.get(f"/submissions/{quick.pk}/").content.decode()
    assert 'id="test-iops"' in page and '<figure class="chart"' in page
    assert not re.search(r"\b[a-z_]+\.[a-z_]+\.rw\d{3}\.bs\d+\b", page)
    assert {r["run_id"] for r in _export_rows(client, "runs", "csv", include="trial")} >= run_ids
    assert str(quick.pk) in {
        str(r["submission_id"]) for r in _export_rows(client, "submissions", "json", include="trial")
    }
    assert not {r["run_id"] for r in _export_rows(client, "runs", "json")} & run_ids

    Submission.objects.filter(pk=quick.pk).update(status="rejected")
    assert '<figure class="chart"' not in client.get(f"/submissions/{quick.pk}/").content.decode()
    assert not {r["run_id"] for r in _export_rows(client, "runs", "json", include="trial")} & run_ids


def test_a_quick_trial_of_a_drive_names_the_drive_without_linking_it(client, trials, browse_drive):
    tried = make_browse_submission(drive_model=browse_drive, uploader=trials["owner"], firmware="FW8")
    _as_trial(tried, profile="quick")
    client.force_login(trials["owner"])
    page = client.get(f"/submissions/{tried.pk}/").content.decode()
    assert 'id="trial-notice"' in page and "the quick profile" in page and "file system" not in page
    assert "IOPS of Acme NVMe 990 1TB" in " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert 'href="/drives/acme-990-1tb/"' not in page and 'id="test-iops"' in page
