"""What a fit returns: effects with intervals and shares, normalized figures per unit, and explanations."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from analysis.factor_model.data import BY_KEY, Column, Unit
from nvmedb_client.units import change


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float  # the 95 % interval
    high: float

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass
class Effect:
    """One design column: a boolean factor, a category level against the reference level, or a continuous factor
    per `per` (its step). `ratio` is exp(coefficient): the metric at this level ÷ the metric at the reference."""

    factor: str
    label: str
    level: object
    status: str  # "estimated" (≥ 2 units at the level) | "indicative" (1 unit) | "not_separable"
    ratio: float | None
    low: float | None
    high: float | None
    n_units: int  # units at this level (away from the reference)
    n_contributors: int
    moves_with: list[str] = field(default_factory=list)  # kept: the levels not separable from it; else: theirs
    per: str = ""

    @property
    def estimate(self) -> Estimate | None:
        return None if self.ratio is None else Estimate(self.ratio, self.low, self.high)

    @property
    def significant(self) -> bool:
        """The interval excludes no effect (a ratio of 1)."""
        return self.ratio is not None and (self.low > 1 or self.high < 1)


@dataclass
class FactorResult:
    key: str
    label: str
    status: str  # estimated | indicative | not_separable | constant | unrecorded | not_fitted
    reason: str = ""
    share: float | None = None  # its share of the explained variance (Pratt: the fitted factors' shares add up to 1)
    reference: object = None
    n_units: int = 0
    n_contributors: int = 0
    effects: list[Effect] = field(default_factory=list)


@dataclass
class Contributions:
    """Each kept column's effect on each unit of a fit (its ratio raised to the unit's share or distance, with the
    interval's bounds) and whether the unit is away from the reference in it: units × columns, read per unit."""

    columns: list[Column]
    effects: list[Effect]
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    away: np.ndarray

    def of(self, i: int, columns: list[int] | None = None) -> list[tuple[Column, Effect, bool, Estimate]]:
        """Unit `i`'s (column, effect, away from reference, its effect on the unit), of `columns` or every column."""
        chosen = range(len(self.columns)) if columns is None else columns
        value, low, high, away = (a[i].tolist() for a in (self.value, self.low, self.high, self.away))
        return [(self.columns[j], self.effects[j], away[j], Estimate(value[j], low[j], high[j])) for j in chosen]

    @cached_property
    def significant_away(self) -> list[list[int]]:
        """Per unit, the columns in which it is away from the reference and whose effect is significant, in order:
        found for every unit at once (a refit explains hundreds of units, each away in a few columns)."""
        significant = np.array([effect.significant for effect in self.effects], dtype=bool)
        out: list[list[int]] = [[] for _ in range(len(self.away))]
        units, columns = (self.away & significant).nonzero()
        for unit, column in zip(units.tolist(), columns.tolist(), strict=True):
            out[unit].append(column)
        return out


@dataclass
class UnitFigures:
    unit: Unit
    observed: float  # geometric mean of its runs
    normalized: Estimate  # at the reference conditions
    fit_contributions: Contributions = field(repr=False)
    index: int = 0  # its row in the fit's design (the order of the fit's units)

    @cached_property
    def contributions(self) -> list[tuple[Column, Effect, bool, Estimate]]:
        """Every kept column's (column, effect, away from reference, its effect on this unit)."""
        return self.fit_contributions.of(self.index)

    def significant_away_contributions(self) -> list[tuple[Column, Effect, bool, Estimate]]:
        """The same, of the columns in which this unit is away from the reference and whose effect is significant
        only (Contributions.significant_away): what `FactorFit.explain` reads, no Estimate made of another column."""
        contributions, i = self.fit_contributions, self.index
        value, low, high = contributions.value, contributions.low, contributions.high
        return [
            (contributions.columns[j], contributions.effects[j], True,
             Estimate(float(value[i, j]), float(low[i, j]), float(high[i, j])))
            for j in contributions.significant_away[i]
        ]  # fmt: skip


@dataclass
class Explanation:
    unit: object
    factor: str
    label: str
    gap: float  # observed ÷ the reference level − 1
    contribution: Estimate  # the factor's ratio for this unit
    status: str
    text: str


