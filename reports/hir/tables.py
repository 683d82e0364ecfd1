"""The HIR export table: one row per wait state of every public HIR run (its time series is in recovery_series)."""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.models import HirWaitState
from analysis.selectors import public_runs_q
from reports.recovery_series import run_keys
from reports.table_kit import column
from reports.table_types import Table

HIR_COLUMNS = (
    *run_keys(),
    column("wait_state", "integer", "The wait state, 1..5 in the order run.", "index"),
    column("idle_s", "number", "Host idle time between write bursts (PTS: 5, 10, 15, 25, 50 s).", unit="s"),
    column("burst_s", "number", "Length of one RND 4 KiB write burst (PTS: 5 s).", unit="s"),
    column("bursts_planned", "integer", "Bursts after an idle period the plan asked for (PTS: 360)."),
    column("bursts_measured", "integer", "Bursts after an idle period with at least one whole logged interval."),
    column("baseline_iops", "number", "Steady RND 4 KiB write IOPS before the wait states (the preconditioning's window "
       "average).", unit="IOPS"),
    column("baseline_steady", "boolean", "The preconditioning reached steady state (PTS rule)."),
    column("recovery_iops", "number", "Mean IOPS of the bursts after an idle period, all jobs together.", unit="IOPS"),
    column("recovery_ratio", "number", "recovery_iops ÷ baseline_iops."),
    column("recovered", "boolean", "recovery_ratio > 1.2: more than the 20 % a steady window may vary."),
    column("return_iops", "number", "IOPS of the continuous return-to-baseline writes after the wait state.", unit="IOPS"),
    column("missing", "string", "Why figures of this wait state are missing (a job's interval log with no sample), "
       "or empty."),
    column("claim_differs", "boolean", "The client's own figures differ from nvmedb's re-derivation from the logs."),
)  # fmt: skip


def hir_wait_states(*, trials_of: int | None = None) -> QuerySet:
    return HirWaitState.objects.filter(public_runs_q("test_run__", trials_of=trials_of))


def tables() -> tuple[Table, ...]:
    return (
        Table("hir", "Host idle recovery", "One row per HIR wait state of every public HIR run.", HIR_COLUMNS,
              hir_wait_states, run_prefix="test_run__"),
    )  # fmt: skip
