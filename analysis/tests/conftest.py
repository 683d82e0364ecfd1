"""Fixtures for the analysis tests: consistent bundles built from real fio samples, and a submission to ingest."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from analysis.tests import bundles

# A drive name that would run script or break attributes if any page or chart failed to escape it.
HOSTILE_NAME = "Evil \"quoted\" 'drive' <script>alert(1)</script>"


@pytest.fixture(autouse=True)
def fresh_cache():
    """Page statistics are cached per data version; each test starts from an empty cache."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def submission(db, django_user_model):
    from submissions.models import Submission

    user = django_user_model.objects.create_user(username=f"contributor-{uuid.uuid4().hex[:8]}", password="x" * 12)
    return Submission.objects.create(
        uploader=user,
        sha256=hashlib.sha256(uuid.uuid4().bytes).hexdigest(),
        size=1,
        storage_name="test.nvmedb.tar.gz",
        status="ingesting",
    )


@pytest.fixture(scope="session")
def real_bundle_file(tmp_path_factory):
    """The bundle of a real `nvmedb-client run` on a file target (quick profile, real fio, half-second cells, the
    throughput and latency tests): a trial as a new contributor makes one. Built once per test session (tests that
    use it are marked `fio`); read it, never change it."""
    base = tmp_path_factory.mktemp("real-quick")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config"), "NVMEDB_QUICK_CELL_S": "0.5"}
    result = subprocess.run(
        [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
         str(base / "target.img"), "--size", "64MiB", "--profile", "quick", "--edition", "client", "--tests",
         "tp,lat", "--out", str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return Path(json.loads(result.stdout)["bundle"])


@pytest.fixture
def newcomer(db, django_user_model, settings, tmp_path):
    """A contributor with nothing accepted yet, on a site that reviews a new contributor's first three submissions
    (its default), with a bundle storage of this test's own."""
    settings.NVMEDB_REVIEW_FIRST_N = 3
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path / "storage")}},
    }
    return django_user_model.objects.create_user("newcomer", password="pw-for-tests-only")


@pytest.fixture
def make_verified(tmp_path, shared_samples):
    """Build, sign and verify a bundle; `mutate(run_dir, manifest)` changes it before signing."""
    counter = iter(range(1000))

    def build(**kwargs):
        return bundles.verified_bundle(tmp_path / f"b{next(counter)}", shared_samples, **kwargs)

    return build


@pytest.fixture
def dataset_runs(db):
    """Datasets: two public runs on different drives (the second a non-compliant PTS run), plus a withdrawn, a hidden
    and a held one that must not show."""
    from analysis.tests.factories import FlagFactory, SteadyStateWindowFactory, SubmissionFactory, iops_run
    from analysis.tests.recovery_rows import add_recovery_rows

    shape = {"rounds": 6, "mixes": (100, 0), "block_sizes": (4096, 131072)}
    public = iops_run(**shape)
    other = iops_run(**shape, compliant=False, pcie_link__generation=3)
    SteadyStateWindowFactory(test_run=public)
    FlagFactory(test_run=public, submission=public.submission, kind="non_compliant", reason="test")
    FlagFactory(
        test_run=public, submission=public.submission, measurement=public.measurements.first(), kind="bus_bound"
    )
    hidden_from_view = [
        iops_run(**shape, submission=SubmissionFactory(status="withdrawn")),
        iops_run(**shape, submission=SubmissionFactory(hidden=True)),
        iops_run(**shape, submission=SubmissionFactory(status="held", published_at=None)),
    ]
    SteadyStateWindowFactory(test_run=other, variable="iops.total_iops.rw100.bs4096", read_pct=100)
    from analysis.tests.surface_factory import surface_run

    # the nvmedb extension's run beside the PTS run of each public bundle
    keys = ("submission", "drive_model", "firmware", "unit", "host", "pcie_link")
    surface = [surface_run(**{k: getattr(run, k) for k in keys}) for run in (public, other)]
    for run in hidden_from_view:
        SteadyStateWindowFactory(test_run=run)
    from analysis.tests.factories_dirth import add_results

    for run in [public, other, *hidden_from_view]:
        add_recovery_rows(run)  # the HIR/XSR tables (reports.hir, reports.xsr, reports.recovery_series)
    for run in (public, other, hidden_from_view[0]):  # rows of the demand_intensity and histogram tables
        add_results(run)
    from analysis.tests.factories import DriveModelAggregateFactory

    for run, n_contributors in ((public, 2), (other, 1)):  # the aggregates table (refresh_aggregates' rows)
        DriveModelAggregateFactory(drive_model=run.drive_model, metric="iops_4k_write", n_contributors=n_contributors)

    from analysis.factor_effects import refresh_factor_effects

    for run in [public, other, *hidden_from_view]:  # the factor_effects table (the hidden drives' stay empty)
        type(run).objects.filter(pk=run.pk).update(headline={"iops_4k_read": 5e5, "iops_4k_write": 1e5})
        refresh_factor_effects(run.drive_model)
    from datasets.export_rows import rebuild_all  # why: project models load once pytest-django set Django up

    rebuild_all()  # the measurements CSV's rows, as ingest writes them
    return {"public": [public, other], "not_public": hidden_from_view, "surface": surface}


