"""Releases: checksums and the data package verify, releases never change, a killed build publishes nothing."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import frictionless
import pyarrow.parquet as pq
import pytest
from django.db import connection
from django.utils import timezone

from analysis.models import Measurement
from analysis.tests.factories import iops_run
from datasets import releases
from datasets.releases import build_release
from datasets.tables import TABLES

REPO_ROOT = Path(__file__).resolve().parents[2]
SHAPE = {"rounds": 6, "mixes": (100, 0), "block_sizes": (4096,)}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(directory: Path) -> dict[str, tuple[str, int, float]]:
    return {p.name: (sha256(p), p.stat().st_mode, p.stat().st_mtime) for p in sorted(directory.iterdir())}


@pytest.mark.django_db
def test_a_release_holds_every_table_with_verifiable_checksums_and_a_valid_data_package(
    dataset_runs, releases_dir, tmp_path
):
    result = build_release()
    assert result.number == 1
    release = releases_dir / "1"
    names = {p.name for p in release.iterdir()}
    for table in TABLES:
        assert {f"{table}.csv", f"{table}.parquet"} <= names
    assert {"datapackage.json", "SHA256SUMS", "CITATION.cff", "CHANGELOG.md"} <= names

    sums = dict(reversed(line.split("  ", 1)) for line in (release / "SHA256SUMS").read_text().splitlines())
    assert set(sums) == names - {"SHA256SUMS"}
    for name, digest in sums.items():
        assert sha256(release / name) == digest, name

    package = json.loads((release / "datapackage.json").read_text())
    for resource in package["resources"]:
        path = release / resource["path"]
        assert resource["hash"] == f"sha256:{sha256(path)}"
        assert resource["bytes"] == path.stat().st_size
        if resource["format"] == "csv":
            fields = resource["schema"]["fields"]
            assert [f["name"] for f in fields] == TABLES[resource["name"]].column_names
            assert all(f["type"] and f["description"] for f in fields)
        else:
            arrow = pq.read_schema(path)
            assert arrow.names == TABLES[resource["name"].removesuffix("-parquet")].column_names
            assert all(arrow.field(n).metadata[b"description"] for n in arrow.names)
    measurements = next(r for r in package["resources"] if r["path"] == "measurements.csv")
    public_count = Measurement.objects.filter(test_run__in=dataset_runs["public"]).count()
    assert measurements["rows"] == public_count
    assert pq.read_metadata(release / "measurements.parquet").num_rows == public_count
    units = {f["name"]: f.get("unit") for f in measurements["schema"]["fields"]}
    assert units["total_bw_bytes_per_s"] == "bytes/s" and units["lat_mean_ns"] == "ns"

    report = frictionless.validate(release / "datapackage.json")
    assert report.valid, report.flatten(["rowNumber", "fieldName", "type", "note"])
    tampered = tmp_path / "tampered"
    shutil.copytree(release, tampered)
    (tampered / "drives.parquet").chmod(0o644)
    (tampered / "drives.parquet").write_bytes((release / "drives.parquet").read_bytes() + b"x")
    assert not frictionless.validate(tampered / "datapackage.json").valid, "the validator checks every file's hash"

    cff = (release / "CITATION.cff").read_text()
    assert "cff-version: 1.2.0" in cff and 'version: "1"' in cff
    changelog = (release / "CHANGELOG.md").read_text()
    for run in dataset_runs["public"]:
        assert str(run.submission_id) in changelog
    for run in dataset_runs["not_public"]:
        assert str(run.submission_id) not in changelog
        assert str(run.submission_id) not in (release / "measurements.csv").read_text()


@pytest.mark.django_db
def test_nothing_changed_means_no_new_release(dataset_runs, releases_dir):
    assert build_release().number == 1
    result = build_release()
    assert result.number is None
    assert "Nothing changed since release 1" in result.message
    assert sorted(p.name for p in releases_dir.iterdir() if not p.name.startswith(".")) == ["1"]


@pytest.mark.django_db
def test_releases_never_change_and_the_changelog_tells_what_did(dataset_runs, releases_dir):
    build_release()
    first = snapshot(releases_dir / "1")
    assert all(not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) for _, mode, _ in first.values())
    assert not (releases_dir / "1").stat().st_mode & stat.S_IWUSR

    added = iops_run(**SHAPE)
    leaving = dataset_runs["public"][1].submission
    leaving.status, leaving.withdrawn_at = "withdrawn", timezone.now()
    leaving.save()
    assert build_release().number == 2

    assert snapshot(releases_dir / "1") == first, "building release 2 must not touch release 1"
    changelog = (releases_dir / "2" / "CHANGELOG.md").read_text()
    added_part, removed_part = changelog.split("## Submissions removed")
    assert str(added.submission_id) in added_part
    assert f"{leaving.id} (withdrawn by its contributor)" in removed_part
    assert "## Schema changes\n\n(none)" in changelog
    with open(releases_dir / "2" / "submissions.csv", newline="") as handle:
        ids = {row["submission_id"] for row in csv.DictReader(handle)}
    assert str(leaving.id) not in ids and str(added.submission_id) in ids


def test_schema_changes_name_added_removed_and_retyped_columns():
    before = {"runs": {"fields": [{"name": "a", "type": "integer"}, {"name": "b", "type": "string"}]}}
    after = {
        "runs": {"fields": [{"name": "a", "type": "number"}, {"name": "c", "type": "string"}]},
        "extra": {"fields": []},
    }
    changes = releases._schema_changes(before, after)
    assert "- New table `extra`." in changes
    assert "- `runs.c` added (string)." in changes
    assert "- `runs.b` removed." in changes
    assert "- `runs.a` type: 'integer' → 'number'." in changes


@pytest.mark.django_db
def test_release_files_are_served_only_by_listed_name(client, dataset_runs, releases_dir):
    build_release()
    response = client.get("/datasets/releases/1/measurements.csv")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == (releases_dir / "1" / "measurements.csv").read_bytes()
    assert client.get("/datasets/releases/1/SHA256SUMS").status_code == 200
    (releases_dir / "secret.txt").write_text("not part of any release")
    for bad in ("../secret.txt", "..%2Fsecret.txt", ".lock", "nothere.csv", "%2E%2E"):
        assert client.get(f"/datasets/releases/1/{bad}").status_code == 404, bad
    assert client.get("/datasets/releases/2/measurements.csv").status_code == 404

    page = client.get("/datasets/releases/").content.decode()
    assert "Release 1" in page and "nvmedb contributors" in page and "release 1 [Data set]" in page
    assert sha256(releases_dir / "1" / "measurements.parquet") in page
    assert "Build a release now" not in page


@pytest.mark.django_db
def test_only_staff_can_build_on_demand(
    client, django_user_model, dataset_runs, releases_dir, django_capture_on_commit_callbacks
):
    visitor = django_user_model.objects.create_user("visitor", password="x" * 12)
    client.force_login(visitor)
    assert client.post("/datasets/releases/build/").status_code == 403
    assert not (releases_dir / "1").exists()

    staff = django_user_model.objects.create_user("staff", password="x" * 12, is_staff=True)
    client.force_login(staff)
    assert "Build a release now" in client.get("/datasets/releases/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/datasets/releases/build/")
    assert response.status_code == 302
    assert (releases_dir / "1" / "datapackage.json").exists()


KILLED_BUILD = """
import sys, time
import django
django.setup()
from datasets import releases
write = releases.write_table_file
calls = []
def slow_write(table, fmt, path):
    calls.append(path)
    rows = write(table, fmt, path)
    if len(calls) == 4:
        print("HALFWAY", flush=True)
        time.sleep(60)
    return rows
