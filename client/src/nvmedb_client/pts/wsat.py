"""The write saturation test (WSAT) of the SNIA SSS PTS v2.0.2: after a purge, RND 4 KiB writes at the edition's
TC/QD, one sample per cell time, until 4x the capacity is written or the profile's time limit."""

from __future__ import annotations

from nvmedb_client.plan_types import KIB, STOP_WRITTEN, Block, Cell, PlanContext, Planned, Series

TEST = "wsat"
BLOCK_SIZE = 4 * KIB
CAPACITY_MULTIPLE = 4  # the samples stop once this many times the capacity is written


def max_samples(ctx: PlanContext) -> int:
    return max(1, int(ctx.profile.wsat_max_s // ctx.profile.wsat_sample_s))


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    cells = (Cell("randwrite", BLOCK_SIZE, 0),)
    series = Series(TEST, "wsat", cells, ctx.threads, ctx.iodepth, ctx.profile.wsat_sample_s, max_samples(ctx),
                    stop=STOP_WRITTEN)  # fmt: skip
    return Planned((Block(TEST, TEST, purge=True, wipc=False, series=(series,)),))


def record_stop(state: dict, test: str, record: dict) -> None:
    """Where a write-saturation series stopped, in the run state (the manifest's `wsat`, or `wsat_workloads[test]`
    for an optional workload)."""
    if test == TEST:
        state["wsat"] = record
    else:
        state.setdefault("wsat_workloads", {})[test] = record


def forget_stop(state: dict, test: str) -> None:
    """Drop what record_stop kept for `test` (its block is run again); nothing for a test that keeps none."""
    if test == TEST:
        state.pop("wsat", None)
    (state.get("wsat_workloads") or {}).pop(test, None)
