"""The benchmarks' seeders and bundle, at a tiny size, on the test database (SQLite or PostgreSQL).

bench/ seeds its databases through these functions; the published figures once came from databases kept from older
checkouts because the seeders no longer ran on a fresh one. Here each seeder runs on the current schema and the rows
it promises are checked, and the ingest benchmark's bundle must publish."""

from __future__ import annotations

import pytest
from django.core.files.storage import FileSystemStorage
from django.db import connection

from bench import _seed, ingest_benchmark

pytestmark = pytest.mark.django_db


def test_browse_seed_fills_every_table_it_promises():
    from analysis.models import (
        DriveModel,
        DriveModelAggregate,
        DrivePageSummary,
        ExportMeasurementRow,
        FactorFitSummary,
        Flag,
        Measurement,
        Round,
        SteadyStateWindow,
        TestRun,
    )
    from submissions.models import Submission

    per_submission = _seed.measurements_per_submission()
    summary = _seed.seed(
        drive_models=2, submissions_for_big_model=2, measurements_total=3 * per_submission, log=lambda _: None
    )

    assert summary.drive_models == 2 and summary.submissions == 3 and summary.big_model_submissions == 2
    assert DriveModel.objects.filter(slug="bench-big-drive").exists()
    assert ExportMeasurementRow.objects.count() == Measurement.objects.count()  # all PTS runs: every one exported
    assert Submission.objects.count() == 3
    assert TestRun.objects.count() == 3 * 4
    assert set(TestRun.objects.values_list("test", flat=True)) == {"iops", "tp", "lat", "wsat"}
    assert TestRun.objects.filter(derived_compliant=True).exists()
    assert Round.objects.exists()
    assert summary.measurements == Measurement.objects.count() > 3 * 400
    assert not Measurement.objects.filter(pattern="").exists()
    assert set(Measurement.objects.values_list("pattern", flat=True)) == {"randrw", "read", "write", "randwrite"}
    assert not Measurement.objects.filter(total_iops__isnull=True).exists()
    assert SteadyStateWindow.objects.filter(steady=True).exists()
    assert (
        Flag.objects.filter(kind="bus_bound", measurement__isnull=False).exists()
        or not Measurement.objects.filter(link_utilization__gte=0.9).exists()
    )
    public = Submission.objects.filter(status="published", hidden=False)
    if public.exists():
        assert DriveModelAggregate.objects.filter(n_contributors__gte=1).exists()
        assert DrivePageSummary.objects.exists()
        assert FactorFitSummary.objects.exists()
    assert _seed.SEEDED_MARKER in connection.introspection.table_names()  # the database is kept from now on


def test_export_seed_fills_every_table_it_promises():
    from analysis.models import DriveModelAggregate, ExportMeasurementRow, Flag, Measurement, Round, TestRun

    summary = _seed.seed_export(runs=3, rounds=2, drive_models=2, log=lambda _: None)

    assert TestRun.objects.count() == 3
    assert Round.objects.count() == 3 * 2
    assert summary.measurements == Measurement.objects.count() == 3 * 2 * 56
    assert set(Measurement.objects.values_list("pattern", flat=True)) == {"randrw"}
    assert Measurement.objects.filter(in_steady_window=True).count() == 3 * 2 * 56
    assert Flag.objects.filter(kind="bus_bound").count() == sum(
        1 for pk in Measurement.objects.values_list("pk", flat=True) if pk % 100 == 0
    )
    assert DriveModelAggregate.objects.exists()
    assert ExportMeasurementRow.objects.count() == Measurement.objects.count()  # what the CSV export reads