@dataclass
class FactorFit:
    metric: str
    status: str  # "fitted" | "too_few_units"
    reason: str
    n_units: int
    n_runs: int
    n_contributors: int
    factors: list[FactorResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reference: dict = field(default_factory=dict)  # factor key → reference level or value
    r_squared: float | None = None  # of the unit rows; None when every unit has the same figure
    df_resid: int | None = None
    reference_level: Estimate | None = None  # a typical unit at the reference conditions
    units: dict[object, UnitFigures] = field(default_factory=dict)
    run_columns: object = field(default=None, repr=False, compare=False)  # its rows as read (factor_model.table)
    # each fitted factor's levels per unit, in the units' order (UnitFigures.index): data.Table.levels
    unit_levels: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def effects(self) -> list[Effect]:
        return [e for f in self.factors for e in f.effects]

    def factor(self, key: str) -> FactorResult:
        return next(f for f in self.factors if f.key == key)

    def observed(self, unit: object) -> float | None:
        figures = self.units.get(unit)
        return figures.observed if figures else None

    def normalized(self, unit: object) -> Estimate | None:
        """What the unit would do at the reference conditions: its observed figure ÷ the effects of its
        non-reference levels, with the interval of those effects (delta method, the fit's covariance)."""
        figures = self.units.get(unit)
        return figures.normalized if figures else None

    def contribution(self, unit: object, factor: str, level: object = None) -> Estimate | None:
        """The factor's (level's) effect on this unit: its ratio raised to the unit's share or distance."""
        figures = self.units.get(unit)
        for column, _effect, _away, estimate in figures.contributions if figures else ():
            if column.factor.key == factor and (level is None or column.level == level):
                return estimate
        return None

    def explainable(self) -> np.ndarray:
        """Per unit (UnitFigures.index): whether `explain` can name a factor for it, computed for every unit at once:
        away from the reference in a column whose effect is significant, the unit's gap and the effect of one sign.
        A superset of the units with lines (the signs are compared, not the product of the logs), so a refit asks
        `explain` of these units only and gets every line."""
        n = self.n_units
        figures = next(iter(self.units.values()), None)
        if figures is None or self.reference_level is None or not figures.fit_contributions.effects:
            return np.zeros(n, dtype=bool)
        contributions = figures.fit_contributions
        gaps = np.ones(len(contributions.value), dtype=float)
        for unit in self.units.values():
            gaps[unit.index] = unit.observed / self.reference_level.value
        significant = np.array([effect.significant for effect in contributions.effects], dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            same_sign = np.sign(np.log(gaps))[:, None] * np.sign(np.log(contributions.value)) > 0
        return (contributions.away & significant & same_sign).any(axis=1)

    def explain(self, unit: object, metric_label: str = "") -> list[Explanation]:
        """The factors that account for this unit's gap: its level is not the reference, the effect's interval
        excludes no effect, and the unit's gap has the effect's sign. Largest first. Each line names the metric as
        `metric_label`, or the fit's metric."""
        figures = self.units.get(unit)
        if figures is None or self.reference_level is None:
            return []
        gap = figures.observed / self.reference_level.value
        lines = []
        for column, effect, _away, estimate in figures.significant_away_contributions():
            if not math.log(gap) * math.log(estimate.value) > 0:  # of the gap's sign
                continue
            what = self._what(column, figures)
            notes = ["1 unit — indicative"] if effect.status == "indicative" else []
            if effect.moves_with:
                notes.append("not separable from " + ", ".join(effect.moves_with))
            text = f"{metric_label or self.metric} {change(gap)}; {what} accounts for {change(estimate.value)} "
            text += f"[{change(estimate.low, '')}, {change(estimate.high, '')}]" + (
                f" ({'; '.join(notes)})" if notes else ""
            )
            lines.append(Explanation(unit, column.factor.key, what, gap - 1, estimate, effect.status, text))
        return sorted(lines, key=lambda e: -abs(math.log(e.contribution.value)))

    def _what(self, column: Column, figures: UnitFigures) -> str:
        factor = column.factor
        x = float(column.x[figures.index])
        link = figures.unit.link
        share = f" on {x:.0%} of its runs" if factor.kind != "continuous" and x < 1 else ""
        if factor.key == "link_limited":
            return (f"link {link} (link-limited)" if link else "link-limited") + share
        if factor.key == "link_below_capability":
            return (f"link {link}, below capability" if link else "link below capability") + share
        if factor.kind == "bool":
            return factor.label + share
        reference = self.reference[factor.key]
        if factor.key == "spare_fraction":
            spare = (reference + x * factor.step) * 100
            return f"spare {spare:.0f}% of user capacity (reference {reference * 100:.0f}%)"
        if factor.key == "percentage_used":
            return f"wear {reference + x * factor.step:.0f}% used (reference {reference:.0f}%)"
        return f"{BY_KEY[factor.key].label} {column.level} (reference {reference})" + share
