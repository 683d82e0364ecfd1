"""The repetitions of the surface's cells (an nvmedb extension, not the PTS).

- A cell's figure is the median of its repetitions (bandwidth and IOPS each), given with the minimum, the maximum and
  the coefficient of variation of its bandwidth: the sample standard deviation (n - 1) over the mean. A cell whose CV
  is above CV_THRESHOLD (10%) is *noisy*. One repetition has no spread: min, max and CV are then missing, with the
  reason (a bundle from before repeated cells, or a trial run with fewer repetitions).
- The 90%-of-peak point (the knee) is computed on the medians; each repetition's own knee (its own peak, its own
  cells) is compared with it, and the count of repetitions that agree is kept. A knee that differs between
  repetitions *moves*.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from fractions import Fraction

THRESHOLD = Fraction(9, 10)
CV_THRESHOLD = 0.10
SPREAD_RULE = (
    "median of the cell's repetitions; spread as min-max and coefficient of variation (sample standard deviation / "
    "mean) of its bandwidth; a cell with a CV above 10% is noisy"
)
ONE_REPETITION = (
    "one repetition of this cell: no spread (a bundle from before repeated cells, or a trial with fewer repetitions)"
)
ZERO_MEAN = "the repetitions' mean bandwidth is zero: no coefficient of variation"


def reaches(bw: float, peak: float) -> bool:
    """At least 90% of the peak, compared exactly (bw x 10 >= peak x 9 on the binary values)."""
    return Fraction(bw) >= THRESHOLD * Fraction(peak)


def knee_of(cells: Sequence) -> object | None:
    """The cell with the fewest bytes in flight (ties: lower QD) reaching 90% of the cells' peak; None when every
    cell measured zero bandwidth (or there is none). `cells` have block_size_bytes, iodepth and bw_bytes_per_s."""
    if not cells:
        return None
    peak = max(c.bw_bytes_per_s for c in cells)
    if not peak or peak <= 0:
        return None
    reaching = [c for c in cells if reaches(c.bw_bytes_per_s, peak)]
    return min(reaching, key=lambda c: (c.block_size_bytes * c.iodepth, c.iodepth))


def median_member(values: Sequence):
    """The repetition whose bandwidth is the median (of an even count, the lower of the two middle ones): its run
    stands for the cell (its latency, its raw file)."""
    ordered = sorted(values, key=lambda v: (v.bw_bytes_per_s, v.repetition))
    return ordered[(len(ordered) - 1) // 2]


def cell_spread(values: Sequence) -> dict:
    """Median bandwidth and IOPS, min, max, CV and noisy of one cell's measured repetitions (at least one)."""
    bws = [v.bw_bytes_per_s for v in values]
    figures = {
        "bw_bytes_per_s": statistics.median(bws),
        "iops": statistics.median([v.iops for v in values]),
        "n_repetitions": len(values),
        "bw_min_bytes_per_s": None,
        "bw_max_bytes_per_s": None,
        "bw_cv": None,
        "noisy": None,
        "spread_reason": None,
    }
    if len(values) < 2:
        figures["spread_reason"] = ONE_REPETITION
        return figures
    figures["bw_min_bytes_per_s"], figures["bw_max_bytes_per_s"] = min(bws), max(bws)
    mean = statistics.fmean(bws)
    if mean <= 0:
        figures["spread_reason"] = ZERO_MEAN
        return figures
    figures["bw_cv"] = statistics.stdev(bws) / mean
    figures["noisy"] = figures["bw_cv"] > CV_THRESHOLD
    return figures


def knee_agreement(by_repetition: dict[int, list], median_knee: tuple[int, int] | None) -> dict:
    """Each repetition's own knee of one pattern and how many agree with the knee of the medians."""
    knees = []
    for repetition in sorted(by_repetition):
        knee = knee_of(by_repetition[repetition])
        knees.append(
            {
                "repetition": repetition,
                "cells_measured": len(by_repetition[repetition]),
                "block_size_bytes": knee.block_size_bytes if knee else None,
                "iodepth": knee.iodepth if knee else None,
            }
        )
    agreeing = sum(1 for k in knees if median_knee is not None and (k["block_size_bytes"], k["iodepth"]) == median_knee)
    return {
        "repetitions": len(knees),
        "knee_by_repetition": knees,
        "knee_agreeing_repetitions": agreeing if median_knee is not None else None,
        "knee_moves": len(knees) > 1 and len({(k["block_size_bytes"], k["iodepth"]) for k in knees}) > 1,
    }
