"""HIR and XSR rows for a test run, for tests of the exports and pages (values of a real quick run's shape)."""

from analysis.models import HirWaitState, RecoveryPoint, XsrGroup


def add_recovery_rows(test_run) -> None:
    for index, idle in enumerate((5.0, 10.0), start=1):
        HirWaitState.objects.create(
            test_run=test_run, index=index, idle_s=idle, burst_s=5.0, bursts_planned=360, bursts_measured=359,
            baseline_iops=41000.0, baseline_steady=True, recovery_iops=52000.5 * index,
            recovery_ratio=52000.5 * index / 41000.0, recovered=True, return_iops=40500.0,
            claimed={"index": index}, claim_differs=False,
        )  # fmt: skip
        RecoveryPoint.objects.create(test_run=test_run, stage=index, kind="burst", t_s=10.0 * index, value=5.2e4)
        RecoveryPoint.objects.create(test_run=test_run, stage=index, kind="baseline", t_s=10.0 * index + 5, value=4e4)
    XsrGroup.objects.create(
        test_run=test_run, index=2, pattern="randwrite", block_size_bytes=8192, runtime_s=21600.0, interval_s=5.0,
        mean_bytes_per_s=3.1e8, final_bytes_per_s=2.9e8, recover_s=None, recovered=False, log_gaps=0,
    )  # fmt: skip
    RecoveryPoint.objects.create(test_run=test_run, stage=2, kind="tp", t_s=0.0, value=3.5e8)
