"""A stored surface run (nvmedb extension) for page, export and release tests, its figures derived by the shared
code from a plausible curve: bandwidth grows with bytes in flight until the pattern's ceiling."""

from __future__ import annotations

import copy

from analysis.models import SurfaceCell, SurfacePattern, TestRun
from analysis.pts.surface import NOT_PTS, SurfaceOutcome, surface_rows
from analysis.tests.factories import TestRunFactory
from nvmedb_client.pts.surface_figures import CellValue, derive

CEILING = {"read": 3.2e9, "randread": 2.4e9, "write": 2.8e9, "randwrite": 1.9e9}
PER_BYTE_IN_FLIGHT = 40_000.0  # bytes/s for each byte in flight, until the ceiling


def surface_run(
    *, block_sizes=(4096, 65536, 1048576), depths=(1, 4, 16), patterns=tuple(CEILING), **run_fields
) -> TestRun:
    run = TestRunFactory(
        test="surface", compliant=False, compliance_reasons=[NOT_PTS], threads=1, iodepth=None, steady=None,
        steady_round=None, **run_fields,
    )  # fmt: skip
    cells = []
    for pattern in patterns:
        for bs in block_sizes:
            for qd in depths:
                bw = float(round(min(CEILING[pattern], PER_BYTE_IN_FLIGHT * bs * qd)))
                cells.append(CellValue(pattern, bs, qd, f"surface-{pattern}-bs{bs}-qd{qd}", bw, bw / bs))
    derived = derive(cells, ioengine=run.ioengine)
    cell_rows, pattern_rows = surface_rows(run, SurfaceOutcome(derived, copy.deepcopy(derived)), {})
    SurfaceCell.objects.bulk_create(cell_rows)
    SurfacePattern.objects.bulk_create(pattern_rows)
    return run
