"""A real `nvmedb-client run` (quick profile, real fio against a temp file: conftest's `real_bundle_file`) ingested end
to end."""

import importlib
import shutil

import pytest

from analysis.ingest import ingest_submission
from analysis.models import Flag, Measurement, SteadyStateWindow, TestRun
from nvmedb_client.bundle import verify_bundle
from nvmedb_client.fio_output import parse_fio_output, summarize

pytestmark = pytest.mark.fio


@pytest.fixture(scope="module")
def real_bundle(real_bundle_file, tmp_path_factory):
    return verify_bundle(real_bundle_file, extract_to=tmp_path_factory.mktemp("extracted"))


def test_a_real_quick_run_is_published_with_every_run_traceable(submission, real_bundle):
    outcome = ingest_submission(submission=submission, bundle=real_bundle)
    assert outcome.status == "published", outcome.reasons  # every cross-check, the plan check included, passed

    runs = real_bundle.manifest["runs"]
    measurements = Measurement.objects.filter(test_run__submission=submission)
    assert measurements.count() == len(runs)
    by_id = {run["id"]: run for run in runs}
    for m in measurements.select_related("round"):
        run = by_id[m.run_key]
        assert (m.raw_file, m.block_size_bytes, m.read_pct, m.round.phase) == (
            run["output_file"],
            run["block_size_bytes"],
            run["read_pct"],
            run["phase"],
        )
        summary = summarize(parse_fio_output(real_bundle.read_bytes(m.raw_file)))
        assert m.total_iops == pytest.approx(summary.total_iops)
        if run["phase"] != "wipc":  # preconditioning writes a size, not for a time
            assert m.runtime_s == pytest.approx(0.5, abs=0.25)  # wall clock, not fio's job_runtime sum

    assert set(TestRun.objects.filter(submission=submission).values_list("test", flat=True)) == {"tp", "lat"}
    claims = {c["variable"]: c for c in real_bundle.manifest["steady_state"]}
    windows = SteadyStateWindow.objects.filter(test_run__submission=submission)
    assert not windows.filter(claim_differs=True).exists()  # the client's verdicts match the server's
    for w in windows:
        assert w.claimed == claims[w.variable]
    # claims on variables no measured run belongs to are recorded, not believed (the client counts the 128 KiB
    # preconditioning of the throughput block as a throughput block size)
    extra = set(claims) - {w.variable for w in windows}
    flagged = Flag.objects.filter(submission=submission, kind="steady_state_claim_differs")
    assert {v for v in extra if any(v in f.reason for f in flagged)} == extra and flagged.count() == len(extra)
    tp = TestRun.objects.get(submission=submission, test="tp")
    assert tp.headline["bw_1m_read"] > 0 and tp.headline["bw_1m_write"] > 0
    assert tp.missing["purge_method"] == "file target: never purged"


LATENCY_TEST_COLUMNS = ("lat_mean_ns", "lat_max_ns", "lat_p9999_ns", "clat_mean_ns", "clat_p9999_ns", "slat_mean_ns")


def test_latency_columns_of_a_real_run_are_total_latency(submission, real_bundle):
    ingest_submission(submission=submission, bundle=real_bundle)
    lat_rows = Measurement.objects.filter(test_run__submission=submission, test_run__test="lat", round__phase="wdpc")
    assert lat_rows.exists()
    for m in lat_rows:
        raw = parse_fio_output(real_bundle.read_bytes(m.raw_file))["jobs"][0]
        direction = raw["write"] if m.read_pct == 0 else raw["read"]
        assert "percentile" in direction["lat_ns"]  # the job file asked for lat_percentiles
        summary = summarize({"jobs": [raw]})
        assert m.lat_mean_ns == pytest.approx(summary.lat_mean_ns)
        assert m.clat_mean_ns == pytest.approx(summary.clat_mean_ns)
        assert m.slat_mean_ns > 0 and m.lat_mean_ns > m.clat_mean_ns
        assert m.lat_p9999_ns is not None and m.clat_p9999_ns is not None
    window = SteadyStateWindow.objects.get(test_run__submission=submission, test_run__test="lat")
    assert window.metric == "lat_mean_ns"  # the LAT tracking variable is the mean total latency


def _old_rows(submission):
    """What rows written before total latency held: completion latency under the lat_* names."""
    for m in Measurement.objects.filter(test_run__submission=submission):
        m.lat_mean_ns, m.lat_max_ns, m.lat_p9999_ns = m.clat_mean_ns, m.clat_max_ns, m.clat_p9999_ns
        m.read_lat_mean_ns, m.write_lat_mean_ns = m.read_clat_mean_ns, m.write_clat_mean_ns
        m.percentiles_ns = m.clat_percentiles_ns
        m.clat_mean_ns = m.clat_max_ns = m.clat_p9999_ns = m.slat_mean_ns = None
        m.clat_percentiles_ns = {}
        m.save()
    lat = TestRun.objects.get(submission=submission, test="lat")
    lat.headline = {"lat_4k_mean": 1.0}
    lat.save()


