"""Exports cost the server little: CSV leaves in large writes, the export query joins the flags aggregated once, and
the production web server streams them from threads so pages keep answering."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.db import connection

from analysis.models import Flag, Measurement
from analysis.tests.factories import iops_run
from datasets import export_rows, pg_copy
from datasets.filters import Filters
from datasets.tables import TABLES

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_csv_download_leaves_in_chunks_of_at_least_chunk_bytes_not_one_per_row(client):
    export_rows.rebuild_for_submission(iops_run(rounds=60).submission_id)  # 3,360 rows, about 2 MB of CSV
    response = client.get("/datasets/measurements.csv")
    chunks = list(response.streaming_content)
    header, records, last = chunks[0], chunks[1:-1], chunks[-1]
    assert header.startswith(b"measurement_id,") and header.count(b"\n") == 1
    assert len(records) >= 4, "enough rows for several full chunks"
    assert all(len(chunk) >= pg_copy.CHUNK_BYTES for chunk in records)
    assert pg_copy.CHUNK_BYTES >= 64 * 1024
    assert len(last) > 0
    assert b"".join(chunks).count(b"\n") == 1 + Measurement.objects.count()
    assert all(chunk.endswith(b"\n") for chunk in chunks), "every chunk ends between records"


def _plan_nodes(node: dict):
    yield node
    for child in node.get("Plans", ()):
        yield from _plan_nodes(child)


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize("for_spreadsheets", [True, False], ids=["csv", "parquet"])
@pytest.mark.parametrize("table", ["measurements", "runs"])
def test_the_export_query_runs_no_subquery_per_row(table, for_spreadsheets):
    run = iops_run(rounds=2, mixes=(0,), block_sizes=(4096,))
    flagged = run.measurements.first()
    Flag.objects.create(submission=run.submission, test_run=run, measurement=flagged, kind="bus_bound", reason="x")
    Flag.objects.create(submission=run.submission, test_run=run, kind="non_compliant", reason="x")
    sql, params = pg_copy.copy_query(TABLES[table], Filters(), for_spreadsheets=for_spreadsheets)
    assert "(SELECT" not in sql.upper()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    nodes = list(_plan_nodes(plan[0]["Plan"]))
    assert not [n for n in nodes if n.get("Parent Relationship") == "SubPlan"], "a subquery per row"
    assert any(n.get("Node Type") == "Aggregate" for n in nodes), "the flags are aggregated once and joined"


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_flags_column_lists_each_measurements_flag_kinds_sorted_and_empty_when_none(client):
    run = iops_run(rounds=2, mixes=(0,), block_sizes=(4096,))
    first, second = run.measurements.order_by("pk")
    for kind in ("thermal_throttle", "bus_bound", "thermal_throttle"):
        Flag.objects.create(submission=run.submission, test_run=run, measurement=first, kind=kind, reason="x")
    Flag.objects.create(submission=run.submission, test_run=run, kind="non_compliant", reason="run-wide")
    export_rows.rebuild_for_submission(run.submission_id)  # as ingest does, once its flags are stored
    lines = b"".join(client.get("/datasets/measurements.csv").streaming_content).decode().splitlines()
    flags_at = lines[0].split(",").index("flag_kinds")
    assert [line.split(",")[flags_at] for line in lines[1:]] == ["bus_bound;thermal_throttle", ""]


def test_the_production_gunicorn_config_loads_with_threaded_workers():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "nvmedb.settings.test"}
    gunicorn = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "nvmedb.wsgi"]
    checked = subprocess.run([*gunicorn, "--check-config"], cwd=REPO, env=env, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    printed = subprocess.run([*gunicorn, "--print-config"], cwd=REPO, env=env, capture_output=True, text=True)
    settings = dict(line.split("=", 1) for line in printed.stdout.splitlines() if "=" in line)
    settings = {key.strip(): value.strip() for key, value in settings.items()}
    assert settings["worker_class"] == "gthread"
    assert int(settings["threads"]) > 1


def test_the_dockerfile_and_compose_file_start_gunicorn_with_that_config():
    for name in ("Dockerfile", "docker-compose.yml"):
        text = (REPO / name).read_text()
        assert "gunicorn.conf.py" in text, name
        assert "--workers" not in text, f"{name} must not override the config's worker settings"


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_runs_flag_kinds_are_its_own_and_its_submissions_but_not_its_measurements(client):
    run = iops_run(rounds=2, mixes=(0,), block_sizes=(4096,))
    other = iops_run(rounds=2, mixes=(0,), block_sizes=(4096,))
    submission = run.submission
    Flag.objects.create(submission=submission, test_run=run, measurement=run.measurements.first(), kind="bus_bound",
                        reason="one cell")  # fmt: skip
    Flag.objects.create(submission=submission, test_run=run, kind="thermal_throttle", reason="the run")
    Flag.objects.create(submission=submission, kind="imported", reason="the submission")
    Flag.objects.create(submission=submission, kind="imported", reason="said twice")
    lines = b"".join(client.get("/datasets/runs.csv").streaming_content).decode().splitlines()
    header = lines[0].split(",")
    flags = {int(line.split(",")[0]): line.split(",")[header.index("flag_kinds")] for line in lines[1:]}
    assert flags == {run.pk: "imported;thermal_throttle", other.pk: ""}


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_export_query_runs_without_parallel_workers_and_the_connection_gets_its_setting_back(monkeypatch):
    monkeypatch.setattr(
        pg_copy, "copy_query", lambda *a, **k: ("SELECT current_setting('max_parallel_workers_per_gather')", ())
    )
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        before = cursor.fetchone()[0]
    assert before != str(pg_copy.PARALLEL_WORKERS), "the server's own setting differs from the export's"
    assert b"".join(pg_copy.copy_csv_records(TABLES["measurements"], Filters())) == b"0\n"
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        assert cursor.fetchone()[0] == before


def test_gunicorn_workers_hand_the_interpreter_lock_over_within_a_millisecond(monkeypatch):
    import runpy

    monkeypatch.delenv("GUNICORN_SWITCH_INTERVAL_MS", raising=False)
    config = runpy.run_path(str(REPO / "gunicorn.conf.py"))
    before = sys.getswitchinterval()
    try:
        config["post_fork"](None, None)
        assert sys.getswitchinterval() == pytest.approx(0.001)
    finally:
        sys.setswitchinterval(before)


def test_a_worker_that_holds_too_much_memory_is_recycled_after_its_request():
    config = runpy.run_path(str(REPO / "gunicorn.conf.py"))
    logged = []
    worker = SimpleNamespace(alive=True, pid=1, log=SimpleNamespace(info=lambda *args: logged.append(args)))
    rss = config["resident_mb"]()
    assert rss is not None and rss > 10, "this process's own resident memory, read from /proc"
    config["post_request"].__globals__["max_rss_mb"] = int(rss) + 500
    config["post_request"](worker, None, {}, None)
    assert worker.alive and not logged
    config["post_request"].__globals__["max_rss_mb"] = 1
    config["post_request"](worker, None, {}, None)
    assert not worker.alive and "recycled" in logged[0][0]
