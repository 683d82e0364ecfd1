"""The HIR and XSR tables: one row per HIR wait state, one per XSR access group, and one per point of their time
series (registered in datasets.tables.TABLES)."""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.models import HirWaitState, RecoveryPoint, XsrGroup
from analysis.selectors import public_runs_q
from datasets.table_types import Column


def _c(name, type_, description, source=None, unit=""):
    return Column(name=name, type=type_, description=description, source=source or name, unit=unit)


def _run_keys() -> tuple:
    return (
        _c("run_id", "integer", "The test run (see the runs table).", "test_run_id"),
        _c("submission_id", "string", "The submission (bundle) the run came from (UUID).", "test_run__submission_id"),
        _c(
            "drive_slug", "string", "The drive model's stable identifier (used in URLs).", "test_run__drive_model__slug"
        ),
        _c("drive_name", "string", "Canonical model name.", "test_run__drive_model__name"),
        _c("vendor", "string", "Vendor name.", "test_run__drive_model__vendor__name"),
        _c("edition", "string", "PTS edition: enterprise (PTS-E) or client (PTS-C).", "test_run__edition"),
        _c("profile", "string", "pts (full PTS) or quick (shortened, not compliant).", "test_run__profile"),
        _c("compliant", "boolean", "The run followed the PTS exactly.", "test_run__compliant"),
    )


HIR_COLUMNS = (
    *_run_keys(),
    _c("wait_state", "integer", "The wait state, 1..5 in the order run.", "index"),
    _c("idle_s", "number", "Host idle time between write bursts (PTS: 5, 10, 15, 25, 50 s).", unit="s"),
    _c("burst_s", "number", "Length of one RND 4 KiB write burst (PTS: 5 s).", unit="s"),
    _c("bursts_planned", "integer", "Bursts after an idle period the plan asked for (PTS: 360)."),
    _c("bursts_measured", "integer", "Bursts after an idle period with at least one whole logged interval."),
    _c("baseline_iops", "number", "Steady RND 4 KiB write IOPS before the wait states (the preconditioning's window "
       "average).", unit="IOPS"),
    _c("baseline_steady", "boolean", "The preconditioning reached steady state (PTS rule)."),
    _c("recovery_iops", "number", "Mean IOPS of the bursts after an idle period, all jobs together.", unit="IOPS"),
    _c("recovery_ratio", "number", "recovery_iops ÷ baseline_iops."),
    _c("recovered", "boolean", "recovery_ratio > 1.2: more than the 20 % a steady window may vary."),
    _c("return_iops", "number", "IOPS of the continuous return-to-baseline writes after the wait state.", unit="IOPS"),
    _c("missing", "string", "Why figures of this wait state are missing (a job's interval log with no sample), "
       "or empty."),
    _c("claim_differs", "boolean", "The client's own figures differ from nvmedb's re-derivation from the logs."),
)  # fmt: skip

XSR_COLUMNS = (
    *_run_keys(),
    _c("access_group", "integer", "1: SEQ 1024 KiB writes, 2: RND 8 KiB writes, 3: SEQ 1024 KiB writes.", "index"),
    _c("pattern", "string", "fio access pattern: write (sequential) or randwrite."),
    _c("block_size_bytes", "integer", "Block size.", unit="bytes"),
    _c("runtime_s", "number", "Planned length of the group (PTS: 8 h, 6 h, 8 h).", unit="s"),
    _c("interval_s", "number", "Length of one logged interval.", unit="s"),
    _c("mean_bw_bytes_per_s", "number", "Mean write bandwidth over the group (fio).", "mean_bytes_per_s", "bytes/s"),
    _c("final_bw_bytes_per_s", "number", "Mean bandwidth over the group's last fifth: its settled level.",
       "final_bytes_per_s", "bytes/s"),
    _c("recover_s", "number", "Time from the switch to the first 5 consecutive intervals within 20 % of the settled "
       "level; empty when it never settled.", unit="s"),
    _c("recovered", "boolean", "The group settled (recover_s is known)."),
    _c("log_gaps", "integer", "Stretches of the interval log longer than 1.5 intervals (fio sampled late)."),
    _c("missing", "string", "Why figures of this group are missing (a job's interval log with no sample), or "
       "empty."),
    _c("claim_differs", "boolean", "The client's own figures differ from nvmedb's re-derivation from the logs."),
)  # fmt: skip

POINT_COLUMNS = (
    _c("run_id", "integer", "The test run (see the runs table).", "test_run_id"),
    _c("submission_id", "string", "The submission (bundle) the run came from (UUID).", "test_run__submission_id"),
    _c("test", "string", "hir or xsr.", "test_run__test"),
    _c("stage", "integer", "The HIR wait state or XSR access group the point belongs to."),
    _c("kind", "string", "first (HIR burst after the preceding writes), burst (HIR burst after an idle period), "
       "baseline (HIR return-to-baseline interval) or tp (XSR interval)."),
    _c("t_s", "number", "Time from the start of the test's first wait state or access group, on the planned "
       "timeline (wait state, its return to baseline, the next...).", unit="s"),
    _c("value", "number", "IOPS (HIR, all jobs together) or write bandwidth in bytes/s (XSR)."),
)  # fmt: skip


def hir_wait_states(*, trials_of: int | None = None) -> QuerySet:
    return HirWaitState.objects.filter(public_runs_q("test_run__", trials_of=trials_of))


def xsr_groups(*, trials_of: int | None = None) -> QuerySet:
    return XsrGroup.objects.filter(public_runs_q("test_run__", trials_of=trials_of))


def recovery_points(*, trials_of: int | None = None) -> QuerySet:
    return RecoveryPoint.objects.filter(public_runs_q("test_run__", trials_of=trials_of))


def tables(table_class) -> tuple:
    return (
        table_class("hir", "Host idle recovery", "One row per HIR wait state of every public HIR run.", HIR_COLUMNS,
                    hir_wait_states, run_prefix="test_run__"),
        table_class("xsr", "Cross stimulus recovery", "One row per XSR access group of every public XSR run.",
                    XSR_COLUMNS, xsr_groups, run_prefix="test_run__"),
        table_class("recovery_series", "HIR and XSR time series", "One row per HIR burst or logged interval and per "
                    "XSR logged interval (at most 2000 per fio run; longer logs are averaged in equal groups).",
                    POINT_COLUMNS, recovery_points, run_prefix="test_run__", ordering=("test_run_id", "t_s", "pk")),
    )  # fmt: skip
