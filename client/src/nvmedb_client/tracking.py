"""Which fio runs form which steady-state series, and the verdicts on them (manifest `steady_state[]`).

A *series* is a group of tracking variables that must all be steady at the same round for the test to stop:
the three IOPS variables together; the latency variable alone; each throughput block size's write phase, then its
read phase.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nvmedb_client.fio_output import FioSummary
from nvmedb_client.plan_types import Series
from nvmedb_client.pts import dirth, ecw, iops, lat, tp
from nvmedb_client.steady_state import WINDOW_ROUNDS, evaluate_window, first_steady_round, latest_window

KIB = 1024
IOPS_VARIABLES = iops.TRACKED_CELLS  # (read_pct, block size), defined with each test
LAT_VARIABLES = lat.TRACKED_CELLS
TP_BLOCK_SIZES = tp.BLOCK_SIZES["enterprise"]  # tracked by default: every throughput block size the PTS defines
TESTS_WITH_STEADY_STATE = ("iops", "tp", "lat", "hir", "ecw", "dirth")
HIR_VARIABLE = (0, 4 * KIB)  # HIR's preconditioning: RND 4 KiB writes until their IOPS are steady
DEMAND_INTENSITY_TESTS = ("ecw", "dirth")
# (block size recorded, read %) of each demand-intensity sweep's cells; the tracked cell is its highest TC and QD
DEMAND_INTENSITY_CELLS = {"ecw": (ecw.NOMINAL_BLOCK_SIZE, ecw.READ_PCT), "dirth": (dirth.BLOCK_SIZE, dirth.READ_PCT)}


def series_tracking(series: Series) -> list[TrackingVariable]:
    """The tracking variables that decide when `series` (a plan's) is steady."""
    if series.phase == "wsat" or series.test not in TESTS_WITH_STEADY_STATE:
        return []
    block_sizes = [series.tp_block_size_bytes] if series.test == "tp" else None
    point = max(((c.threads, c.iodepth) for c in series.cells if c.threads), default=None)
    variables = tracking_variables(series.test, block_sizes=block_sizes, demand_point=point)
    cells = {(c.block_size_bytes, c.read_pct) for c in series.cells}
    # a tracking cell skipped on this namespace (LBA larger than its block) cannot be tracked
    return [v for v in variables if v.phase == series.phase and (v.block_size_bytes, v.read_pct) in cells]


@dataclass(frozen=True)
class TrackingVariable:
    id: str
    test: str
    phase: str
    metric: str
    block_size_bytes: int
    read_pct: int
    threads: int | None = None  # demand-intensity sweeps track one TC/QD cell
    iodepth: int | None = None

    @property
    def series(self) -> str:
        """The group of variables that must be steady together."""
        if self.test == "tp":
            return f"{self.phase}.bs{self.block_size_bytes}"
        return self.test


def _variable(test: str, phase: str, metric: str, block_size: int, read_pct: int) -> TrackingVariable:
    return TrackingVariable(
        id=f"{test}.{metric}.rw{read_pct:03d}.bs{block_size}",
        test=test,
        phase=phase,
        metric=metric,
        block_size_bytes=block_size,
        read_pct=read_pct,
    )


def tracking_variables(
    test: str, *, block_sizes: Sequence[int] | None = None, demand_point: tuple[int, int] | None = None
) -> list[TrackingVariable]:
    """The PTS tracking variables of `test`; `block_sizes` chooses the throughput block sizes (default 1024, 128 KiB);
    `demand_point` is the (TC, QD) cell a demand-intensity sweep (ECW, DIRTH) tracks: its highest TC and QD."""
    if test in DEMAND_INTENSITY_TESTS:
        if demand_point is None:
            return []
        bs, read_pct = DEMAND_INTENSITY_CELLS[test]
        tc, qd = demand_point
        return [
            TrackingVariable(
                id=f"{test}.total_iops.tc{tc}.qd{qd}",
                test=test,
                phase="wdpc",
                metric="total_iops",
                block_size_bytes=bs,
                read_pct=read_pct,
                threads=tc,
                iodepth=qd,
            )
        ]
    if test == "iops":
        return [_variable("iops", "wdpc", "total_iops", bs, pct) for pct, bs in IOPS_VARIABLES]
    if test == "lat":
        return [_variable("lat", "wdpc", "lat_mean_ns", bs, pct) for pct, bs in LAT_VARIABLES]
    if test == "tp":
        variables = []
        for bs in block_sizes or TP_BLOCK_SIZES:
            variables.append(_variable("tp", "tp-write", "write_bw_bytes_per_s", bs, 0))
            variables.append(_variable("tp", "tp-read", "read_bw_bytes_per_s", bs, 100))
        return variables
    if test == "hir":
        return [_variable("hir", "hir-pc", "total_iops", HIR_VARIABLE[1], HIR_VARIABLE[0])]
    if test == "wsat":
        return []  # WSAT is sampled until a written-bytes or time limit, never judged for steady state
    raise ValueError(f"unknown test {test!r}; expected one of iops, tp, lat, wsat")


TRACKED_PHASES = frozenset({"wdpc", "tp-write", "tp-read", "wsat", "hir-pc"})


def evaluate_runs(runs: Sequence[dict], summaries: Mapping[str, FioSummary]) -> list[dict]:
    """The manifest `steady_state[]` entries for every tracking variable that has runs.

    `runs` are manifest `runs[]` entries; `summaries` maps run id -> FioSummary. A run without a summary (its output
    could not be read) or without the metric makes its variable's verdict "not steady", with the reason recorded.
    """
    entries = []
    for test in TESTS_WITH_STEADY_STATE:
        test_runs = [run for run in runs if run.get("test") == test]
        if not test_runs:
            continue
        # Only measurement phases define tracking variables; a preconditioning (WIPC) run has a block size too.
        measured = [run for run in test_runs if run.get("phase") in TRACKED_PHASES]
        block_sizes = sorted({int(run["block_size_bytes"]) for run in measured}, reverse=True)
        points = [(int(r["threads"]), int(r["iodepth"])) for r in measured if r.get("threads") and r.get("iodepth")]
        variables = tracking_variables(
            test, block_sizes=block_sizes if test == "tp" else None, demand_point=max(points, default=None)
        )
        by_series: dict[str, list[TrackingVariable]] = {}
        for variable in variables:
            by_series.setdefault(variable.series, []).append(variable)
        for series_name, series_variables in by_series.items():
            entries.extend(_evaluate_series(series_name, series_variables, test_runs, summaries))
    return entries


def _evaluate_series(
    series_name: str, variables: list[TrackingVariable], runs: Sequence[dict], summaries: Mapping[str, FioSummary]
) -> list[dict]:
    points: dict[str, list[tuple[int, float]]] = {}
    problems: dict[str, str] = {}
    for variable in variables:
        points[variable.id], problem = _series_points(variable, runs, summaries)
        if problem:
            problems[variable.id] = problem
    series_problem = "; ".join(problems.values()) or None
    steady_round = None if series_problem else first_steady_round(points)

    entries = []
    for variable in variables:
        series = points[variable.id]
        if steady_round is not None:
            window_rounds = list(range(steady_round - WINDOW_ROUNDS + 1, steady_round + 1))
            values = dict(series)
            verdict = evaluate_window(window_rounds, [values[r] for r in window_rounds])
        elif variable.id in problems:
            verdict = None
        else:
            verdict = latest_window(series)
        reason = None
        if steady_round is None:
            reason = series_problem or _not_steady_reason(len(series))
        entries.append(
            {
                "test": variable.test,
                "series": series_name,
                "variable": variable.id,
                "phase": variable.phase,
                "block_size_bytes": variable.block_size_bytes,
                "read_pct": variable.read_pct,
                "metric": variable.metric,
                **({"threads": variable.threads, "iodepth": variable.iodepth} if variable.threads else {}),
                "rounds_measured": len(series),
                "steady": steady_round is not None,
                "steady_round": steady_round,
                "reason": reason,
                "window": verdict.to_dict() if verdict else None,
            }
        )
    return entries


def _series_points(
    variable: TrackingVariable, runs: Sequence[dict], summaries: Mapping[str, FioSummary]
) -> tuple[list[tuple[int, float]], str | None]:
    matching = [
        run
        for run in runs
        if run.get("phase") == variable.phase
        and int(run.get("block_size_bytes", -1)) == variable.block_size_bytes
        and int(run.get("read_pct", -1)) == variable.read_pct
        and (
            variable.threads is None or (run.get("threads"), run.get("iodepth")) == (variable.threads, variable.iodepth)
        )
    ]
    points = []
    missing = []
    for run in sorted(matching, key=lambda r: int(r["round"])):
        summary = summaries.get(run["id"])
        value = getattr(summary, variable.metric, None) if summary is not None else None
        if value is None:
            missing.append(run["id"])
            continue
        points.append((int(run["round"]), float(value)))
    rounds = [r for r, _ in points]
    if missing:
        return points, f"{variable.id}: no {variable.metric} for run(s) {', '.join(missing)}"
    if len(set(rounds)) != len(rounds):
        return points, f"{variable.id}: a round was measured more than once"
    if rounds and rounds != list(range(rounds[0], rounds[0] + len(rounds))):
        return points, f"{variable.id}: rounds are not consecutive ({rounds})"
    return points, None


def _not_steady_reason(rounds_measured: int) -> str:
    if rounds_measured < WINDOW_ROUNDS:
        return f"steady state not reached: only {rounds_measured} round(s), a window needs {WINDOW_ROUNDS}"
    return f"steady state not reached in {rounds_measured} rounds"
