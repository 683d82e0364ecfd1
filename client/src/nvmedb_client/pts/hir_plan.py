"""The plan block of Host Idle Recovery (HIR): purge, a random-write preconditioning series until steady, then the
wait states' segments (nvmedb_client.pts.hir holds the segments and the derivation)."""

from __future__ import annotations

from collections.abc import Sequence

from nvmedb_client.plan_types import Block, Cell, PlanContext, Planned, Series, TrackingVariable, tracking_variable
from nvmedb_client.pts import hir

TEST = "hir"
derive = hir.derive
summary_lines = hir.summary_lines
TRACKED_PHASES = (hir.PHASE_PC,)


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    cells = (Cell("randwrite", hir.BLOCK_SIZE, 0),)
    precondition = Series(TEST, hir.PHASE_PC, cells, ctx.threads, ctx.iodepth, ctx.cell_s, ctx.max_rounds)
    segments = hir.segments(threads=ctx.threads, iodepth=ctx.iodepth, quick=ctx.quick, cell_s=ctx.cell_s)
    return Planned((Block(TEST, TEST, purge=True, wipc=False, series=(precondition,), segments=segments),))


def tracking_variables(
    test: str, *, block_sizes: Sequence[int] = (), demand_point: tuple[int, int] | None = None
) -> list[TrackingVariable]:
    """The preconditioning's stop: the IOPS of its RND 4 KiB writes."""
    return [tracking_variable(TEST, hir.PHASE_PC, "total_iops", hir.BLOCK_SIZE, 0)]
