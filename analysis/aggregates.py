"""Robust statistics for headline metrics: medians, quartiles, and how far one result sits from its peers.

Quartiles use linear interpolation between order statistics (Hyndman & Fan type 7, numpy's default), so the median
of an even count is the mean of the middle two. An outlier is a result whose robust z-score

    z = 0.6745 × (x − median) / MAD,   MAD = median(|x_i − median|)

exceeds `OUTLIER_Z` in magnitude: the modified z-score of Iglewicz and Hoaglin ("How to Detect and Handle
Outliers", ASQC 1993), who recommend 3.5. It is judged only with at least `MIN_PEERS` peers, because with fewer the
spread itself is unknown.

Every statistic counts physical units, not runs: the runs of one unit are summarised first (their median), and a run
with no unit id counts as its own unit, so uploading the same unit many times moves nothing. The outlier vote goes one
step further and gives each independent contributor (uploader account) one voice, the median of their units.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

OUTLIER_Z = 3.5
MIN_PEERS = 5
# When more than half the peers are identical MAD is 0; the mean absolute deviation × √(π/2) estimates the same
# scale for normal data (IBM SPSS's fallback for the modified z-score).
MEAN_AD_FACTOR = math.sqrt(math.pi / 2)


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    return quantile(values, 0.5)


@dataclass(frozen=True)
class Spread:
    median: float
    q1: float
    q3: float
    iqr: float
    n: int


def spread(values: Sequence[float]) -> Spread:
    ordered = sorted(values)  # once for the three quantiles (a drive's aggregates refresh inside a publish)
    q1, mid, q3 = quantile(ordered, 0.25), quantile(ordered, 0.5), quantile(ordered, 0.75)
    return Spread(mid, q1, q3, q3 - q1, len(values))


def unit_values(samples: Iterable[tuple[float, Hashable]]) -> list[float]:
    """One value per unit from (value, unit key) samples: the median of each unit's runs (first-seen order)."""
    by_unit: dict[Hashable, list[float]] = defaultdict(list)
    for value, unit in samples:
        by_unit[unit].append(value)
    # most units have one run, whose median is its value: thousands of one-item sorts spared per drive refresh
    return [values[0] if len(values) == 1 else median(values) for values in by_unit.values()]


def contributor_values(samples: Iterable[tuple[float, Hashable, Hashable]]) -> list[float]:
    """One value per contributor from (value, contributor, unit key) samples: the median of each of their units'
    values, so several units of one contributor are one voice."""
    by_contributor: dict[Hashable, list[tuple[float, Hashable]]] = defaultdict(list)
    for value, contributor, unit in samples:
        by_contributor[contributor].append((value, unit))
    return [median(unit_values(units)) for units in by_contributor.values()]


def unit_key(unit_id: int | None, run_id: int) -> tuple[str, int]:
    """Who a run's value belongs to: its physical unit, or the run itself when its unit is unknown."""
    return ("unit", unit_id) if unit_id is not None else ("run", run_id)


def robust_z(value: float, peers: Sequence[float]) -> float | None:
    """The modified z-score of `value` among `peers`; None when there are too few peers or no spread at all."""
    if len(peers) < MIN_PEERS:
        return None
    center = median(peers)
    mad = median([abs(p - center) for p in peers])
    if mad > 0:
        return 0.6745 * (value - center) / mad
    mean_ad = sum(abs(p - center) for p in peers) / len(peers)
    if mean_ad > 0:
        return (value - center) / (MEAN_AD_FACTOR * mean_ad)
    return None


def outlier_reason(metric_label: str, value: float, peers: Sequence[float]) -> str | None:
    z = robust_z(value, peers)
    if z is None or abs(z) <= OUTLIER_Z:
        return None
    return (
        f"{metric_label} of {value:.4g} is far from the median {median(peers):.4g} of {len(peers)} units of the same "
        f"drive model (robust z-score {z:+.1f}, threshold ±{OUTLIER_Z})"
    )
