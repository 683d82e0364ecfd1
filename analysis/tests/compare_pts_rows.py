"""Rows for the compare page's PTS sections: one submission per drive holding HIR, XSR, ECW, DIRTH, WSAT workload
and surface runs, values of a real run's shape (each figure known, so a test can look for it)."""

from __future__ import annotations

from analysis.models import HirWaitState, Measurement, RecoveryPoint, Round, XsrGroup
from analysis.tests import factories
from analysis.tests.factories_dirth import add_results, dirth_run
from analysis.tests.surface_factory import surface_run

IDLES = (5.0, 10.0, 15.0, 25.0, 50.0)
XSR_LEVELS = ((1, "write", 1048576, 2e9), (2, "randwrite", 8192, 4e8), (3, "write", 1048576, 1.8e9))
WSAT_IOPS = {"ws-oltp": 90_000.0, "ws-vod": 12_000.0}


def hir_ratio(index: int, scale: float) -> float:
    return round(scale * (1.0 + 0.1 * index), 3)


def hir_run(submission, drive, *, scale=1.0, skip_index=None, unmeasured_index=None):
    run = factories.TestRunFactory(test="hir", submission=submission, drive_model=drive)
    for index, idle in enumerate(IDLES, start=1):
        if index == skip_index:
            continue
        ratio = None if index == unmeasured_index else hir_ratio(index, scale)
        HirWaitState.objects.create(
            test_run=run, index=index, idle_s=idle, burst_s=5.0, bursts_planned=12,
            bursts_measured=0 if ratio is None else 11, baseline_iops=40000.0, baseline_steady=True,
            recovery_iops=None if ratio is None else 40000.0 * ratio, recovery_ratio=ratio,
            recovered=None if ratio is None else ratio > 1.2, return_iops=40100.0,
        )  # fmt: skip
    return run


def xsr_run(submission, drive, *, scale=1.0, intervals=20):
    run = factories.TestRunFactory(test="xsr", threads=1, submission=submission, drive_model=drive)
    points, t = [], 0.0
    for index, pattern, size, level in XSR_LEVELS:
        XsrGroup.objects.create(
            test_run=run, index=index, pattern=pattern, block_size_bytes=size, runtime_s=5.0 * intervals,
            interval_s=5.0, mean_bytes_per_s=scale * level, final_bytes_per_s=scale * level,
            recover_s=15.0 if index > 1 else 0.0, recovered=True,
        )  # fmt: skip
        for step in range(intervals):
            value = scale * level * (0.5 if step < 3 and index > 1 else 1.0)
            points.append(RecoveryPoint(test_run=run, stage=index, kind="tp", t_s=t + 5 * step, value=value))
        t += 5.0 * intervals
    RecoveryPoint.objects.bulk_create(points)
    return run


def wsat_workload_run(submission, drive, test, *, level, samples=8):
    """Samples falling to `level` IOPS: the last five are level, level + 1000, ... so their mean is level + 2000."""
    run = factories.TestRunFactory(test=test, submission=submission, drive_model=drive, steady=None, steady_round=None)
    for number in range(1, samples + 1):
        back = samples - number
        iops = level + 1000 * back if back < 5 else 3 * level
        round_row = Round.objects.create(test_run=run, phase="wsat", number=number)
        Measurement.objects.create(
            round=round_row, test_run=run, drive_model=drive, run_key=f"{test}-r{number:02d}", block_size_bytes=8192,
            read_pct=65, total_iops=iops, total_bw_bytes_per_s=iops * 8192, raw_file=f"fio/{test}-{number}.json",
            json_path="$.jobs[*]",
        )  # fmt: skip
    return run


def drive_with_every_test(name: str, slug: str, *, scale=1.0):
    drive = factories.DriveModelFactory(name=name, slug=slug)
    submission = factories.SubmissionFactory()
    hir_run(submission, drive, scale=scale)
    xsr_run(submission, drive, scale=scale)
    dirth_run(submission=submission, drive_model=drive)
    add_results(factories.TestRunFactory(test="ecw", submission=submission, drive_model=drive))
    for test, level in WSAT_IOPS.items():
        wsat_workload_run(submission, drive, test, level=scale * level)
    surface_run(submission=submission, drive_model=drive)
    return drive
