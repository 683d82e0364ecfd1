"""Cross Stimulus Recovery (XSR): how the drive handles a switch from large sequential writes to small random writes
and back.

Plan (the PTS-E cross-stimulus test as the ADATA port of cloudharmony/block-storage implements it; see
docs/methodology.md): purge, no WIPC; access group 1: SEQ 1024 KiB writes for 8 h; group 2: RND 8 KiB
writes for 6 h; group 3: SEQ 1024 KiB writes for 8 h; TC 1 / QD 32, back to back, throughput logged per interval.

Derivation, per group: its throughput per interval (fio's bw log), its final level (the mean of its last fifth), and
the time to recover: from the group's start to the first of FOLLOW_INTERVALS consecutive intervals that all lie
within RECOVERY_BAND (20 %, the steady-state data excursion) of the final level. Group 3's final level is also
compared with group 1's (does sequential writing get back to where it was before the random writes?).
"""

from __future__ import annotations

from collections.abc import Callable

from nvmedb_client.plan_types import Block, PlanContext, Planned
from nvmedb_client.pts import interval_log
from nvmedb_client.pts.segments import Segment, checked_interval

KIB = 1024
THREADS = 1
IODEPTH = 32
GROUPS = (("write", 1024 * KIB, 8 * 3600), ("randwrite", 8 * KIB, 6 * 3600), ("write", 1024 * KIB, 8 * 3600))
LOG_INTERVAL_MS = 5000
QUICK_GROUP_CELLS = (4, 3, 4)
RECOVERY_BAND = 0.20
FOLLOW_INTERVALS = 5
FINAL_SHARE = 0.2


def segments(*, quick: bool, cell_s: float, threads: int | None = None, iodepth: int | None = None) -> tuple:
    out = []
    for index, (pattern, block_size, pts_s) in enumerate(GROUPS, start=1):
        runtime = QUICK_GROUP_CELLS[index - 1] * cell_s if quick else pts_s
        interval = max(50, int(cell_s * 1000) // 10) if quick else LOG_INTERVAL_MS
        out.append(
            Segment(
                run_id=f"xsr-g{index}",
                test="xsr",
                phase=f"xsr-g{index}",
                pattern=pattern,
                block_size_bytes=block_size,
                threads=threads or THREADS,
                iodepth=iodepth or IODEPTH,
                runtime_s=runtime,
                log_interval_ms=interval,
                logs=("bw",),
                index=index,
            )
        )
    return tuple(out)


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    """Purge, no WIPC, the three access groups back to back (TC/QD the test's own unless overridden)."""
    groups = segments(quick=ctx.quick, cell_s=ctx.cell_s, threads=ctx.threads_override, iodepth=ctx.iodepth_override)
    return Planned((Block("xsr", "xsr", purge=True, wipc=False, series=(), segments=groups),))


def recovery(values: list[float], interval_ms: int) -> dict:
    """Final level and time to recover of one group's per-interval throughputs (bytes/s)."""
    if not values:
        return {"final_bytes_per_s": None, "recover_s": None, "recovered": False}
    tail = max(1, int(round(len(values) * FINAL_SHARE)))
    final = sum(values[-tail:]) / tail
    follow = min(FOLLOW_INTERVALS, len(values))
    for start in range(len(values) - follow + 1):
        if all(within_band(value, final) for value in values[start : start + follow]):
            return {"final_bytes_per_s": round(final, 3), "recover_s": start * interval_ms / 1000, "recovered": True}
    return {"final_bytes_per_s": round(final, 3), "recover_s": None, "recovered": False}


def within_band(value: float, level: float) -> bool:
    """Inclusive: an interval exactly 20 % off the final level is within, as a steady window's may be."""
    if level == 0:
        return value == 0
    return abs(value - level) <= RECOVERY_BAND * abs(level)


def derive(*, plan: dict, runs: list[dict], read: Callable[[str], bytes], summaries: dict) -> dict:
    by_id = {r["id"]: r for r in runs if r.get("test") == "xsr"}
    groups = []
    for segment in plan_segments(plan):
        run = by_id.get(segment["run_id"])
        if run is None:
            continue
        interval = checked_interval(segment)
        paths, per_job = interval_log.read_run_logs(run, "bw", read)
        series = interval_log.combine(per_job)
        values = [s.value * KIB for s in series]  # fio logs KiB/s; the dataset stores bytes/s
        gaps = [g for samples in per_job for g in interval_log.gaps(samples, interval)]
        group = {
            "index": segment["index"],
            "pattern": segment["pattern"],
            "block_size_bytes": segment["block_size_bytes"],
            "runtime_s": segment["runtime_s"],
            "interval_ms": interval,
            "mean_bytes_per_s": round(float(summaries[run["id"]].write_bw_bytes_per_s or 0), 3),
            "series": [[s.time_ms, s.value * KIB] for s in series],
            "log_gaps": [[start, length] for start, length in gaps],
            **recovery(values, interval),
        }
        if missing := interval_log.missing_sentence(paths, per_job):  # an empty job log leaves no series
            group["missing"] = missing
        groups.append(group)
    result = {"recovery_band": RECOVERY_BAND, "follow_intervals": FOLLOW_INTERVALS, "groups": groups}
    first = next((g for g in groups if g["index"] == 1), None)
    third = next((g for g in groups if g["index"] == 3), None)
    if first and third and first["final_bytes_per_s"]:
        result["seq_return_ratio"] = round(third["final_bytes_per_s"] / first["final_bytes_per_s"], 6)
    return result


def plan_segments(plan: dict) -> list[dict]:
    return [s for block in plan.get("blocks") or [] if block.get("test") == "xsr" for s in block.get("segments") or []]


def summary_lines(result: dict) -> list[str]:
    """`nvmedb-client verify`'s sentence per access group re-derived from the logs."""
    lines = []
    for group in result.get("groups", []):
        settled = "never settled" if group["recover_s"] is None else f"settled after {group['recover_s']:g} s"
        lines.append(f"XSR group {group['index']} ({group['pattern']} {group['block_size_bytes']} B): {settled}")
    return lines