@pytest.mark.django_db(transaction=True)  # the tasks the ingest queues run when its transaction commits
def test_ingest_benchmark_bundle_publishes(tmp_path, shared_samples, settings):
    """The benchmark times the path of a bundle that publishes: its manifest carries a plan like the client's, and
    the bundle's raw-file identifiers are cached on commit the way the worker does it."""
    from django.contrib.auth import get_user_model

    from analysis.models import Measurement
    from nvmedb_client.bundle import write_bundle
    from nvmedb_client.signing import load_or_create_signing_key, public_key_bytes
    from submissions import services

    manifest, files = ingest_benchmark.build_run_dir(tmp_path / "run", ingest_benchmark.SMALL)
    key = load_or_create_signing_key(tmp_path / "key")
    bundle = write_bundle(
        run_dir=tmp_path / "run", manifest=manifest, files=files, signing_key=key, out_path=tmp_path / "b.nvmedb.tar.gz"
    )
    user = get_user_model().objects.create_user(username="bench-ingest")
    services.signing_key_register(user=user, public_key=public_key_bytes(key))
    storage = FileSystemStorage(location=str(tmp_path / "storage"))
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "storage")},
        },
    }
    data = bundle.read_bytes()
    submission = ingest_benchmark.stored_submission(user=user, data=data, storage=storage)

    done, identifiers = ingest_benchmark.worker_path(submission, storage)

    assert done.status == "published", done.report
    assert Measurement.objects.filter(test_run__submission=done).count() == len(manifest["runs"])
    assert identifiers > 0  # cached on commit from the bundle in memory
    assert done.size == len(data)


def test_a_database_whose_seeding_did_not_finish_is_made_again(tmp_path):
    import sqlite3

    url = f"sqlite:///{tmp_path / 'bench.sqlite3'}"
    path = tmp_path / "bench.sqlite3"
    assert _seed.ensure_database(url) is True  # none yet
    with sqlite3.connect(path) as db:  # a run stopped midway: users written, no marker
        db.execute("CREATE TABLE auth_user (username text UNIQUE)")
        db.execute("INSERT INTO auth_user VALUES ('bench-contributor-0')")
    db.close()
    assert _seed.ensure_database(url) is True
    assert not path.exists()  # dropped: the seed starts on an empty database, not on the first run's rows
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE {_seed.SEEDED_MARKER} (finished text)")
    db.close()
    assert _seed.ensure_database(url) is False  # seeded: kept
    assert path.exists()
    assert _seed.ensure_database(url, reseed=True) is True and not path.exists()


@pytest.mark.postgres
def test_a_postgres_database_whose_seeding_did_not_finish_is_made_again():
    import os
    import uuid

    import psycopg

    server = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    name = f"nvmedb_test_seed_marker_{uuid.uuid4().hex[:8]}"
    url = f"{server}/{name}"
    try:
        assert _seed.ensure_database(url) is True
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("CREATE TABLE stopped_midway (x int)")
        assert _seed.ensure_database(url) is True
        with psycopg.connect(url, autocommit=True) as db:  # made again: the first run's table is gone
            assert db.execute("SELECT to_regclass('stopped_midway')").fetchone()[0] is None
            db.execute(f"CREATE TABLE {_seed.SEEDED_MARKER} (finished text)")
        assert _seed.ensure_database(url) is False
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')


def test_content_seed_gives_each_submission_of_the_drive_content_of_its_own(shared_samples):
    """The ingest benchmark's seeded submissions hold content like real runs of other units: digests of their own, and
    the reference's signatures moved by a few percent, so none is a near-duplicate of the reference or another."""
    from submissions import content, first_received
    from submissions.models import FioOutputFingerprint, MeasurementSignature, Submission

    _seed.seed(drive_models=2, submissions_for_big_model=3, measurements_total=0, log=lambda _: None)
    runs = sorted((shared_samples / "ssspt-hp-iops-1").glob("*.json"))[:12]
    reference = content.file_fingerprints(shared_samples, runs)
    signatures = [f for f in reference if f.kind == content.SIGNATURE]

    written = _seed.seed_content(reference, log=lambda _: None)

    drive_submissions = list(Submission.objects.filter(test_runs__drive_model__slug="bench-big-drive").distinct())
    assert len(drive_submissions) == 3 and written == 3 * len(signatures) > 0
    own_digests = {f.digest for f in reference if f.kind != content.SIGNATURE}
    stored_digests = set(FioOutputFingerprint.objects.values_list("digest", flat=True))
    assert len(stored_digests) == 3 * len(own_digests) and not stored_digests & own_digests
    by_output = {(f.path, f.direction): f.values for f in signatures}
    for path, direction, iops, values in MeasurementSignature.objects.values_list(
        "path", "direction", "iops", "values"
    ):
        original = by_output[(path, direction)]
        assert iops == values[1] and values[0] == original[0]
        assert 0.7 < values[1] / original[1] < 1.4 and not content.figures_agree(values, list(original))
    for submission in drive_submissions:
        assert first_received.content_matches(submission) == {}
