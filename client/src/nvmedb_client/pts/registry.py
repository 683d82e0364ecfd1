"""Which module plans each test: test name -> its module, in PTS run order.

Every module here has `plan_blocks(test, ctx: PlanContext) -> Planned`; a test derived from per-interval logs
(LOG_DERIVED_TESTS) also has `derive(plan=, runs=, read=, summaries=)`. Adding a test is adding its module under pts/ and one line
here; `nvmedb_client.plan` asks this registry and knows no test by name.
"""

from __future__ import annotations

from types import ModuleType

from nvmedb_client.pts import demand_intensity, hir_plan, iops, lat, surface_plan, tp, wsat, wsat_workloads, xsr

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


def derivers() -> dict:
    """{test: derive} of the tests whose figures are derived from per-interval logs (HIR, XSR)."""
    return {test: MODULES[test].derive for test in LOG_DERIVED_TESTS}
