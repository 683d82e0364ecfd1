"""The over-provisioning figures of a drive page: each distinct namespace size's hidden share and spare area, and
the headline metrics by over-provisioning level where the units differ in it.

Plain functions over the rows `queries.factor_runs` reads in one query. Each unit counts once per level (the median
of its runs, so one unit tested ten times does not outvote ten units); a level's value is the median of its units.
Runs whose level is unknown are left out. What explains the spread is the factor model's (browse.effects).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from analysis.headline import BY_KEY
from analysis.overprovisioning import spare_vs_user
from reports import units

# Namespace sizes are whole LBAs: a namespace within 0.1% of tnvmcap is the full drive.
FULL_NAMESPACE_TOLERANCE = 0.001
FACTOR_METRICS = ("iops_4k_read", "iops_4k_write", "bw_1m_read", "bw_1m_write")


def op_level(run: dict) -> str | None:
    spare = spare_vs_user(run["overprovisioning"])
    if spare is None:
        return None
    if run["overprovisioning"] <= FULL_NAMESPACE_TOLERANCE:
        return "full namespace"
    return f"{units.significant(spare * 100)}% spare"


@dataclass
class Overprovisioning:
    """Both over-provisioning figures of each distinct namespace size seen, and whether any was shrunk."""

    figures: list[tuple[float, float, int]] = field(default_factory=list)  # (hidden share, spare vs user, units)
    below_capacity: bool = False
    unknown_units: int = 0


def unit_key(run: dict) -> object:
    return run["unit_id"] if run["unit_id"] is not None else f"run-{run['id']}"


def level_medians(runs: list[dict], metric: str, level_of) -> list[tuple[str, int, float]]:
    """(level, units, median of the units' medians) of `metric` per level, lowest first."""
    column = f"m_{metric}"
    per_unit: dict[str, dict[object, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        value, level = run.get(column), level_of(run)
        if value is not None and level is not None:
            per_unit[level][unit_key(run)].append(value)
    return sorted(
        (
            (level, len(by_unit), statistics.median(statistics.median(v) for v in by_unit.values()))
            for level, by_unit in per_unit.items()
        ),
        key=lambda item: item[2],
    )


def overprovisioning_summary(runs: list[dict]) -> Overprovisioning:
    by_share: dict[float, set] = defaultdict(set)
    unknown: set = set()
    for run in runs:
        share = run["overprovisioning"]
        if share is None:
            unknown.add(unit_key(run))
        else:
            by_share[round(share, 4)].add(unit_key(run))
    summary = Overprovisioning(unknown_units=len(unknown - {u for us in by_share.values() for u in us}))
    for share in sorted(by_share):
        summary.figures.append((share, spare_vs_user(share), len(by_share[share])))
    summary.below_capacity = any(share > FULL_NAMESPACE_TOLERANCE for share in by_share)
    return summary


def op_breakdown(runs: list[dict]) -> list[tuple[str, str, str, int]]:
    """Where units differ in over-provisioning: each headline metric's median per OP level, as (metric, level,
    median, units). Empty when every unit has the same OP (or none is known)."""
    rows = []
    known: dict = {}  # a level depends only on the run's share, and a drive has a handful of shares

    def level_of(run: dict) -> str | None:
        share = run["overprovisioning"]
        if share not in known:
            known[share] = op_level(run)
        return known[share]

    for metric in FACTOR_METRICS:
        levels = level_medians(runs, metric, level_of)
        if len(levels) >= 2:
            headline = BY_KEY[metric]
            rows.extend((headline.label, level, units.by_unit(headline.unit, value), n) for level, n, value in levels)
    return rows