releases.write_table_file = slow_write
releases.build_release()
"""


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_build_killed_midway_publishes_nothing_and_the_next_build_succeeds(dataset_runs, releases_dir):
    name = connection.settings_dict["NAME"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "nvmedb.settings.test",
        "DATABASE_URL": os.environ["DATABASE_URL"].rsplit("/", 1)[0] + f"/{name}",
        "NVMEDB_RELEASES_DIR": str(releases_dir),
    }
    builder = subprocess.Popen(
        [sys.executable, "-c", KILLED_BUILD], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert builder.stdout.readline().strip() == "HALFWAY"
        temp = [p for p in releases_dir.iterdir() if p.name.startswith(".building-")]
        assert len(temp) == 1 and len(list(temp[0].iterdir())) == 4
        builder.send_signal(signal.SIGKILL)
        builder.wait(timeout=10)
    finally:
        if builder.poll() is None:
            builder.kill()
        builder.stdout.close()
    assert not (releases_dir / "1").exists(), "a killed build must leave no release"

    result = build_release()  # the killed builder's lock died with it: this must not wait
    assert result.number == 1
    assert not [p for p in releases_dir.iterdir() if p.name.startswith(".building-")]
    sums = (releases_dir / "1" / "SHA256SUMS").read_text().splitlines()
    assert len(sums) == 2 * len(TABLES) + 4  # datapackage.json, CITATION.cff, CHANGELOG.md, README.md


@pytest.mark.django_db
def test_management_command_builds_then_reports_nothing_changed(dataset_runs, releases_dir, capsys):
    from django.core.management import call_command

    call_command("build_release")
    assert "Built release 1" in capsys.readouterr().out
    call_command("build_release")
    assert "Nothing changed since release 1" in capsys.readouterr().out


def test_weekly_release_is_scheduled(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["build-weekly-release"]
    assert entry["task"] == "analysis.tasks.build_release"
    assert entry["schedule"].day_of_week == {1}
