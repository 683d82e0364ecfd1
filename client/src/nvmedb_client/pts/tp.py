"""The throughput test of the SNIA SSS PTS v2.0.2: per block size, a purge and a WIPC at that block size, then
rounds that each run one segment of sequential writes and one of sequential reads (interleaved), until steady.

One sequential stream, TC 1 / QD 32, in both editions, as the PTS 2.x throughput test sets it (SSSPT's throughput
role cites "SSS PTS v2.0.1, page 36" for these values); see docs/methodology.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from nvmedb_client.plan_types import KIB, Block, Cell, PlanContext, Planned, Series, TrackingVariable, tracking_variable

TEST = "tp"
BLOCK_SIZES = {"enterprise": (1024 * KIB, 128 * KIB), "client": (1024 * KIB,)}
THREADS = 1
IODEPTH = 32
TRACKED_PHASES = ("tp-write", "tp-read")


def run_id(series: Series, round_number: int, cell: Cell) -> str:
    direction = "write" if series.phase == "tp-write" else "read"
    return f"tp-{direction}-r{round_number:02d}-bs{cell.block_size_bytes}"


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    tc = THREADS if ctx.threads_override is None else ctx.threads_override
    qd = IODEPTH if ctx.iodepth_override is None else ctx.iodepth_override
    blocks = []
    for bs in BLOCK_SIZES[ctx.edition.name]:
        common = dict(split_range=True, tp_block_size_bytes=bs, namer=run_id)
        write = Series(TEST, "tp-write", (Cell("write", bs, 0),), tc, qd, ctx.cell_s, ctx.max_rounds, **common)
        read = Series(TEST, "tp-read", (Cell("read", bs, 100),), tc, qd, ctx.cell_s, ctx.max_rounds, **common)
        blocks.append(
            Block(
                TEST,
                f"tp-bs{bs}",
                purge=True,
                wipc=True,
                series=(write, read),
                wipc_threads=ctx.threads,
                wipc_block_size_bytes=bs,  # preconditioned with the block size under test
                interleaved=True,
            )
        )
    return Planned(tuple(blocks))


def tracking_variables(
    test: str, *, block_sizes: Sequence[int] = (), demand_point: tuple[int, int] | None = None
) -> list[TrackingVariable]:
    """Per block size (by default every one the PTS defines), the write phase's bandwidth, then the read phase's;
    each phase of each block size is steady on its own."""
    variables = []
    for bs in block_sizes or BLOCK_SIZES["enterprise"]:
        for phase, metric, read_pct in (
            ("tp-write", "write_bw_bytes_per_s", 0),
            ("tp-read", "read_bw_bytes_per_s", 100),
        ):
            variables.append(tracking_variable(TEST, phase, metric, bs, read_pct, group=f"{phase}.bs{bs}"))
    return variables
