"""Host Idle Recovery (HIR): does the drive recover performance when the host gives it idle time?

Plan (PTS v2.0.2 HIR as cloudharmony/block-storage implements it; see docs/methodology.md):
purge; RND 4 KiB writes at the edition's TC/QD in rounds until the write IOPS are steady (the baseline); then for
each wait state (host idle 5, 10, 15, 25 and 50 s): 360 bursts of 5 s of RND 4 KiB writes, each followed by the idle
period, then a return to baseline of 1800 s of continuous RND 4 KiB writes.

Derivation: per wait state, the IOPS of every burst that follows an idle period (from the per-interval iops logs),
their mean, and its ratio to the baseline; the drive "recovers" at a wait state when that ratio exceeds
1 + RECOVERY_MARGIN (the 20 % data excursion a steady window may show, so a gain inside the baseline's own noise is
not called a recovery).
"""

from __future__ import annotations

from collections.abc import Callable

from nvmedb_client.pts import interval_log
from nvmedb_client.pts.segments import Segment, checked_interval
from nvmedb_client.steady_state import WINDOW_ROUNDS, evaluate_window, first_steady_round

KIB = 1024
BLOCK_SIZE = 4 * KIB
IDLE_S = (5, 10, 15, 25, 50)
BURST_S = 5
BURSTS = 360
BASELINE_S = 1800
LOG_INTERVAL_MS = 1000
RECOVERY_MARGIN = 0.20
QUICK_BURSTS = 2
QUICK_TIME_SCALE = 15  # quick: 1 s cells give 0.5 s bursts and 0.33 .. 3.33 s of idle
PHASE_PC = "hir-pc"
PHASE_WAIT = "hir-wait"
PHASE_BASE = "hir-base"


def schedule(*, quick: bool, cell_s: float) -> list[tuple[float, float, int, float]]:
    """(burst s, idle s, bursts after an idle, return-to-baseline s) per wait state. quick: half-cell bursts, the
    spec's idle lengths times cell_s / 15 (0.33 .. 3.33 s for 1 s cells), 2 bursts, one-cell baselines."""
    if not quick:
        return [(BURST_S, idle, BURSTS, BASELINE_S) for idle in IDLE_S]
    scale = cell_s / QUICK_TIME_SCALE
    return [(cell_s / 2, idle * scale, QUICK_BURSTS, cell_s) for idle in IDLE_S]