@pytest.fixture
def releases_dir(settings, tmp_path):
    settings.NVMEDB_RELEASES_DIR = tmp_path / "releases"
    settings.STORAGES = {
        **settings.STORAGES,
        "releases": {**settings.STORAGES["releases"], "OPTIONS": {"location": str(settings.NVMEDB_RELEASES_DIR)}},
    }
    return settings.NVMEDB_RELEASES_DIR


# --- browse pages: a drive with every PTS test, built row by row like ingest stores it ----------------------------


def make_browse_submission(*, drive_model, firmware="1B2QEXM7", generation=4, scale=1.0, uploader=None, **sub_fields):
    """One published submission of `drive_model` with IOPS, throughput, latency and WSAT runs, their rounds,
    measurements (temperatures and timestamps included), steady-state windows and a bus-bound flag."""
    import datetime as dt

    from analysis.models import Flag, Measurement, Round, SteadyStateWindow
    from analysis.tests import factories

    if uploader is not None:
        sub_fields["uploader"] = uploader
    submission = factories.SubmissionFactory(**sub_fields)
    unit = factories.PhysicalUnitFactory(drive_model=drive_model)
    fw = factories.FirmwareFactory(drive_model=drive_model, revision=firmware)
    link = factories.PcieLinkFactory(
        generation=generation,
        speed_gts={3: 8.0, 4: 16.0, 5: 32.0}[generation],
        usable_bandwidth_bytes_per_s={3: 3.5e9, 4: 7.0e9, 5: 14.0e9}[generation],
    )
    start = dt.datetime(2026, 1, 5, 8, 0, tzinfo=dt.timezone.utc)
    plans = {
        "iops": [("wdpc", "", bs, mix) for mix in (100, 65, 0) for bs in (4096, 65536, 1048576)],
        "tp": [("tp-write", "tp-write.bs1048576", 1048576, 0), ("tp-read", "tp-read.bs1048576", 1048576, 100)],
        "lat": [("wdpc", "", bs, mix) for mix in (100, 0) for bs in (512, 4096)],
        "wsat": [("wsat", "", 4096, 0)],
    }
    n_rounds = {"iops": 5, "tp": 5, "lat": 5, "wsat": 12}
    minute = 0
    runs = {}
    for test, cells in plans.items():
        run = factories.TestRunFactory(
            submission=submission,
            drive_model=drive_model,
            firmware=fw,
            unit=unit,
            pcie_link=link,
            test=test,
            threads=1 if test == "lat" else 4,
            iodepth=1 if test == "lat" else 32,
            steady=None if test == "wsat" else True,
            steady_round=None if test == "wsat" else 5,
            warning_temperature_k=343.0,
        )
        runs[test] = run
        rows, cumulative = [], 0
        for number in range(1, n_rounds[test] + 1):
            for phase, series, bs, mix in cells:
                round_row, _ = Round.objects.get_or_create(test_run=run, phase=phase, series=series, number=number)
                iops = scale * 700_000 * (4096 / max(bs, 4096)) ** 0.8 * (0.4 + 0.6 * mix / 100) * (1 + 0.01 * number)
                if test == "wsat":
                    iops = scale * 400_000 / (1 + number / 4)
                bw = iops * bs
                written = int(bw * (100 - mix) / 100 * 60)
                cumulative += written
                minute += 1
                rows.append(
                    Measurement(
                        round=round_row, test_run=run, drive_model=drive_model,
                        run_key=f"{test}-r{number:02d}-rw{mix:03d}-bs{bs}-{phase}", block_size_bytes=bs, read_pct=mix,
                        threads=run.threads, iodepth=run.iodepth, total_iops=iops, read_iops=iops * mix / 100,
                        write_iops=iops * (100 - mix) / 100, total_bw_bytes_per_s=bw,
                        read_bw_bytes_per_s=bw * mix / 100, write_bw_bytes_per_s=bw * (100 - mix) / 100,
                        write_bytes=written, cumulative_write_bytes=cumulative,
                        lat_mean_ns=run.threads * run.iodepth / iops * 1e9, lat_p9999_ns=run.threads * run.iodepth / iops * 8e9,
                        lat_max_ns=run.threads * run.iodepth / iops * 3e10, runtime_s=60.0,
                        temperature_before_k=310 + number, temperature_after_k=311 + number + bs / 1e6,
                        link_utilization=bw / link.usable_bandwidth_bytes_per_s, in_steady_window=test != "wsat",
                        started_at=start + dt.timedelta(minutes=minute), finished_at=start + dt.timedelta(minutes=minute + 1),
                        raw_file=f"fio/{test}-r{number:02d}-rw{mix:03d}-bs{bs}.json", json_path="$.jobs[*]",
                    )
                )  # fmt: skip
        Measurement.objects.bulk_create(rows)
        headline = {}
        for key, (phase, bs, mix, column) in {
            "iops_4k_read": ("wdpc", 4096, 100, "total_iops"),
            "iops_4k_write": ("wdpc", 4096, 0, "total_iops"),
            "bw_1m_read": ("tp-read", 1048576, 100, "read_bw_bytes_per_s"),
            "bw_1m_write": ("tp-write", 1048576, 0, "write_bw_bytes_per_s"),
            "lat_4k_mean": ("wdpc", 4096, 0, "lat_mean_ns"),
            "lat_4k_p9999": ("wdpc", 4096, 0, "lat_p9999_ns"),
        }.items():
            if (
                (test == "iops" and key.startswith("iops"))
                or (test == "tp" and key.startswith("bw"))
                or (test == "lat" and key.startswith("lat"))
            ):
                values = [
                    getattr(r, column)
                    for r in rows
                    if r.round.phase == phase and r.block_size_bytes == bs and r.read_pct == mix
                ]
                headline[key] = sum(values) / len(values)
        run.headline = headline
        run.save(update_fields=["headline"])
        if test in ("iops", "lat", "tp"):
            phase, bs, mix = {"iops": ("wdpc", 4096, 0), "lat": ("wdpc", 4096, 0), "tp": ("tp-write", 1048576, 0)}[test]
            column = {"iops": "total_iops", "lat": "lat_mean_ns", "tp": "write_bw_bytes_per_s"}[test]
            values = [
                getattr(r, column)
                for r in rows
                if r.round.phase == phase and r.block_size_bytes == bs and r.read_pct == mix
            ]
            average = sum(values) / len(values)
            SteadyStateWindow.objects.create(
                test_run=run, variable=f"{test}.{column}.rw{mix:03d}.bs{bs}", phase=phase, metric=column,
                block_size_bytes=bs, read_pct=mix, first_round=1, last_round=5, rounds=[1, 2, 3, 4, 5], values=values,
                average=average, data_excursion=max(values) - min(values), data_excursion_limit=0.2 * average,
                slope=(values[-1] - values[0]) / 4, intercept=values[0] - (values[-1] - values[0]) / 4,
                slope_excursion=abs(values[-1] - values[0]), slope_excursion_limit=0.1 * average, steady=True,
                steady_round=5,
            )  # fmt: skip
    Flag.objects.create(
        submission=submission, test_run=runs["tp"], kind="bus_bound",
        reason="Moved 95% of the 7.00 GB/s a Gen4 x4 link can carry: the bus, not the drive, set this number.",
    )  # fmt: skip
    from analysis.tests.recovery_rows import add_recovery_rows

    add_recovery_rows(runs["wsat"])  # rows in the HIR/XSR tables too (their exports), on a run of this submission
    return submission


@pytest.fixture
def browse_drive(db):
    """A drive model with two published submissions on two firmware revisions and PCIe generations."""
    from analysis.tests import factories
    from analysis.tests.after_commit import refresh_and_summarise

    drive = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=3, scale=0.9)
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4, scale=1.0)
    refresh_and_summarise(drive_model=drive)
    return drive


@pytest.fixture
def storage(settings, tmp_path):
    """Bundles of this test in a storage directory of its own; returns it."""
    (tmp_path / "storage" / "bundles").mkdir(parents=True)
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path / "storage")}},
    }
    return tmp_path / "storage"
