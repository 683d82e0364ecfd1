"""The IOPS test of the SNIA SSS PTS v2.0.2: random I/O over a matrix of R/W mixes and block sizes, rounds until the
tracked cells are steady. The mix is the outer loop, the block size the inner loop, in this order."""

from __future__ import annotations

from collections.abc import Sequence

from nvmedb_client.plan_types import KIB, Block, Cell, PlanContext, Planned, Series, TrackingVariable, tracking_variable

TEST = "iops"
MIXES = (100, 95, 65, 50, 35, 5, 0)
BLOCK_SIZES = (1024 * KIB, 128 * KIB, 64 * KIB, 32 * KIB, 16 * KIB, 8 * KIB, 4 * KIB, 512)
# the tracking variables judged for steady state, (read %, block size): 0/100 at 4 KiB, 65/35 at 64 KiB, 100/0 at 1 MiB
TRACKED_CELLS = ((0, 4 * KIB), (65, 64 * KIB), (100, 1024 * KIB))
TRACKED_PHASES = ("wdpc",)


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    """Purge, WIPC, then the WDPC rounds of every (mix, block size) cell at the edition's TC/QD."""
    cells = tuple(Cell("randrw", bs, mix) for mix in MIXES for bs in BLOCK_SIZES)
    series = Series(TEST, "wdpc", ctx.runnable(TEST, "wdpc", cells), ctx.threads, ctx.iodepth, ctx.cell_s,
                    ctx.max_rounds)  # fmt: skip
    return Planned((Block(TEST, TEST, purge=True, wipc=True, series=(series,), wipc_threads=ctx.threads),))


def tracking_variables(
    test: str, *, block_sizes: Sequence[int] = (), demand_point: tuple[int, int] | None = None
) -> list[TrackingVariable]:
    """The total IOPS of the three tracked cells, steady together."""
    return [tracking_variable(TEST, "wdpc", "total_iops", bs, pct) for pct, bs in TRACKED_CELLS]