def log_interval_ms(burst_s: float, idle_s: float | None = None) -> int:
    """1 s samples (PTS); shorter when bursts are shorter than 5 s (five per burst) or an idle period shorter than
    two intervals (a pause must be longer than 1.5 intervals to be seen as one), never under 50 ms."""
    limit = min(LOG_INTERVAL_MS, int(burst_s * 1000) // 5)
    if idle_s is not None:
        limit = min(limit, int(idle_s * 1000) // 2)
    return max(50, limit)


def segments(*, threads: int, iodepth: int, quick: bool, cell_s: float) -> tuple[Segment, ...]:
    out = []
    for index, (burst, idle, bursts, baseline) in enumerate(schedule(quick=quick, cell_s=cell_s), start=1):
        interval = log_interval_ms(burst, idle)
        # fio 3.33 runs the first burst of a thinktime_iotime job for iotime + thinktime: that burst follows the
        # preceding writes, not an idle period, and is not counted; `bursts` bursts after an idle follow it
        out.append(
            Segment(
                run_id=f"hir-w{index}-idle{int(round(idle * 1000))}ms",
                test="hir",
                phase=PHASE_WAIT,
                pattern="randwrite",
                block_size_bytes=BLOCK_SIZE,
                threads=threads,
                iodepth=iodepth,
                runtime_s=round((bursts + 1) * (burst + idle), 3),
                log_interval_ms=interval,
                logs=("iops",),
                burst_s=burst,
                idle_s=round(idle, 3),
                bursts=bursts,
                index=index,
            )
        )
        out.append(
            Segment(
                run_id=f"hir-w{index}-baseline",
                test="hir",
                phase=PHASE_BASE,
                pattern="randwrite",
                block_size_bytes=BLOCK_SIZE,
                threads=threads,
                iodepth=iodepth,
                runtime_s=baseline,
                log_interval_ms=log_interval_ms(baseline),
                logs=("iops",),
                index=index,
            )
        )
    return tuple(out)


def bursts_of(samples: list[interval_log.Sample], interval_ms: int, idle_ms: int) -> list[list[interval_log.Sample]]:
    """One job's samples split at every idle period. A sample normally follows the previous one after one interval,
    the first after an idle period after the idle time more: a step longer than interval + idle / 2 (halfway) is an
    idle period. That sample averages over the idle time too, so it is left out; what remains of each burst are whole
    intervals of I/O."""
    limit = interval_ms + idle_ms / 2
    groups: list[list[interval_log.Sample]] = []
    previous = None
    for sample in samples:
        if previous is None or sample.time_ms - previous.time_ms > limit:
            groups.append([])
            if previous is not None:
                previous = sample
                continue
        groups[-1].append(sample)
        previous = sample
    return groups


def _mean(group: list[interval_log.Sample]) -> float | None:
    return sum(s.value for s in group) / len(group) if group else None


def burst_iops(per_job: list[list[interval_log.Sample]], interval_ms: int, idle_ms: int) -> dict:
    """`bursts`: the IOPS of each burst, all jobs together (None for a burst with no whole interval), when every
    job's log shows the same bursts (otherwise empty, with `burst_counts` per job); `recovery_iops`: the jobs' mean
    IOPS over their bursts after an idle period (the first burst follows writes, not idle) added together."""
    split = [bursts_of(samples, interval_ms, idle_ms) for samples in per_job]
    counts = [len(groups) for groups in split]
    bursts: list[float | None] = []
    times = [groups[0].time_ms if groups else None for groups in split[0]] if split else []
    if len(set(counts)) == 1:
        for k in range(counts[0]):
            means = [_mean(groups[k]) for groups in split]
            bursts.append(None if any(m is None for m in means) else sum(means))
    per_job_means = []
    for groups in split:
        values = [m for m in (_mean(g) for g in groups[1:]) if m is not None]
        per_job_means.append(sum(values) / len(values) if values else None)
    recovery = None if any(m is None for m in per_job_means) else sum(per_job_means)
    measured = min((sum(1 for g in groups[1:] if g) for groups in split), default=0)
    return {
        "bursts": bursts,
        "burst_times_ms": times if bursts else [],
        "burst_counts": counts,
        "recovery_iops": recovery,
        "measured": measured,
    }


def derive(*, plan: dict, runs: list[dict], read: Callable[[str], bytes], summaries: dict) -> dict:
    """The HIR figures of a run, from its fio outputs (`summaries`: run id -> FioSummary) and per-interval logs
    (`read(path)` -> bytes). The client stores this as its claim; verify and the server compute it again."""
    hir_runs = [run for run in runs if run.get("test") == "hir"]
    pc = sorted((r for r in hir_runs if r.get("phase") == PHASE_PC), key=lambda r: r["round"])
    baseline = _baseline([(r["round"], float(summaries[r["id"]].total_iops)) for r in pc])
    states = []
    by_id = {r["id"]: r for r in hir_runs}
    for segment in (s for s in plan_segments(plan) if s["phase"] == PHASE_WAIT):
        run = by_id.get(segment["run_id"])
        base_run = by_id.get(segment["run_id"].split("-idle")[0] + "-baseline")
        if run is None:
            continue
        interval = checked_interval(segment)
        paths, per_job = interval_log.read_run_logs(run, "iops", read)
        missing = [interval_log.missing_sentence(paths, per_job)]
        found = burst_iops(per_job, interval, int(round(float(segment["idle_s"]) * 1000)))
        mean = found["recovery_iops"]
        ratio = mean / baseline["iops"] if mean is not None and baseline["iops"] else None
        state = {
            "index": segment["index"],
            "idle_s": segment["idle_s"],
            "burst_s": segment["burst_s"],
            "bursts_planned": segment["bursts"],
            "bursts_measured": found["measured"],
            "burst_counts": found["burst_counts"],
            "burst_iops": [None if v is None else round(v, 3) for v in found["bursts"]],
            "burst_times_ms": found["burst_times_ms"],
            "recovery_iops": None if mean is None else round(mean, 3),
            "recovery_ratio": None if ratio is None else round(ratio, 6),
            "recovered": None if ratio is None else recovered(ratio),
            "baseline_run_iops": None,
            "baseline_series": [],
        }
        base_segment = next(
            (b for b in plan_segments(plan) if b["run_id"] == segment["run_id"].split("-idle")[0] + "-baseline"), None
        )
        state["wait_segment_s"] = segment["runtime_s"]  # the stage's place on the test's planned timeline
        state["segment_s"] = segment["runtime_s"] + (base_segment or {}).get("runtime_s", 0)
        if base_run is not None:
            state["baseline_run_iops"] = round(float(summaries[base_run["id"]].total_iops), 3)
            base_paths, base_jobs = interval_log.read_run_logs(base_run, "iops", read)
            missing.append(interval_log.missing_sentence(base_paths, base_jobs))
            series = interval_log.combine(base_jobs)  # the shortest job decides: an empty log leaves no series
            state["baseline_series"] = [[s.time_ms, s.value] for s in series]
        if any(missing):  # only then: a bundle whose logs all have samples claims no such key
            state["missing"] = "; ".join(m for m in missing if m)
        states.append(state)
    return {"baseline": baseline, "recovery_margin": RECOVERY_MARGIN, "wait_states": states}


def recovered(ratio: float) -> bool:
    """Strictly above the margin: a ratio of exactly 1.20 is within what a steady baseline may already show."""
    return ratio > 1 + RECOVERY_MARGIN


def _baseline(points: list[tuple[int, float]]) -> dict:

    if not points:
        return {"iops": None, "steady": False, "steady_round": None, "rounds": 0}
    steady_round = first_steady_round({"hir": points})
    last = steady_round or points[-1][0]
    window = [(r, v) for r, v in points if last - WINDOW_ROUNDS < r <= last]
    verdict = evaluate_window([r for r, _ in window], [v for _, v in window]) if len(window) == WINDOW_ROUNDS else None
    average = sum(v for _, v in window) / len(window)
    return {
        "iops": round(average, 3),
        "steady": steady_round is not None,
        "steady_round": steady_round,
        "rounds": len(points),
        "window": [window[0][0], window[-1][0]],
        "data_excursion": None if verdict is None else round(verdict.data_excursion, 3),
    }


def plan_segments(plan: dict) -> list[dict]:
    return [s for block in plan.get("blocks") or [] if block.get("test") == "hir" for s in block.get("segments") or []]


def summary_lines(result: dict) -> list[str]:
    """`nvmedb-client verify`'s sentence per wait state re-derived from the logs."""
    lines = []
    for state in result.get("wait_states", []):
        ratio = state["recovery_ratio"]
        verdict = (
            f"no figure ({state.get('missing') or 'no burst after idle had a whole logged interval'})"
            if ratio is None
            else f"{ratio:.2f}x the baseline, {'' if state['recovered'] else 'not '}recovered"
        )
        lines.append(f"HIR, {state['idle_s']:g} s idle: {state['bursts_measured']} bursts after idle, {verdict}")
    return lines
