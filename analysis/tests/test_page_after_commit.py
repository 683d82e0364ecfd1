"""The read side off the write path (browse.summaries, browse.page_cache): the summary's rebuild is
idempotent and a failed one leaves the previous summary whole; a page whose summary lags a change by more than a
minute says so; the shared page's key is the same in every process, and readers who miss at once wait for one
render."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache
from django.db.models import F
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils import timezone

from analysis.models import DriveModel, DrivePageSummary
from analysis.services import refresh_aggregates
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from browse import drive_page, page_cache, summaries, views

REPO = Path(__file__).resolve().parents[2]
URL = "/drives/acme-990-1tb/"


def test_a_rebuild_runs_once_per_change_and_a_failed_one_leaves_the_previous_summary(browse_drive, monkeypatch):
    drive = browse_drive
    assert summaries.rebuild_summary(drive.pk) == summaries.CURRENT  # run again: nothing to do
    before = DrivePageSummary.objects.get(drive_model=drive)
    make_browse_submission(drive_model=drive, firmware="FW3", generation=5)
    refresh_aggregates(drive_model=drive)  # the change, its task not run yet

    def killed(*args, **kwargs):
        raise RuntimeError("worker killed mid-rebuild")

    monkeypatch.setattr(summaries, "breakdowns", killed)
    with pytest.raises(RuntimeError):
        summaries.rebuild_summary(drive.pk)
    kept = DrivePageSummary.objects.get(drive_model=drive)
    assert (kept.version, kept.n_submissions, kept.page, kept.updated) == (
        before.version, before.n_submissions, before.page, before.updated,
    )  # fmt: skip
    monkeypatch.undo()
    assert summaries.rebuild_summary(drive.pk) == summaries.WRITTEN  # the task runs again
    assert DrivePageSummary.objects.get(drive_model=drive).n_submissions == 3
    assert summaries.rebuild_summary(drive.pk) == summaries.CURRENT


def test_a_rebuild_never_writes_over_a_newer_summary(browse_drive):
    drive = DriveModel.objects.get(pk=browse_drive.pk)
    fields = summaries.summary_fields(drive)  # read at this version ...
    make_browse_submission(drive_model=drive, firmware="FW3", generation=5)
    refresh_and_summarise(drive_model=drive)  # ... while a later change's rebuild writes first
    newer = DrivePageSummary.objects.get(drive_model=drive)
    assert summaries._write(drive, fields) == summaries.NEWER
    assert DrivePageSummary.objects.get(drive_model=drive).version == newer.version


def test_the_summary_version_is_the_same_for_the_same_data_in_any_process(browse_drive):
    drive = DriveModel.objects.get(pk=browse_drive.pk)
    stored = DrivePageSummary.objects.get(drive_model=drive)
    assert stored.version == summaries.summary_version(drive) and stored.data_version == drive.data_version
    DriveModel.objects.filter(pk=drive.pk).update(data_version=F("data_version") + 1)
    drive.refresh_from_db()
    assert summaries.summary_version(drive) != stored.version


def test_a_summary_lagging_a_change_by_more_than_a_minute_says_how_fresh_it_is(client, browse_drive):
    assert 'id="summary-freshness"' not in client.get(URL).content.decode()
    changed = timezone.now() - timedelta(seconds=20)
    DriveModel.objects.filter(pk=browse_drive.pk).update(data_version=F("data_version") + 1, data_changed_at=changed)
    assert 'id="summary-freshness"' not in client.get(URL).content.decode()  # its rebuild is due, not late
    changed = timezone.now() - timedelta(minutes=3)
    DriveModel.objects.filter(pk=browse_drive.pk).update(data_changed_at=changed)
    html = client.get(URL).content.decode()
    assert 'id="summary-freshness"' in html and f"{changed:%Y-%m-%d %H:%M} UTC is not summarised yet" in html
    summaries.rebuild_summary(browse_drive.pk)
    assert 'id="summary-freshness"' not in client.get(URL).content.decode()


def test_another_process_computes_the_same_deployment_id():
    code = "import django; django.setup(); from browse import page_cache; print(page_cache.deployment_id())"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "nvmedb.settings.test", "PYTHONPATH": str(REPO / "client" / "src")}
    env.pop("NVMEDB_DEPLOYMENT_ID", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == page_cache.deployment_id()


def test_the_page_key_names_no_process_and_follows_every_change(browse_drive):
    request = RequestFactory().get(URL)
    key = drive_page.shared_page_key(request, browse_drive.slug)
    page_cache.deployment_id.cache_clear()  # as a freshly started worker would compute it
    assert drive_page.shared_page_key(request, browse_drive.slug) == key
    make_browse_submission(drive_model=browse_drive, firmware="FW3", generation=5)
    refresh_aggregates(drive_model=browse_drive)
    changed = drive_page.shared_page_key(request, browse_drive.slug)
    assert changed != key  # the change, before its summary is rebuilt
    summaries.rebuild_summary(browse_drive.pk)
    assert drive_page.shared_page_key(request, browse_drive.slug) not in (key, changed)


def two_cache_clients():
    """Two clients of one cache, as two web processes hold: Redis when REDIS_URL is set, else one memory cache."""
    url = os.environ.get("REDIS_URL")
    if not url:
        return [LocMemCache("page-cache-test", {})] * 2
    from nvmedb.cache import FailOpenRedisCache

    prefix = f"test-{uuid.uuid4().hex[:8]}"
    return [FailOpenRedisCache(url, {"KEY_PREFIX": prefix}) for _ in range(2)]


def test_concurrent_misses_render_once():
    stores = two_cache_clients()
    key = f"browse:drive-page:test:{uuid.uuid4().hex}"
    renders, guard = [], threading.Lock()

    def render():
        with guard:
            renders.append(1)
        time.sleep(0.3)  # a render that takes long enough for every reader to miss
        return HttpResponse(b"the page")

    results = [None] * 8

    def reader(i):
        results[i] = page_cache.render_once(key, render, store=stores[i % 2]).content

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(renders) == 1 and results == [b"the page"] * 8
    for store in stores:
        store.delete(key)


def test_a_reader_renders_itself_when_the_first_render_fails():
    store = LocMemCache("page-cache-failing", {})
    key = "browse:drive-page:test:failing"
    store.add(f"{key}:rendering", 1, 10)  # another process is rendering ...
    threading.Timer(0.1, store.delete, args=(f"{key}:rendering",)).start()  # ... and gives up without a page
    started = time.monotonic()
    response = page_cache.render_once(key, lambda: HttpResponse(b"mine"), store=store)
    assert response.content == b"mine" and time.monotonic() - started < page_cache.WAIT_SECONDS


def test_the_drive_page_waits_for_the_render_another_worker_started(client, browse_drive, monkeypatch):
    key = drive_page.shared_page_key(RequestFactory().get(URL), browse_drive.slug)
    rendered = []
    real = views._drive_detail

    def counted(request, slug):
        rendered.append(slug)
        return real(request, slug)

    monkeypatch.setattr("browse.views._drive_detail", counted)
    cache.add(f"{key}:rendering", 1, 10)  # another worker missed first and is rendering
    threading.Timer(0.1, cache.set, args=(key, b"<p>rendered by the other worker</p>", 60)).start()
    response = client.get(URL)
    assert response.content == b"<p>rendered by the other worker</p>" and not rendered
    cache.delete(f"{key}:rendering")
    cache.delete(key)
    assert client.get(URL).status_code == 200 and rendered == [browse_drive.slug]


@pytest.mark.parametrize("receiver, task, what", [
    ("queue_page_summary", "rebuild_page_summary", "page summary rebuild"),
    ("queue_factor_refit", "refresh_factor_effects", "factor refit"),
])  # fmt: skip
def test_a_broker_outage_after_the_commit_is_logged_not_raised(monkeypatch, caplog, receiver, task, what):
    from kombu.exceptions import OperationalError

    from analysis import tasks

    def away(*args):
        raise OperationalError("the broker is away")

    monkeypatch.setattr(getattr(tasks, task), "delay", away)
    getattr(tasks, receiver)(drive_model_id=7)  # the change is committed: nothing may raise here
    assert f"could not queue the {what} of drive model 7" in caplog.text


def test_a_broker_outage_queueing_a_held_submissions_figures_is_logged_not_raised(monkeypatch, caplog):
    from kombu.exceptions import OperationalError

    from analysis import tasks

    def away(*args):
        raise OperationalError("the broker is away")

    monkeypatch.setattr(tasks.refresh_held_figures, "delay", away)
    tasks.queue_held_figures("0c7e9f5e-1f2a-4c55-9a57-3d1c2a4b5e6f")
    assert "could not queue the figures refit of held submission 0c7e9f5e" in caplog.text
    queued = []
    monkeypatch.setattr(tasks.refresh_held_figures, "delay", queued.append)
    tasks.queue_held_figures("0c7e9f5e-1f2a-4c55-9a57-3d1c2a4b5e6f")  # the broker back: the next view queues it
    assert queued == ["0c7e9f5e-1f2a-4c55-9a57-3d1c2a4b5e6f"]