def _latency_state(submission):
    rows = Measurement.objects.filter(test_run__submission=submission).order_by("run_key")
    windows = SteadyStateWindow.objects.filter(test_run__submission=submission).order_by("variable")
    return (
        [tuple(getattr(m, c) for c in (*LATENCY_TEST_COLUMNS, "in_steady_window")) for m in rows],
        [(w.variable, w.values, w.steady, w.steady_round) for w in windows],
        TestRun.objects.get(submission=submission, test="lat").headline,
    )


def _migration_rederive():
    return importlib.import_module("analysis.migrations.0003_measure_total_latency").rederive


def test_the_migration_re_derives_old_rows_from_the_stored_bundle(
    submission, real_bundle, real_bundle_file, tmp_path, monkeypatch
):
    from django.apps import apps
    from django.core.files import storage as storage_module
    from django.core.files.storage import FileSystemStorage

    ingest_submission(submission=submission, bundle=real_bundle)
    fresh = _latency_state(submission)
    assert fresh[2]["lat_4k_mean"] > 1.0
    (tmp_path / "store").mkdir()
    shutil.copy(real_bundle_file, tmp_path / "store" / "stored.nvmedb.tar.gz")
    submission.storage_name = "stored.nvmedb.tar.gz"
    submission.save()
    _old_rows(submission)
    assert _latency_state(submission) != fresh

    monkeypatch.setattr(storage_module, "default_storage", FileSystemStorage(location=tmp_path / "store"))
    _migration_rederive()(apps, None)
    assert _latency_state(submission) == fresh


def test_rows_without_a_stored_bundle_keep_completion_latency_under_its_own_name(submission, real_bundle, tmp_path):
    from django.core.files.storage import FileSystemStorage

    from analysis.latency import rederive_latency
    from analysis.models import SteadyStateWindow as Window
    from submissions.models import Submission

    ingest_submission(submission=submission, bundle=real_bundle)
    clat = {m.id: m.clat_mean_ns for m in Measurement.objects.filter(test_run__submission=submission)}
    _old_rows(submission)
    submission.storage_name = "gone.nvmedb.tar.gz"  # the stored bundle is missing
    submission.save()
    models_ = {"Submission": Submission, "TestRun": TestRun, "Measurement": Measurement, "SteadyStateWindow": Window}
    counts = rederive_latency(models=models_, storage=FileSystemStorage(location=tmp_path))
    assert counts["reread"] == 0 and counts["unreadable"] == len(clat)
    for m in Measurement.objects.filter(test_run__submission=submission):
        assert m.lat_mean_ns is None and m.clat_mean_ns == clat[m.id]
        assert "total latency unknown" in m.missing["lat_mean_ns"]
    lat = TestRun.objects.get(submission=submission, test="lat")
    assert "lat_4k_mean" not in lat.headline and lat.steady is False


def test_the_rederive_command_re_reads_the_stored_bundle_and_says_what_it_did(
    submission, real_bundle, real_bundle_file, tmp_path, settings
):
    from io import StringIO

    from django.core.management import call_command

    ingest_submission(submission=submission, bundle=real_bundle)
    fresh = _latency_state(submission)
    (tmp_path / "store").mkdir()
    shutil.copy(real_bundle_file, tmp_path / "store" / "stored.nvmedb.tar.gz")
    submission.storage_name = "stored.nvmedb.tar.gz"
    submission.save()
    _old_rows(submission)
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "store")}}}  # fmt: skip
    out = StringIO()
    call_command("rederive_latency", stdout=out)
    assert _latency_state(submission) == fresh
    count = Measurement.objects.filter(test_run__submission=submission).count()
    assert f"{count} measurements re-read from their raw files, 0 without" in out.getvalue()


def test_a_stored_bundle_that_no_longer_verifies_is_read_as_unreadable_not_trusted(
    submission, real_bundle, real_bundle_file, tmp_path
):
    from django.core.files.storage import FileSystemStorage

    from analysis.latency import rederive_latency
    from analysis.models import SteadyStateWindow as Window
    from submissions.models import Submission

    ingest_submission(submission=submission, bundle=real_bundle)
    data = bytearray(real_bundle_file.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte inside the compressed archive
    (tmp_path / "tampered.nvmedb.tar.gz").write_bytes(bytes(data))
    submission.storage_name = "tampered.nvmedb.tar.gz"
    submission.save()
    _old_rows(submission)
    models_ = {"Submission": Submission, "TestRun": TestRun, "Measurement": Measurement, "SteadyStateWindow": Window}
    counts = rederive_latency(models=models_, storage=FileSystemStorage(location=tmp_path))
    assert counts["reread"] == 0 and counts["unreadable"] > 0
    assert all(
        "total latency unknown" in m.missing["lat_mean_ns"]
        for m in Measurement.objects.filter(test_run__submission=submission)
    )
