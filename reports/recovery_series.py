"""The logged time series HIR and XSR share (RecoveryPoint: HIR's bursts and return-to-baseline intervals, XSR's
logged intervals): its export table (recovery_series, one row per point), the run-key columns of the HIR and XSR
tables, and how their charts find a drive's newest run of either test and its points. HIR and XSR each have their
own package (reports.hir, reports.xsr); this is what they have in common."""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.models import RecoveryPoint, TestRun
from analysis.selectors import NEWEST_RUN_FIRST, public_runs_q
from reports.table_kit import column
from reports.table_types import Table


def run_keys() -> tuple:
    return (
        column("run_id", "integer", "The test run (see the runs table).", "test_run_id"),
        column(
            "submission_id", "string", "The submission (bundle) the run came from (UUID).", "test_run__submission_id"
        ),
        column(
            "drive_slug", "string", "The drive model's stable identifier (used in URLs).", "test_run__drive_model__slug"
        ),
        column("drive_name", "string", "Canonical model name.", "test_run__drive_model__name"),
        column("vendor", "string", "Vendor name.", "test_run__drive_model__vendor__name"),
        column("edition", "string", "PTS edition: enterprise (PTS-E) or client (PTS-C).", "test_run__edition"),
        column("profile", "string", "pts (full PTS) or quick (shortened, not compliant).", "test_run__profile"),
        column("compliant", "boolean", "The run followed the PTS exactly.", "test_run__compliant"),
    )


POINT_COLUMNS = (
    column("run_id", "integer", "The test run (see the runs table).", "test_run_id"),
    column("submission_id", "string", "The submission (bundle) the run came from (UUID).", "test_run__submission_id"),
    column("test", "string", "hir or xsr.", "test_run__test"),
    column("stage", "integer", "The HIR wait state or XSR access group the point belongs to."),
    column("kind", "string", "first (HIR burst after the preceding writes), burst (HIR burst after an idle period), "
       "baseline (HIR return-to-baseline interval) or tp (XSR interval)."),
    column("t_s", "number", "Time from the start of the test's first wait state or access group, on the planned "
       "timeline (wait state, its return to baseline, the next...).", unit="s"),
    column("value", "number", "IOPS (HIR, all jobs together) or write bandwidth in bytes/s (XSR)."),
)  # fmt: skip


def recovery_points(*, trials_of: int | None = None) -> QuerySet:
    return RecoveryPoint.objects.filter(public_runs_q("test_run__", trials_of=trials_of))


def tables() -> tuple[Table, ...]:
    return (
        Table("recovery_series", "HIR and XSR time series", "One row per HIR burst or logged interval and per "
              "XSR logged interval (at most 2000 per fio run; longer logs are averaged in equal groups).",
              POINT_COLUMNS, recovery_points, run_prefix="test_run__", ordering=("test_run_id", "t_s", "pk")),
    )  # fmt: skip


def latest_run(drive_id: int, test: str, submission_id=None) -> TestRun | None:
    """The drive's most recent public run of `test` (of the chosen submission when one is chosen)."""
    runs = TestRun.objects.filter(public_runs_q(), drive_model_id=drive_id, test=test)
    if submission_id is not None:
        runs = runs.filter(submission_id=submission_id)
    return runs.order_by(*NEWEST_RUN_FIRST).first()


def points_of(run: TestRun) -> list[RecoveryPoint]:
    return list(RecoveryPoint.objects.filter(test_run=run).order_by("t_s", "pk"))
