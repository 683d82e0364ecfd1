"""The latency test of the SNIA SSS PTS v2.0.2: random I/O at TC 1 / QD 1 over R/W mixes 100/0, 65/35, 0/100 (the
outer loop) and block sizes 0.5, 4, 8 KiB (the inner loop), rounds until the tracked cells are steady."""

from __future__ import annotations

from collections.abc import Sequence

from nvmedb_client.plan_types import KIB, Block, Cell, PlanContext, Planned, Series, TrackingVariable, tracking_variable

TEST = "lat"
MIXES = (100, 65, 0)
BLOCK_SIZES = (512, 4 * KIB, 8 * KIB)
# the tracking variable judged for steady state, (read %, block size): the mean latency of 4 KiB writes
TRACKED_CELLS = ((0, 4 * KIB),)
TRACKED_PHASES = ("wdpc",)


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    """Purge, WIPC (at the edition's TC), then the rounds at TC 1 / QD 1."""
    cells = tuple(Cell("randrw", bs, mix) for mix in MIXES for bs in BLOCK_SIZES)
    series = Series(TEST, "wdpc", ctx.runnable(TEST, "wdpc", cells), 1, 1, ctx.cell_s, ctx.max_rounds)
    return Planned((Block(TEST, TEST, purge=True, wipc=True, series=(series,), wipc_threads=ctx.threads),))


def tracking_variables(
    test: str, *, block_sizes: Sequence[int] = (), demand_point: tuple[int, int] | None = None
) -> list[TrackingVariable]:
    """The mean latency of the tracked cell."""
    return [tracking_variable(TEST, "wdpc", "lat_mean_ns", bs, pct) for pct, bs in TRACKED_CELLS]
