"""The model's input: run rows, the factors they record, and the one-row-per-unit table the model is fitted on.

A run row is a `Run` (or a plain dict with the same keys). Runs are reduced to units before anything is fitted: a
unit's figure is the mean of log(metric) over its runs (its geometric mean), and each factor column is the unit's
share of runs at a level (booleans, categories) or the mean of its runs' values (continuous factors). The model is
linear in log(metric), so the unit means follow the same model as the runs, and a unit tested ten times is still
one observation.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace

import numpy as np

# A factor recorded (on at least one run) for fewer than this share of the units is left out of the model.
MIN_RECORDED_SHARE = 0.75


@dataclass(frozen=True)
class Run:
    unit: object
    contributor: object
    value: float  # the headline metric, > 0
    link_limited: bool | None = None  # usable link bandwidth below what the drive reaches elsewhere
    link_below_capability: bool | None = None  # the link trained slower or narrower than both ends can do
    spare_fraction: float | None = None  # spare ÷ user capacity (0.28 = 28 % spare)
    throttled: bool | None = None
    percentage_used: float | None = None  # smart-log wear, 0–255
    firmware: str | None = None
    host_cpu: str | None = None
    kernel: str | None = None
    scheduler: str | None = None
    link: str | None = None  # the negotiated link as text ("Gen2 x4"), only used in explanations


_RUN_FIELDS = frozenset(f.name for f in fields(Run))


def as_run(row: Run | Mapping) -> Run:
    """A `Run` from a run row; keys the model does not use (an export's other columns) are ignored."""
    if isinstance(row, Run):
        return row
    return Run(**{k: v for k, v in row.items() if k in _RUN_FIELDS})


@dataclass(frozen=True)
class Factor:
    key: str
    label: str
    kind: str  # "bool" | "continuous" | "category"
    step: float = 1.0  # continuous: the change one ratio is quoted for
    per: str = ""  # continuous: that change in words


# In priority order: a factor whose columns the earlier ones already span is "not separable" from them, so the
# factors with a measured mechanism (the link, throttling, spare area, wear) come before the circumstantial ones.
FACTORS: tuple[Factor, ...] = (
    Factor("link_limited", "link-limited", "bool"),
    Factor("link_below_capability", "link below capability", "bool"),
    Factor("throttled", "thermal throttling", "bool"),
    Factor("spare_fraction", "spare ÷ user capacity", "continuous", 0.10, "per +10 points"),
    Factor("percentage_used", "wear", "continuous", 10.0, "per +10 points of percentage used"),
    Factor("firmware", "firmware", "category"),
    Factor("host_cpu", "host CPU", "category"),
    Factor("kernel", "kernel", "category"),
    Factor("scheduler", "I/O scheduler", "category"),
)  # fmt: skip
BY_KEY = {f.key: f for f in FACTORS}


def level_of(factor: Factor, run: Run) -> object:
    """The value a run contributes to a factor's columns. The two link flags are coded as exclusive levels of the
    link: "below capability" covers every run on a downtrained link (limited by it or not), "link-limited" the runs
    limited by a link that is all both ends can do (a slower slot). A downtrained unit's whole loss is then its
    below-capability effect, not a link-limited ratio plus a correction."""
    if factor.key == "link_limited":
        return None if run.link_limited is None else bool(run.link_limited and not run.link_below_capability)
    return getattr(run, factor.key)


@dataclass
class Unit:
    id: object
    runs: list[Run]
    contributors: frozenset = frozenset()
    log_value: float = 0.0  # mean log(metric) over its runs
    _levels: dict = field(default_factory=dict, repr=False, compare=False)  # factor key -> Counter of its levels

    def values(self, factor: Factor) -> list:
        return [level_of(factor, r) for r in self.runs]

    def level_counts(self, factor: Factor) -> Counter:
        """How many of its runs are at each level of the factor (computed once per unit and factor)."""
        counts = self._levels.get(factor.key)
        if counts is None:
            counts = self._levels[factor.key] = Counter(level_of(factor, r) for r in self.runs)
        return counts

    @property
    def link(self) -> str | None:
        return next((r.link for r in self.runs if r.link), None)


@dataclass(eq=False)  # compared by identity: a column's `x` is an array
class Column:
    """One column of the design: a non-reference level of a category, a boolean, or a centred continuous factor."""

    factor: Factor
    level: object  # the category level; None for booleans and continuous factors
    x: np.ndarray  # per unit: share of its runs at the level, or (its mean − the reference) ÷ step
    away: np.ndarray  # per unit: not at the reference for this column
    aliased_with: list[Column] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.factor.label if self.level is None else f"{self.factor.label} {self.level}"


@dataclass
class Table:
    units: list[Unit]
    included: list[Factor]
    left_out: dict[str, tuple[str, str]]  # factor key → (status, reason)
    notes: list[str]
    n_runs: int = 0


def _positive(value: object) -> bool:
    """A finite number above zero (numpy scalars and Decimals included, booleans not)."""
    if isinstance(value, bool):
        return False
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(number) and number > 0


def unit_table(rows: Iterable[Run | Mapping]) -> Table:
    """Screen the runs (positive metric, factors recorded for enough units) and reduce them to units."""
    runs = [as_run(r) for r in rows]
    # a run whose unit is unknown is a unit of its own
    runs = [r if r.unit is not None else replace(r, unit=f"run-{i}") for i, r in enumerate(runs)]
    notes: list[str] = []
    good = [r for r in runs if _positive(r.value)]
    if len(good) < len(runs):
        notes.append(f"{len(runs) - len(good)} run(s) left out: the metric is not a positive number")
    all_units = {r.unit for r in good}
    included: list[Factor] = []
    left_out: dict[str, tuple[str, str]] = {}
    for factor in FACTORS:
        recorded = {r.unit for r in good if level_of(factor, r) is not None}
        if not recorded:
            left_out[factor.key] = ("unrecorded", "not recorded for any unit")
        elif len(recorded) < MIN_RECORDED_SHARE * len(all_units):
            left_out[factor.key] = (
                "unrecorded",
                f"recorded for {len(recorded)} of {len(all_units)} units; the model needs "
                f"{MIN_RECORDED_SHARE:.0%}, so it is left out",
            )
        else:
            included.append(factor)
    for factor in included:
        missing = [r for r in good if level_of(factor, r) is None]
        if missing:
            notes.append(
                f"{factor.label} not recorded on {len(missing)} run(s) of {len({r.unit for r in missing})} "
                "unit(s): those runs are left out"
            )
    kept = [r for r in good if all(level_of(f, r) is not None for f in included)]
    by_unit: dict[object, list[Run]] = {}
    for run in kept:
        by_unit.setdefault(run.unit, []).append(run)
    units = [
        Unit(uid, rs, frozenset(r.contributor for r in rs), sum(math.log(float(r.value)) for r in rs) / len(rs))
        for uid, rs in by_unit.items()
    ]
    return Table(units, included, left_out, notes, len(kept))


def reference_of(factor: Factor, units: list[Unit]) -> object:
    """Reference conditions: no flag set, the median unit for continuous factors, the modal level (most units,
    then most runs, then the first by name) for categories."""
    if factor.kind == "bool":
        return False
    if factor.kind == "continuous":
        return float(np.median([_mean(u.values(factor)) for u in units]))
    by_units: Counter = Counter()
    by_runs: Counter = Counter()
    for unit in units:
        counts = unit.level_counts(factor)
        by_units.update(counts.keys())
        by_runs.update(counts)
    return min(by_units, key=lambda lv: (-by_units[lv], -by_runs[lv], str(lv)))


def columns_of(factor: Factor, reference: object, units: list[Unit]) -> list[Column]:
    """The factor's design columns; none when every unit is at the reference (the factor is constant)."""
    if factor.kind == "continuous":
        x = np.array([(_mean(u.values(factor)) - reference) / factor.step for u in units])
        away = np.abs(x) >= 0.5  # half a step from the reference: a unit "differs" in this factor
        return [Column(factor, None, x, away)] if away.any() else []
    if factor.kind == "bool":
        x = np.array([_mean([bool(level) for level in u.values(factor)]) for u in units])
        return [Column(factor, None, x, x > 0)] if np.ptp(x) > 0 else []
    # each unit's share of runs at each level, counted once: a drive of many units and levels stays linear
    shares = [{level: n / len(u.runs) for level, n in u.level_counts(factor).items()} for u in units]
    levels = sorted({level for share in shares for level in share} - {reference}, key=str)
    columns = []
    for level in levels:
        x = np.array([share.get(level, 0.0) for share in shares])
        if np.ptp(x) > 0:  # a level every unit runs equally often is part of the intercept
            columns.append(Column(factor, level, x, x > 0))
    return columns


def _mean(values: list) -> float:
    return math.fsum(float(v) for v in values) / len(values)
