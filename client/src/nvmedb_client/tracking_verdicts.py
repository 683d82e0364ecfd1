"""The manifest `steady_state[]` entries of one test's tracking variables, judged over its runs by the PTS rule.

The test says which variables it tracks (`variables_of`, its module's `tracking_variables`); this module knows no
test by name, so a test module can judge its own runs (the demand-intensity curve reads its steady round) without
going through nvmedb_client.tracking, which asks the registry of every test.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from nvmedb_client.fio_output import FioSummary
from nvmedb_client.plan_types import TrackingVariable
from nvmedb_client.steady_state import WINDOW_ROUNDS, evaluate_window, first_steady_round, latest_window

# test module's tracking_variables: (test, *, block_sizes=, demand_point=) -> the variables it tracks
VariablesOf = Callable[..., list[TrackingVariable]]


def evaluate_test(
    test: str,
    variables_of: VariablesOf,
    runs: Sequence[dict],
    summaries: Mapping[str, FioSummary],
    phases: Collection[str],
) -> list[dict]:
    """The entries of every tracking variable of `test` (none when it has no runs among `runs`).

    The variables follow what was measured: the block sizes and the highest (TC, QD) cell of the runs in `phases` (the
    measurement phases; a preconditioning (WIPC) run has a block size too). `summaries` maps run id -> FioSummary; a
    run without one (its output could not be read) or without the metric makes its variable "not steady", with the
    reason recorded.
    """
    test_runs = [run for run in runs if run.get("test") == test]
    if not test_runs:
        return []
    measured = [run for run in test_runs if run.get("phase") in phases]
    block_sizes = sorted({int(run["block_size_bytes"]) for run in measured}, reverse=True)
    points = [(int(r["threads"]), int(r["iodepth"])) for r in measured if r.get("threads") and r.get("iodepth")]
    variables = variables_of(test, block_sizes=block_sizes, demand_point=max(points, default=None))
    by_series: dict[str, list[TrackingVariable]] = {}
    for variable in variables:
        by_series.setdefault(variable.series, []).append(variable)
    entries = []
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
