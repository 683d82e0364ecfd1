"""The model's input: run rows, the factors they record, and the one-row-per-unit table the model is fitted on.

A run row is a `Run` (or a plain dict with the same keys). Runs are reduced to units before anything is fitted: a
unit's figure is the mean of log(metric) over its runs (its geometric mean), and each factor column is the unit's
share of runs at a level (booleans, categories) or the mean of its runs' values (continuous factors). The model is
linear in log(metric), so the unit means follow the same model as the runs, and a unit tested ten times is still
one observation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

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

    def values(self, factor: Factor) -> list:
        return [level_of(factor, r) for r in self.runs]

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
class UnitLevels:
    """One included factor over a table's units, counted once per fit: a continuous factor's mean per unit; a
    boolean's count of runs set per unit; a category's levels (in order of first appearance) with each unit's count
    of runs at each of them (units × levels)."""

    means: np.ndarray | None = None
    set_counts: np.ndarray | None = None
    levels: list = field(default_factory=list)
    counts: np.ndarray | None = None


@dataclass
class Table:
    units: list[Unit]
    included: list[Factor]
    left_out: dict[str, tuple[str, str]]  # factor key → (status, reason)
    notes: list[str]
    n_runs: int = 0
    runs_per_unit: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    levels: dict[str, UnitLevels] = field(default_factory=dict)  # included factor key → its counts per unit
    # units × contributors: whether the contributor uploaded runs of the unit
    memberships: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))
    run_columns: object = field(default=None, repr=False)  # the runs read (analysis.factor_model.table.RunColumns)


def reference_of(factor: Factor, table: Table) -> object:
    """Reference conditions: no flag set, the median unit for continuous factors, the modal level (most units,
    then most runs, then the first by name) for categories."""
    if factor.kind == "bool":
        return False
    levels = table.levels[factor.key]
    if factor.kind == "continuous":
        return float(np.median(levels.means))
    by_units = (levels.counts > 0).sum(axis=0).tolist()
    by_runs = levels.counts.sum(axis=0).tolist()
    best = min(range(len(levels.levels)), key=lambda i: (-by_units[i], -by_runs[i], str(levels.levels[i])))
    return levels.levels[best]


def columns_of(factor: Factor, reference: object, table: Table) -> list[Column]:
    """The factor's design columns; none when every unit is at the reference (the factor is constant)."""
    levels = table.levels[factor.key]
    if factor.kind == "continuous":
        x = (levels.means - reference) / factor.step
        away = np.abs(x) >= 0.5  # half a step from the reference: a unit "differs" in this factor
        return [Column(factor, None, x, away)] if away.any() else []
    if factor.kind == "bool":
        x = levels.set_counts / table.runs_per_unit  # each unit's share of runs with the flag set
        return [Column(factor, None, x, x > 0)] if np.ptp(x) > 0 else []
    # each unit's share of runs at each level, counted once: a drive of many units and levels stays linear
    columns = []
    for i in sorted(
        (i for i, level in enumerate(levels.levels) if level != reference), key=lambda i: str(levels.levels[i])
    ):
        x = levels.counts[:, i] / table.runs_per_unit
        if np.ptp(x) > 0:  # a level every unit runs equally often is part of the intercept
            columns.append(Column(factor, levels.levels[i], x, x > 0))
    return columns
