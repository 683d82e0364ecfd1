"""Drive page summaries are rebuilt after every change of a drive's data (browse.summaries): a page shows
exactly what the per-request computation from every public run shows, follows a publication, withdrawal, hiding or
rejection once its transaction commits (never inside it), never counts a trial, and costs the same queries for one
submission or thirty."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from analysis.models import DrivePageSummary, TestRun
from analysis.services import refresh_aggregates
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from browse import queries

pytestmark = pytest.mark.django_db

PAGES = (
    "/drives/acme-990-1tb/",
    "/drives/acme-990-1tb/?variable=lat.lat_mean_ns.rw000.bs4096",
    "/drives/",
    "/drives/?sort=-iops_4k_read&pcie_generation=4",
    "/compare/?drives=acme-990-1tb,other-drive",
    "/drives/acme-990-1tb/charts/by-firmware-iops_4k_read.csv",
    "/drives/acme-990-1tb/charts/iops.csv",
    "/compare/charts/latency.csv?drives=acme-990-1tb,other-drive",
)


@pytest.fixture
def drives(db):
    drive = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=3, scale=0.6)
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4, scale=0.9)
    TestRun.objects.filter(drive_model=drive, firmware__revision="FW2").update(overprovisioning=0.2)
    refresh_and_summarise(drive_model=drive)
    other = factories.DriveModelFactory(name="Other 1TB", slug="other-drive")
    make_browse_submission(drive_model=other, scale=0.8)
    refresh_and_summarise(drive_model=other)
    return drive, other


def pages(client) -> dict[str, bytes]:
    found = {}
    for url in PAGES:
        response = client.get(url)
        assert response.status_code == 200, url
        found[url] = response.content
    return found


def per_request_pages(client) -> dict[str, bytes]:
    """The same pages computed from every public run on each request, as before summaries were written: a summary
    of another format only says that its drive is public."""
    DrivePageSummary.objects.update(format=0)
    cache.clear()
    try:
        return pages(client)
    finally:
        DrivePageSummary.objects.update(format=queries.SUMMARY_FORMAT)
        cache.clear()


def assert_summaries_match(client) -> dict[str, bytes]:
    assert DrivePageSummary.objects.exists()
    shown = pages(client)
    assert shown == per_request_pages(client)
    return shown


def test_every_page_from_the_summaries_is_what_the_per_request_computation_shows(client, drives):
    drive, _ = drives
    shown = assert_summaries_match(client)
    assert "from 3 submissions" in shown["/drives/acme-990-1tb/"].decode()
    summary = DrivePageSummary.objects.get(drive_model=drive)
    assert (summary.n_runs, summary.n_submissions, summary.n_units) == (12, 3, 3)


def test_the_stored_figures_equal_the_ones_computed_from_every_public_run(drives):
    drive, _ = drives
    stored = queries.stored_summaries([drive.pk])[drive.pk]
    aggregates = {drive.pk: list(drive.aggregates.all())}
    computed = queries.compute_summaries([drive.pk], aggregates)[0][drive.pk]
    for run in computed.newest:
        run["submission__published_at"] = None  # filled from the submissions when read, not stored
    for run in stored.newest:
        run["submission__published_at"] = None
    assert stored.list_cells == queries.list_cells(aggregates[drive.pk])
    stored.list_cells = None  # written with the data only
    assert stored == computed


def test_a_withdrawal_a_hiding_and_a_rejection_rebuild_the_summary_after_their_commit(
    client, drives, django_user_model, django_capture_on_commit_callbacks
):
    from submissions.services import submission_hide, submission_reject, submission_withdraw

    drive, _ = drives
    staff = django_user_model.objects.create_user(username="staff", password="x" * 12, is_staff=True)
    submissions = [run.submission for run in TestRun.objects.filter(drive_model=drive, test="iops").order_by("id")]
    pages(client)  # warm every cache first: none may keep showing what left
    with django_capture_on_commit_callbacks(execute=True):
        submission_withdraw(submission=submissions[0], by=submissions[0].uploader)
    html = assert_summaries_match(client)["/drives/acme-990-1tb/"].decode()
    assert "from 2 submissions" in html and str(submissions[0].pk)[:8] not in html
    with django_capture_on_commit_callbacks(execute=True):
        submission_hide(submission=submissions[1], reason="spam", by=staff)
    html = assert_summaries_match(client)["/drives/acme-990-1tb/"].decode()
    assert "from 1 submission " in html and str(submissions[1].pk)[:8] not in html
    with django_capture_on_commit_callbacks(execute=True):
        submission_reject(submission=submissions[2], reason="bogus", by=staff)
    assert not DrivePageSummary.objects.filter(drive_model=drive).exists()
    assert client.get("/drives/acme-990-1tb/").status_code == 404
    assert b"acme-990-1tb" not in client.get("/drives/").content


def test_before_the_rebuild_a_withdrawn_submission_is_neither_listed_nor_charted(
    client, drives, django_capture_on_commit_callbacks
):
    """Until the after-commit task rewrites the summary, the page reads the previous one (its counts lag), but never
    shows what left: a withdrawn submission leaves the newest list at once, and a summary that charts a withdrawn
    run is set aside for the computation from the public runs."""
    from submissions.services import submission_withdraw

    drive, _ = drives
    charted = DrivePageSummary.objects.get(drive_model=drive).summary["representative"]["iops"]
    runs = TestRun.objects.filter(drive_model=drive, test="iops").select_related("submission")
    other = runs.exclude(pk=charted).order_by("id").first().submission
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submission_withdraw(submission=other, by=other.uploader)
    cache.clear()
    html = client.get("/drives/acme-990-1tb/").content.decode()
    assert "from 3 submissions" in html and str(other.pk)[:8] not in html  # the previous summary, less what left
    representative = runs.get(pk=charted).submission
    with django_capture_on_commit_callbacks(execute=False) as more:
        submission_withdraw(submission=representative, by=representative.uploader)
    cache.clear()
    assert DrivePageSummary.objects.get(drive_model=drive).n_submissions == 3  # not rebuilt yet
    html = client.get("/drives/acme-990-1tb/").content.decode()
    assert "from 1 submission " in html and str(representative.pk)[:8] not in html  # computed from public runs
    for callback in [*callbacks, *more]:
        callback()
    assert DrivePageSummary.objects.get(drive_model=drive).n_submissions == 1
    assert_summaries_match(client)


def test_a_publication_commits_without_the_summary_and_the_after_commit_task_rebuilds_it(
    client, drives, django_capture_on_commit_callbacks
):
    """Ingest refreshes the aggregates with `also_submission` before the worker sets the status, in one
    transaction; the summary is not touched there, and the task queued on commit rebuilds it from the committed
    runs."""
    drive, _ = drives
    pages(client)
    before = DrivePageSummary.objects.get(drive_model=drive)
    fresh = make_browse_submission(drive_model=drive, firmware="FW3", generation=5, status="ingesting",
                                   published_at=None)  # fmt: skip
    with django_capture_on_commit_callbacks(execute=False) as callbacks, CaptureQueriesContext(connection) as run:
        refresh_aggregates(drive_model=drive, also_submission=fresh)
        fresh.status, fresh.published_at = "published", timezone.now()
        fresh.save()
    summary_table = DrivePageSummary._meta.db_table
    assert not [q["sql"] for q in run.captured_queries if summary_table in q["sql"]]
    unchanged = DrivePageSummary.objects.get(drive_model=drive)
    assert (unchanged.version, unchanged.n_submissions, unchanged.updated) == (
        before.version, before.n_submissions, before.updated,
    )  # fmt: skip
    drive.refresh_from_db()
    assert drive.data_version == before.data_version + 1 and unchanged.data_version == before.data_version
    for callback in callbacks:
        callback()
    rebuilt = DrivePageSummary.objects.get(drive_model=drive)
    assert (rebuilt.n_submissions, rebuilt.data_version) == (4, drive.data_version)
    html = assert_summaries_match(client)["/drives/acme-990-1tb/"].decode()
    assert "from 4 submissions" in html and str(fresh.pk)[:8] in html


def test_a_trial_never_enters_a_summary(client, drives):
    drive, _ = drives
    trial = make_browse_submission(drive_model=drive, firmware="TRIAL", generation=5)
    TestRun.objects.filter(submission=trial).update(profile="quick")
    refresh_and_summarise(drive_model=drive)
    html = assert_summaries_match(client)["/drives/acme-990-1tb/"].decode()
    assert "from 3 submissions" in html and str(trial.pk)[:8] not in html and "TRIAL" not in html


def test_a_summary_of_another_format_or_slug_is_not_used(client, drives):
    drive, _ = drives
    expected = pages(client)
    DrivePageSummary.objects.filter(drive_model=drive).update(format=queries.SUMMARY_FORMAT + 1)
    cache.clear()
    assert pages(client) == expected
    drive.slug = "acme-renamed"
    drive.save()
    DrivePageSummary.objects.filter(drive_model=drive).update(format=queries.SUMMARY_FORMAT)
    html = client.get("/drives/acme-renamed/").content.decode()
    assert "/drives/acme-renamed/charts/" in html and "/drives/acme-990-1tb/charts/" not in html


def test_the_command_writes_missing_summaries(client, drives):
    expected = pages(client)
    DrivePageSummary.objects.all().delete()
    call_command("refresh_aggregates", "--missing")
    assert DrivePageSummary.objects.count() == 2
    cache.clear()
    assert pages(client) == expected


LIST_QUERIES = (
    {},
    {"sort": "-iops_4k_read"},
    {"pcie_generation": "3"},
    {"pcie_generation": "5"},
    {"compliance": "pts"},
    {"compliance": "imported"},
    {"pcie_generation": "4", "compliance": "pts", "sort": "bw_1m_read"},
)


def assert_the_list_matches_every_public_run(client):
    """The list's filters from the summaries select what the API's filters select from every public run, and show
    the counts of every public run."""
    from analysis.filters import DriveFilter
    from analysis.models import DriveModel
    from analysis.selectors import public_test_runs
    from browse.filters import DriveListFilter

    for params in LIST_QUERIES:
        from_summaries = list(
            DriveListFilter(params, queryset=DriveModel.objects.all()).qs.values_list("pk", flat=True)
        )
        from_runs = list(DriveFilter(params, queryset=DriveModel.objects.all()).qs.values_list("pk", flat=True))
        assert from_summaries == from_runs, params
    html = client.get("/drives/").content.decode()
    for drive in DriveModel.objects.filter(test_runs__in=public_test_runs()).distinct():
        runs = public_test_runs().filter(drive_model=drive)
        units = runs.exclude(unit=None).values("unit").distinct().count()
        assert f"{units} / {runs.count()}</td>" in html


def test_the_list_filters_from_the_summaries_select_what_every_public_run_selects(
    client, drives, django_capture_on_commit_callbacks
):
    from submissions.services import submission_withdraw

    drive, _ = drives
    imported = make_browse_submission(drive_model=drive, firmware="FW9", generation=5)
    TestRun.objects.filter(submission=imported).update(source="ssspt")
    refresh_and_summarise(drive_model=drive)
    assert_the_list_matches_every_public_run(client)
    with django_capture_on_commit_callbacks(execute=True):  # the list follows once the summary is rebuilt
        submission_withdraw(submission=imported, by=imported.uploader)  # generation 5 and the import leave with it
    assert_the_list_matches_every_public_run(client)
    assert not client.get("/drives/", {"pcie_generation": "5"}).context["drives"]


def test_the_shared_page_follows_metadata_and_is_never_served_to_a_signed_in_reader(client, drives, django_user_model):
    drive, _ = drives
    first = client.get("/drives/acme-990-1tb/")
    assert client.get("/drives/acme-990-1tb/").content == first.content  # from the cache
    assert "Cookie" in first["Vary"]
    drive.controller = "Phison E18"  # as staff approval of a proposal writes it
    drive.save()
    assert "Phison E18" in client.get("/drives/acme-990-1tb/").content.decode()
    user = django_user_model.objects.create_user(username="reader-x", password="x" * 12)
    client.force_login(user)
    html = client.get("/drives/acme-990-1tb/").content.decode()
    assert "reader-x" in html and "Send for review" in html


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_pages_cost_the_same_queries_for_one_submission_or_thirty(client, django_assert_max_num_queries):
    small = factories.DriveModelFactory(slug="small")
    make_browse_submission(drive_model=small)
    refresh_and_summarise(drive_model=small)
    big = factories.DriveModelFactory(slug="big")
    make_browse_submission(drive_model=big)
    refresh_and_summarise(drive_model=big)
    urls = ("/drives/big/", "/drives/", "/compare/?drives=big,small")
    one = [_queries(client, url) for url in urls]
    for i in range(29):
        make_browse_submission(drive_model=big, firmware=f"F{i % 4}", generation=3 + i % 3)
    refresh_and_summarise(drive_model=big)
    cache.clear()
    thirty = [_queries(client, url) for url in urls]
    assert one == thirty
    cache.clear()
    with django_assert_max_num_queries(10):  # the shared page's key, then the page from its summary and effects
        client.get("/drives/big/")
    with django_assert_max_num_queries(1):
        client.get("/drives/big/")
    with django_assert_max_num_queries(4):
        client.get("/compare/?drives=big,small")
