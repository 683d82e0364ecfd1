"""The XSR export table: one row per access group of every public XSR run (its time series is in recovery_series)."""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.models import XsrGroup
from analysis.selectors import public_runs_q
from reports.recovery_series import run_keys
from reports.table_kit import column
from reports.table_types import Table

XSR_COLUMNS = (
    *run_keys(),
    column("access_group", "integer", "1: SEQ 1024 KiB writes, 2: RND 8 KiB writes, 3: SEQ 1024 KiB writes.", "index"),
    column("pattern", "string", "fio access pattern: write (sequential) or randwrite."),
    column("block_size_bytes", "integer", "Block size.", unit="bytes"),
    column("runtime_s", "number", "Planned length of the group (PTS: 8 h, 6 h, 8 h).", unit="s"),
    column("interval_s", "number", "Length of one logged interval.", unit="s"),
    column("mean_bw_bytes_per_s", "number", "Mean write bandwidth over the group (fio).", "mean_bytes_per_s", "bytes/s"),
    column("final_bw_bytes_per_s", "number", "Mean bandwidth over the group's last fifth: its settled level.",
       "final_bytes_per_s", "bytes/s"),
    column("recover_s", "number", "Time from the switch to the first 5 consecutive intervals within 20 % of the settled "
       "level; empty when it never settled.", unit="s"),
    column("recovered", "boolean", "The group settled (recover_s is known)."),
    column("log_gaps", "integer", "Stretches of the interval log longer than 1.5 intervals (fio sampled late)."),
    column("missing", "string", "Why figures of this group are missing (a job's interval log with no sample), or "
       "empty."),
    column("claim_differs", "boolean", "The client's own figures differ from nvmedb's re-derivation from the logs."),
)  # fmt: skip


def xsr_groups(*, trials_of: int | None = None) -> QuerySet:
    return XsrGroup.objects.filter(public_runs_q("test_run__", trials_of=trials_of))


def tables() -> tuple[Table, ...]:
    return (
        Table("xsr", "Cross stimulus recovery", "One row per XSR access group of every public XSR run.", XSR_COLUMNS,
              xsr_groups, run_prefix="test_run__"),
    )  # fmt: skip
