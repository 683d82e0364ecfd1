"""The WSAT optional workloads of PTS v2.0.2 as selectable tests: the write-saturation time series (samples until
4x the capacity is written or the time limit) with another stimulus than RND 4 KiB writes.

| test    | workload                         | access     | block size                        | R/W   |
| ws-oltp | online transaction processing    | random     | 8 KiB                             | 65/35 |
| ws-vod  | video on demand                  | sequential | 128 KiB                           | 90/10 |
| ws-meta | metadata                         | sequential | 0.5 KiB                           | 50/50 |
| ws-comp | composite block size (the ECW mix) | random, hot zones | 0.5 KiB .. 64 KiB mix      | 40/60 |

A sequential workload (rw=rw) gives each job its own slice of the range, and each sample starts every job where the
previous sample stopped in its slice, as the throughput test's rounds do (fio_jobs.carried_starts). ws-comp aligns its
blocks to the mix's smallest block, as the ECW does (nvmedb_client.pts.ecw).
"""

from __future__ import annotations

from dataclasses import dataclass

from nvmedb_client.plan_types import STOP_WRITTEN, Block, Cell, PlanContext, Planned, Series
from nvmedb_client.pts import ecw, wsat

KIB = 1024


@dataclass(frozen=True)
class Workload:
    key: str
    name: str
    pattern: str  # fio rw=
    block_size_bytes: int  # the mix's dominant size for a bssplit workload
    read_pct: int
    bssplit: str | None = None
    zones: str | None = None  # fio random_distribution=zoned:...
    blockalign: int | None = None  # fio blockalign= for a block-size mix

    @property
    def sequential(self) -> bool:
        """Streams through the range: each job gets its own slice and carries its position from sample to sample."""
        return self.pattern in ("rw", "read", "write")


# The ECW block-size mix and its LBA hot zones (50 % of accesses to the first 5 % of the range, 30 % to the next 15 %,
# 20 % to the remaining 80 %).
COMPOSITE_BSSPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"
COMPOSITE_ZONES = "zoned:50/5:30/15:20/80"

WORKLOADS = {
    w.key: w
    for w in (
        Workload("ws-oltp", "OLTP", "randrw", 8 * KIB, 65),
        Workload("ws-vod", "video on demand", "rw", 128 * KIB, 90),
        Workload("ws-meta", "metadata", "rw", 512, 50),
        Workload(
            "ws-comp",
            "composite block size",
            "randrw",
            4 * KIB,
            40,
            COMPOSITE_BSSPLIT,
            COMPOSITE_ZONES,
            blockalign=ecw.SMALLEST_BLOCK_SIZE,
        ),
    )
}
QUICK_MAX_SAMPLES = 5


def job_lines(key: str) -> list[str]:
    """Options a workload adds to its cell's job (after bs=, which bssplit overrides)."""
    workload = WORKLOADS[key]
    lines = []
    if workload.bssplit:
        lines += [f"# the {workload.name} block-size mix (size/percent of I/Os)", f"bssplit={workload.bssplit}"]
    if workload.zones:
        lines += [
            "# LBA hot zones (percent of accesses / percent of the range)",
            f"random_distribution={workload.zones}",
        ]
    if workload.blockalign:
        lines += [
            "# blocks of the mix are aligned to its smallest block, as the ECW issues them",
            f"blockalign={workload.blockalign}",
        ]
    return lines


def workload_job_lines(key: str) -> tuple[None, list[str]]:
    """A workload's job lines: bs= stays (a bssplit after it overrides it), its options follow the R/W mix."""
    return None, job_lines(key)


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    """Purge, no WIPC, then the write-saturation samples of the workload (at most QUICK_MAX_SAMPLES when quick)."""
    workload = WORKLOADS[test]
    max_samples = wsat.max_samples(ctx)
    if ctx.quick:
        max_samples = min(max_samples, QUICK_MAX_SAMPLES)
    cell = Cell(workload.pattern, workload.block_size_bytes or wsat.BLOCK_SIZE, workload.read_pct, workload=test)
    cells = ctx.runnable(test, "wsat", (cell,))
    # a sequential workload: each job streams through its own slice, carrying its position from sample to sample
    series = Series(test, "wsat", cells, ctx.threads, ctx.iodepth, ctx.profile.wsat_sample_s, max_samples,
                    split_range=workload.sequential, stop=STOP_WRITTEN)  # fmt: skip
    return Planned((Block(test, test, purge=True, wipc=False, series=(series,) if cells else ()),))


# where a workload's samples stopped is kept beside WSAT's, under the run state's `wsat_workloads[test]`
record_stop, forget_stop = wsat.record_stop, wsat.forget_stop
