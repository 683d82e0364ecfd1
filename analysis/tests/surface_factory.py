"""A stored surface run (nvmedb extension) for page, export and release tests, its figures derived by the shared
code from a plausible curve: bandwidth grows with bytes in flight until the pattern's ceiling. Each cell runs
`repetitions` times, each repetition a few per cent off the curve; the sequential read 4 KiB x QD 1 cell is noisy
(its repetitions 25% apart)."""

from __future__ import annotations

import copy

from analysis.models import SurfaceCell, SurfacePattern, TestRun
from analysis.pts.surface import NOT_PTS, SurfaceOutcome, surface_rows
from analysis.tests.factories import MeasurementFactory, RoundFactory, TestRunFactory
from nvmedb_client.pts.surface_figures import CellValue, derive

CEILING = {"read": 3.2e9, "randread": 2.4e9, "write": 2.8e9, "randwrite": 1.9e9}
PER_BYTE_IN_FLIGHT = 40_000.0  # bytes/s for each byte in flight, until the ceiling
NOISY = ("read", 4096, 1)


def _repetition_bw(pattern: str, bs: int, qd: int, repetition: int, repetitions: int) -> float:
    bw = min(CEILING[pattern], PER_BYTE_IN_FLIGHT * bs * qd)
    if repetitions == 1:
        return float(round(bw))
    step = 0.25 if (pattern, bs, qd) == NOISY else 0.02
    return float(round(bw * (1 + step * (repetition - (repetitions + 1) / 2))))


def surface_run(
    *,
    block_sizes=(4096, 65536, 1048576),
    depths=(1, 4, 16),
    patterns=tuple(CEILING),
    latency=False,
    repetitions=3,
    **run_fields,
) -> TestRun:
    """With `latency`, each cell has its fio run (a Measurement) with the latency bytes in flight give at that
    bandwidth (Little's law: mean = block size x QD / bandwidth; the 99th percentile 2.5x the mean)."""
    run = TestRunFactory(
        test="surface", compliant=False, compliance_reasons=[NOT_PTS], threads=1, iodepth=None, steady=None,
        steady_round=None, **run_fields,
    )  # fmt: skip
    cells = []
    for pattern in patterns:
        for bs in block_sizes:
            for qd in depths:
                for r in range(1, repetitions + 1):
                    bw = _repetition_bw(pattern, bs, qd, r, repetitions)
                    run_id = f"surface-{pattern}-bs{bs}-qd{qd}" + (f"-rep{r}" if repetitions > 1 else "")
                    cells.append(CellValue(pattern, bs, qd, run_id, bw, bw / bs, r))
    derived = derive(cells, ioengine=run.ioengine, repetitions=repetitions)
    measurements = {}
    if latency:
        rounds = {r: RoundFactory(test_run=run, phase="surface", number=r) for r in range(1, repetitions + 1)}
        for cell in cells:
            mean_ns = 1e9 * cell.block_size_bytes * cell.iodepth / cell.bw_bytes_per_s
            reads = cell.pattern in ("read", "randread")
            measurements[(run.id, cell.run_id)] = MeasurementFactory(
                round=rounds[cell.repetition], run_key=cell.run_id, pattern=cell.pattern, block_size_bytes=cell.block_size_bytes,
                read_pct=100 if reads else 0, threads=1, iodepth=cell.iodepth,
                read_iops=cell.iops if reads else 0.0, write_iops=0.0 if reads else cell.iops, total_iops=cell.iops,
                lat_mean_ns=mean_ns, lat_p99_ns=2.5 * mean_ns, lat_p9999_ns=6 * mean_ns, lat_max_ns=10 * mean_ns,
            )  # fmt: skip
    cell_rows, pattern_rows = surface_rows(run, SurfaceOutcome(derived, copy.deepcopy(derived)), measurements)
    SurfaceCell.objects.bulk_create(cell_rows)
    SurfacePattern.objects.bulk_create(pattern_rows)
    return run
