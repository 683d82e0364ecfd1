"""The plan blocks of the tests added to the PTS core four (HIR, XSR, the WSAT optional workloads)."""

from __future__ import annotations

from nvmedb_client.plan import WSAT_BLOCK_SIZE, Block, Cell, Profile, Series
from nvmedb_client.pts import hir, wsat_workloads, xsr

RECOVERY_TESTS = ("hir", "xsr")
EXTRA_TESTS = (*RECOVERY_TESTS, *wsat_workloads.WORKLOADS)


def extra_block(
    test: str, *, prof: Profile, tc: int, qd: int, rounds: int, threads: int | None, iodepth: int | None, runnable
) -> Block:
    quick = prof.name == "quick"
    cell_s = prof.cell_runtime_s
    if test == "hir":
        precondition = Series("hir", hir.PHASE_PC, (Cell("randwrite", hir.BLOCK_SIZE, 0),), tc, qd, cell_s, rounds)
        segments = hir.segments(threads=tc, iodepth=qd, quick=quick, cell_s=cell_s)
        return Block("hir", "hir", purge=True, wipc=False, series=(precondition,), segments=segments)
    if test == "xsr":
        segments = xsr.segments(quick=quick, cell_s=cell_s, threads=threads, iodepth=iodepth)
        return Block("xsr", "xsr", purge=True, wipc=False, series=(), segments=segments)
    workload = wsat_workloads.WORKLOADS[test]
    max_samples = max(1, int(prof.wsat_max_s // prof.wsat_sample_s))
    if quick:
        max_samples = min(max_samples, wsat_workloads.QUICK_MAX_SAMPLES)
    cell = Cell(workload.pattern, workload.block_size_bytes or WSAT_BLOCK_SIZE, workload.read_pct, workload=test)
    cells = runnable(test, "wsat", (cell,))
    # a sequential workload: each job streams through its own slice, carrying its position from sample to sample
    series = Series(test, "wsat", cells, tc, qd, prof.wsat_sample_s, max_samples, split_range=workload.sequential)
    return Block(test, test, purge=True, wipc=False, series=(series,) if cells else ())
