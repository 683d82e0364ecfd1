"""Which module plans each test: test name -> its module, in PTS run order.

Every module here has `plan_blocks(test, ctx: PlanContext) -> Planned`. What else a module has, the client asks for:
- a test whose rounds stop by the steady-state rule: `tracking_variables(test, *, block_sizes, demand_point)` (the
  variables judged; nvmedb_client.tracking) and `TRACKED_PHASES` (the phases of the runs they are judged on);
- a test with timed runs of its own before each round of its series: `before_round(runner, block, round_number)`
  (DIRTH's pre-writes; nvmedb_client.rounds);
- a test whose series stop by the bytes written (WSAT, its workloads): `record_stop(state, test, record)` and
  `forget_stop(state, test)` (where it stopped, kept in the run state; nvmedb_client.rounds, nvmedb_client.resume);
- a test whose cells carry a named stimulus (Cell.workload, the test's name): `workload_job_lines(workload)` (its fio
  job lines in place of bs= or None, and after the R/W mix; nvmedb_client.fio_jobs);
- a test derived from per-interval logs (LOG_DERIVED_TESTS): `derive(plan=, runs=, read=, summaries=)` and
  `summary_lines(result)` (what `nvmedb-client verify` prints of it);
- a test that adds figures of its own to the manifest (ECW/DIRTH's demand intensity, the surface):
  `MANIFEST_FIGURES` (a nvmedb_client.pts.figures.ManifestFigures: how the run derives them, how `verify` re-derives,
  compares and prints them; nvmedb_client.run_manifest and nvmedb_client.cli.verify);
- an extension planned on a grid of the operator's options: `plan_grid(options, *, selected, profile,
  active_range_bytes, lba_size_bytes)` (the grid PlanContext.surface and Plan.surface hold; nvmedb_client.plan);
- its own `nvmedb-client plan` text (nvmedb_client.cli.plan): `describe_series(test, series)` for a series unlike
  the rounds of cells the CLI describes, `describe_block(block)` for lines after its series and segments, and for an
  extension `describe_extension(extension)` (its entry of the plan's `extensions`).
How each of its series stops (Series.stop: steady-state rounds, a WSAT time series, repetitions) is set by its
`plan_blocks`. Adding a test is adding its module under pts/ and one line here; `nvmedb_client.plan`, `tracking`,
`rounds`, `resume`, `fio_jobs`, `run_manifest` and the CLI ask this registry and know no test by name.

The surface's `--surface-*` flags stay in nvmedb_client.cli.surface_options: they are click options (click's parsing
and errors, which no pts module depends on) that decorate `plan` and `run` when the CLI is imported, so `--help`
lists them; the flags build the SurfaceOptions its `plan_grid` validates.
"""

from __future__ import annotations

from types import ModuleType

from nvmedb_client.pts import demand_intensity, hir_plan, iops, lat, surface_plan, tp, wsat, wsat_workloads, xsr
from nvmedb_client.pts.figures import ManifestFigures

CORE_TESTS = ("iops", "tp", "lat", "wsat")
# nvmedb extensions run only when asked for (`--tests ...,surface`); they are never part of the PTS plan
EXTENSIONS = ("surface",)
# the PTS defines them for enterprise drives only
ENTERPRISE_ONLY_TESTS = ("ecw", "dirth")

MODULES: dict[str, ModuleType] = {
    "iops": iops,
    "tp": tp,
    "lat": lat,
    "wsat": wsat,
    "hir": hir_plan,
    "xsr": xsr,
    "ecw": demand_intensity,  # ECW and DIRTH share the TC x QD sweep
    "dirth": demand_intensity,
    **{key: wsat_workloads for key in wsat_workloads.WORKLOADS},
    "surface": surface_plan,
}
TESTS = tuple(MODULES)
# derived from per-interval logs: their modules have `derive(plan=, runs=, read=, summaries=)`
LOG_DERIVED_TESTS = ("hir", "xsr")


def module(test: str) -> ModuleType:
    try:
        return MODULES[test]
    except KeyError:
        raise ValueError(f"unknown test {test!r}: choose from {', '.join(TESTS)}") from None


def hook(test: str, name: str):
    """The optional function or value `name` of `test`'s module (see above), None when the module has none."""
    return getattr(module(test), name, None)


def derivers() -> dict:
    """{test: derive} of the tests whose figures are derived from per-interval logs (HIR, XSR)."""
    return {test: MODULES[test].derive for test in LOG_DERIVED_TESTS}


def steady_state_tests() -> tuple[str, ...]:
    """The tests whose rounds stop by the steady-state rule (their modules have `tracking_variables`), in run order."""
    return tuple(test for test, test_module in MODULES.items() if hasattr(test_module, "tracking_variables"))


def tracked_phases() -> frozenset[str]:
    """The measurement phases whose runs hold the tracking variables of those tests."""
    return frozenset(phase for test in steady_state_tests() for phase in MODULES[test].TRACKED_PHASES)


def manifest_figures(*, extensions: bool | None = None) -> list[ManifestFigures]:
    """The figures tests add to the manifest (their modules' MANIFEST_FIGURES), in run order, each module's once;
    only the extensions' (True) or only the PTS tests' (False) when asked."""
    found: dict[str, ManifestFigures] = {}
    for test, test_module in MODULES.items():
        figures = getattr(test_module, "MANIFEST_FIGURES", None)
        if figures is not None and (extensions is None or (test in EXTENSIONS) == extensions):
            found.setdefault(figures.key, figures)
    return list(found.values())
