"""The benchmarks' seeders and bundle, at a tiny size, on the test database (SQLite or PostgreSQL).

bench/ seeds its databases through these functions; the published figures once came from databases kept from older
checkouts because the seeders no longer ran on a fresh one. Here each seeder runs on the current schema and the rows
it promises are checked, and the ingest benchmark's bundle must publish."""

from __future__ import annotations

import pytest
from django.core.files.storage import FileSystemStorage

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
