"""Which fio runs form which steady-state series, and the verdicts on them (manifest `steady_state[]`).

A *series* is a group of tracking variables that must all be steady at the same round for the test to stop:
the three IOPS variables together; the latency variable alone; each throughput block size's write phase, then its
read phase. Each test says what it tracks: its module (nvmedb_client.pts.registry) has `tracking_variables` and
`TRACKED_PHASES` when its rounds stop by the steady-state rule. This module asks the registry and knows no test by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nvmedb_client.fio_output import FioSummary
from nvmedb_client.plan_types import STOP_STEADY, Series, TrackingVariable
from nvmedb_client.pts import registry
from nvmedb_client.tracking_verdicts import evaluate_test

# read by the server (its compliance check, the methodology page) under these names
TESTS_WITH_STEADY_STATE = registry.steady_state_tests()
TRACKED_PHASES = registry.tracked_phases()
IOPS_VARIABLES = registry.module("iops").TRACKED_CELLS  # (read_pct, block size)
LAT_VARIABLES = registry.module("lat").TRACKED_CELLS


def series_tracking(series: Series) -> list[TrackingVariable]:
    """The tracking variables that decide when `series` (a plan's) is steady."""
    if series.stop != STOP_STEADY:
        return []
    block_sizes = sorted({c.block_size_bytes for c in series.cells}, reverse=True)
    point = max(((c.threads, c.iodepth) for c in series.cells if c.threads), default=None)
    variables = tracking_variables(series.test, block_sizes=block_sizes, demand_point=point)
    cells = {(c.block_size_bytes, c.read_pct) for c in series.cells}
    # a tracking cell skipped on this namespace (LBA larger than its block) cannot be tracked
    return [v for v in variables if v.phase == series.phase and (v.block_size_bytes, v.read_pct) in cells]


def tracking_variables(
    test: str, *, block_sizes: Sequence[int] | None = None, demand_point: tuple[int, int] | None = None
) -> list[TrackingVariable]:
    """The PTS tracking variables of `test` (none for a test not judged for steady state, such as WSAT);
    `block_sizes` chooses the throughput block sizes (default every one the PTS defines); `demand_point` is the
    (TC, QD) cell a demand-intensity sweep (ECW, DIRTH) tracks: its highest TC and QD."""
    variables_of = registry.hook(test, "tracking_variables")
    if variables_of is None:
        return []
    return variables_of(test, block_sizes=block_sizes or (), demand_point=demand_point)


def evaluate_runs(runs: Sequence[dict], summaries: Mapping[str, FioSummary]) -> list[dict]:
    """The manifest `steady_state[]` entries for every tracking variable that has runs, test by test in run order.

    `runs` are manifest `runs[]` entries; `summaries` maps run id -> FioSummary. A run without a summary (its output
    could not be read) or without the metric makes its variable's verdict "not steady", with the reason recorded.
    """
    phases = registry.tracked_phases()
    entries = []
    for test in registry.steady_state_tests():
        entries.extend(evaluate_test(test, registry.module(test).tracking_variables, runs, summaries, phases))
    return entries


def is_tracked_run(run: Mapping) -> bool:
    """A run some tracking variable is judged on: a measurement phase of a test judged for steady state."""
    return run.get("test") in registry.steady_state_tests() and run.get("phase") in registry.tracked_phases()
