"""The data of one surface run (an nvmedb extension, not a PTS test), read for the surface page, the drive page's
summary and compare: `load` reads one run in three bounded queries (the run, its cells with their fio run's latency,
its patterns; a grid has at most 660 cells)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F, OuterRef, Subquery

from analysis.models import SurfaceCell, SurfacePattern
from analysis.selectors import NEWEST_RUN_FIRST, public_test_runs

LABEL = "nvmedb extension, not part of the PTS"
PATTERN_TITLES = {
    "read": "Sequential read",
    "randread": "Random read",
    "write": "Sequential write",
    "randwrite": "Random write",
}


@dataclass
class SurfaceData:
    run: dict
    cells: list[dict]
    patterns: list[dict]


def load(drive=None, submission_id=None, *, runs=None) -> SurfaceData | None:
    """The newest surface run of `drive` among the public runs (or among `runs`, e.g. an owner's own trial runs),
    of submission `submission_id` when given; None when there is none."""
    runs = public_test_runs() if runs is None else runs
    runs = runs.filter(test="surface")
    if drive is not None:
        runs = runs.filter(drive_model=drive)
    if submission_id is not None:
        runs = runs.filter(submission_id=submission_id)
    run = (
        runs.order_by(*NEWEST_RUN_FIRST)
        .values("id", "submission_id", "profile", "target_kind", "ioengine", "drive_model__name", "drive_model__slug")
        .first()
    )
    if run is None:
        return None
    cells = list(
        SurfaceCell.objects.filter(test_run_id=run["id"])
        .order_by("pattern", "block_size_bytes", "iodepth")
        .values("pattern", "block_size_bytes", "iodepth", "bw_bytes_per_s", "iops", "speedup", "knee",
                "n_repetitions", "bw_min_bytes_per_s", "bw_max_bytes_per_s", "bw_cv", "noisy", "spread_reason",
                lat_mean_ns=F("measurement__lat_mean_ns"), lat_p99_ns=F("measurement__lat_p99_ns"))
    )  # fmt: skip
    patterns = list(
        SurfacePattern.objects.filter(test_run_id=run["id"]).values(
            "pattern", "peak_bw_bytes_per_s", "peak_block_size_bytes", "peak_iodepth", "knee_block_size_bytes",
            "knee_iodepth", "knee_bytes_in_flight", "knee_bw_bytes_per_s", "knee_reason", "queue_depth_real",
            "target_note", "claim_differs", "repetitions", "repeatable", "knee_agreeing_repetitions", "knee_moves",
            "noisy_cells",
        )
    )  # fmt: skip
    return SurfaceData(run, cells, patterns)


def pattern_order(patterns) -> list[str]:
    return [p for p in PATTERN_TITLES if p in patterns]


def compare_rows(run_ids: list[int]) -> dict:
    """The compare page's surface rows, in one query: run id -> its patterns with the peak cell's speedup
    (data.rows_of("surface"))."""
    patterns: dict[int, list[dict]] = {}
    for pattern in compare_patterns(run_ids):
        patterns.setdefault(pattern["test_run_id"], []).append(pattern)
    return {"surface": patterns}


def compare_patterns(run_ids: list[int]) -> list[dict]:
    peak_cell = SurfaceCell.objects.filter(
        test_run_id=OuterRef("test_run_id"), pattern=OuterRef("pattern"),
        block_size_bytes=OuterRef("peak_block_size_bytes"), iodepth=OuterRef("peak_iodepth"),
    )  # fmt: skip
    return list(
        SurfacePattern.objects.filter(test_run_id__in=run_ids)
        .annotate(peak_speedup=Subquery(peak_cell.values("speedup")[:1]))
        .order_by("test_run_id", "pattern")
        .values(
            "test_run_id", "pattern", "peak_bw_bytes_per_s", "peak_block_size_bytes", "peak_iodepth",
            "knee_block_size_bytes", "knee_iodepth", "knee_bw_bytes_per_s", "knee_reason", "peak_speedup",
        )
    )  # fmt: skip
