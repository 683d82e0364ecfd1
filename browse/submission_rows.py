"""A submission page's rows: its runs, rounds with every measurement, windows and flags in five queries, and the raw
files its bundle's manifest lists."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from analysis.models import (
    Flag,
    Measurement,
    SteadyStateWindow,
    TestRun,
)
from analysis.selectors import (
    TRIAL_TARGET_KIND,
    is_trial,
)
from browse import raw_files
from browse.run_rows import MEASUREMENT_FIELDS

# --- submission page ----------------------------------------------------------------------------------------------


@dataclass
class RoundRows:
    phase: str
    series: str
    number: int
    measurements: list[dict]


def submission_dataset(*, submission, with_files: bool) -> dict:
    """Runs, rounds (with every measurement), windows and flags of one submission in five queries, plus the raw
    files its bundle's manifest lists when `with_files` (the bundle is read, not extracted)."""

    runs = list(
        TestRun.objects.filter(submission=submission)
        .select_related("drive_model", "firmware", "pcie_link", "host")
        .order_by("test")
    )
    rounds: dict[int, list[RoundRows]] = defaultdict(list)
    rows = (
        Measurement.objects.filter(test_run__submission=submission)
        .order_by("test_run_id", "round__phase", "round__series", "round__number", "block_size_bytes", "read_pct")
        .values(*MEASUREMENT_FIELDS, "link_utilization")
    )
    for row in rows:
        by_run = rounds[row["test_run_id"]]
        key = (row["round__phase"], row["round__series"], row["round__number"])
        if not by_run or (by_run[-1].phase, by_run[-1].series, by_run[-1].number) != key:
            by_run.append(RoundRows(*key, measurements=[]))
        by_run[-1].measurements.append(row)
    windows: dict[int, list[SteadyStateWindow]] = defaultdict(list)
    for window in SteadyStateWindow.objects.filter(test_run__submission=submission).order_by("variable"):
        windows[window.test_run_id].append(window)
    flags = list(Flag.objects.filter(submission=submission).select_related("test_run", "measurement"))
    for run in runs:
        run.round_rows = rounds.get(run.pk, [])
        run.window_rows = windows.get(run.pk, [])
    files, files_error = None, ""
    if with_files:
        try:
            files = raw_files.bundle_files(storage_name=submission.storage_name)
        except (raw_files.RawFileNotFound, OSError, ValueError) as exc:
            files_error = f"The stored bundle could not be read: {exc}"
    trial = any(is_trial(run) for run in runs)
    file_target = any(run.target_kind == TRIAL_TARGET_KIND for run in runs)  # a file, which says nothing of a drive
    return {"runs": runs, "flags": flags, "files": files, "files_error": files_error, "trial": trial,
            "file_target": file_target}  # fmt: skip
