"""From run rows to the one-row-per-unit table the model is fitted on (analysis.factor_model.data.Table).

The rows are read column by column once (`RunColumns`): each run's unit, contributor, log(metric) and its level of
every factor, with the units and each category's levels numbered in order of first appearance. Everything after is
counted per unit with numpy. Rows that begin with the same row objects as an earlier fit's (a held unit's fit: the
public rows, then its own) extend that fit's columns instead of reading them again: the table is the same.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from itertools import repeat
from operator import attrgetter, is_, is_not

import numpy as np

from analysis.factor_model.data import BY_KEY, FACTORS, MIN_RECORDED_SHARE, Factor, Run, Table, Unit, UnitLevels, as_run

_KEYS = tuple(f.key for f in FACTORS)
_LEVELS = attrgetter(*_KEYS)  # a run's value of every factor, as one tuple


def _positive(value: object) -> bool:
    """A finite number above zero (numpy scalars and Decimals included, booleans not)."""
    if isinstance(value, bool):
        return False
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(number) and number > 0


def _numbered(keys: list, index: dict) -> np.ndarray:
    """Each key's number in `index` (keys → numbers in order of first appearance), adding the new ones to it."""
    new = [key for key in dict.fromkeys(keys) if key not in index]  # each the first of its equals, as setdefault's
    index.update(zip(new, range(len(index), len(index) + len(new)), strict=True))
    return np.fromiter(map(index.__getitem__, keys), dtype=np.intp, count=len(keys))


def _logs(values: list) -> np.ndarray:
    """log(value) per run, NaN where the value is not a positive number (_positive)."""
    if all(type(value) is float for value in values):  # the rows' values (analysis.factor_rows): _positive inline
        return np.array([math.log(v) if 0.0 < v < math.inf else math.nan for v in values], dtype=float)
    return np.array([math.log(float(v)) if _positive(v) else math.nan for v in values], dtype=float)


@dataclass
class RunColumns:
    """A fit's runs, read column by column: per run its unit's number, contributor, log(metric) (NaN when the metric
    is not a positive number), whether it records each factor and its level as a number: a continuous factor's
    value, a boolean's, a category level's number (levels numbered in order of first appearance)."""

    rows: list  # the rows as given, to tell whether later rows begin with them
    runs: list[Run]
    unit_index: dict  # unit key → its number
    unit_codes: np.ndarray
    contributors: list
    logs: np.ndarray
    recorded: dict[str, np.ndarray]  # factor key → per run
    numbers: dict[str, np.ndarray]  # factor key → per run: the value, the flag, or the level's number
    level_index: dict[str, dict]  # category key → its levels → their numbers
    contributor_index: dict  # contributor → its number
    contributor_codes: np.ndarray

    @classmethod
    def of(cls, rows: list, base: RunColumns | None = None) -> RunColumns:
        """The columns of `rows`; those of `base` are reused when `rows` begin with its rows (the same objects)."""
        start = len(base.rows) if base is not None else 0
        if base is None or start > len(rows) or not all(map(is_, base.rows, rows)):
            base, start = None, 0
        runs = [as_run(r) for r in rows[start:]]
        # a run whose unit is unknown is a unit of its own
        runs = [r if r.unit is not None else replace(r, unit=f"run-{i}") for i, r in enumerate(runs, start)]
        unit_index = dict(base.unit_index) if base is not None else {}
        unit_codes = _numbered([r.unit for r in runs], unit_index)
        logs = _logs([r.value for r in runs])
        raw = list(zip(*map(_LEVELS, runs), strict=True)) or [()] * len(_KEYS)
        levels = dict(zip(_KEYS, map(list, raw), strict=True))
        levels["link_limited"] = [  # level_of: the two link flags as exclusive levels of the link
            None if limited is None else bool(limited and not below)
            for limited, below in zip(levels["link_limited"], levels["link_below_capability"], strict=True)
        ]
        recorded = {
            key: np.fromiter(map(is_not, column, repeat(None)), dtype=bool, count=len(column))
            for key, column in levels.items()
        }
        level_index = {
            key: dict(base.level_index[key]) if base else {} for key in _KEYS if BY_KEY[key].kind == "category"
        }
        numbers = {}
        for factor in FACTORS:
            column = levels[factor.key]
            if factor.kind == "continuous":
                numbers[factor.key] = np.array([math.nan if v is None else float(v) for v in column], dtype=float)
            elif factor.kind == "bool":
                numbers[factor.key] = np.fromiter(map(bool, column), dtype=bool, count=len(column))
            else:
                numbers[factor.key] = _numbered(column, level_index[factor.key])
        contributors = [r.contributor for r in runs]
        contributor_index = dict(base.contributor_index) if base is not None else {}
        contributor_codes = _numbered(contributors, contributor_index)
        new = cls(
            list(rows), runs, unit_index, unit_codes, contributors, logs, recorded, numbers, level_index,
            contributor_index, contributor_codes,
        )  # fmt: skip
        return new if base is None else base._extended(new)

    def _extended(self, tail: RunColumns) -> RunColumns:
        return RunColumns(
            tail.rows, self.runs + tail.runs, tail.unit_index, np.concatenate([self.unit_codes, tail.unit_codes]),
            self.contributors + tail.contributors, np.concatenate([self.logs, tail.logs]),
            {key: np.concatenate([self.recorded[key], tail.recorded[key]]) for key in _KEYS},
            {key: np.concatenate([self.numbers[key], tail.numbers[key]]) for key in _KEYS}, tail.level_index,
            tail.contributor_index, np.concatenate([self.contributor_codes, tail.contributor_codes]),
        )  # fmt: skip


def _n_units(codes: np.ndarray) -> int:
    return int(np.unique(codes).size)


def _first_appearance(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct codes in order of first appearance, and each code renumbered in that order."""
    distinct, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(distinct), dtype=np.intp)
    rank[order] = np.arange(len(distinct))
    return distinct[order], rank[inverse.reshape(-1)]


def unit_table(rows: Iterable[Run | Mapping], base: RunColumns | None = None) -> Table:
    """Screen the runs (positive metric, factors recorded for enough units) and reduce them to units. `base`: the
    columns of an earlier fit whose rows these rows begin with (RunColumns.of)."""
    columns = RunColumns.of(rows if isinstance(rows, list) else list(rows), base)
    notes: list[str] = []
    good = ~np.isnan(columns.logs)
    if not good.all():
        notes.append(f"{int((~good).sum())} run(s) left out: the metric is not a positive number")
    n_units = _n_units(columns.unit_codes[good])
    included: list[Factor] = []
    left_out: dict[str, tuple[str, str]] = {}
    for factor in FACTORS:
        n_recorded = _n_units(columns.unit_codes[good & columns.recorded[factor.key]])
        if not n_recorded:
            left_out[factor.key] = ("unrecorded", "not recorded for any unit")
        elif n_recorded < MIN_RECORDED_SHARE * n_units:
            left_out[factor.key] = (
                "unrecorded",
                f"recorded for {n_recorded} of {n_units} units; the model needs "
                f"{MIN_RECORDED_SHARE:.0%}, so it is left out",
            )
        else:
            included.append(factor)
    keep = good.copy()
    for factor in included:
        missing = good & ~columns.recorded[factor.key]
        if missing.any():
            notes.append(
                f"{factor.label} not recorded on {int(missing.sum())} run(s) of "
                f"{_n_units(columns.unit_codes[missing])} unit(s): those runs are left out"
            )
        keep &= columns.recorded[factor.key]
    kept = np.flatnonzero(keep)
    unit_numbers, codes = _first_appearance(columns.unit_codes[kept])
    runs_per_unit = np.bincount(codes, minlength=len(unit_numbers))
    # the same sums as adding each unit's logs in order (bincount adds its weights in order)
    log_values = (np.bincount(codes, weights=columns.logs[kept], minlength=len(unit_numbers)) / runs_per_unit).tolist()
    by_unit = kept[np.argsort(codes, kind="stable")]  # the kept runs, unit after unit, each in order
    ends = np.cumsum(runs_per_unit).tolist()
    spans = list(zip([0, *ends][:-1], ends, strict=True))
    keys = list(columns.unit_index)
    order = by_unit.tolist()
    runs, contributors = list(map(columns.runs.__getitem__, order)), list(map(columns.contributors.__getitem__, order))
    units = [
        Unit(keys[number], runs[a:b], frozenset(contributors[a:b]), log_value)
        for number, (a, b), log_value in zip(unit_numbers.tolist(), spans, log_values, strict=True)
    ]
    per_factor = {f.key: _unit_levels(f, columns, by_unit, spans, runs_per_unit) for f in included}
    _, contributor = np.unique(columns.contributor_codes[kept], return_inverse=True)
    memberships = np.zeros((len(units), int(contributor.max(initial=-1)) + 1), dtype=bool)
    memberships[codes, contributor.reshape(-1)] = True
    return Table(units, included, left_out, notes, len(kept), runs_per_unit, per_factor, memberships, columns)


def _unit_levels(factor: Factor, columns: RunColumns, by_unit: np.ndarray, spans: list, runs_per_unit) -> UnitLevels:
    """The factor over the units: `by_unit` are the kept runs, unit after unit (`spans`), each unit's in order."""
    numbers = columns.numbers[factor.key][by_unit]
    if factor.kind == "continuous":
        values = numbers.tolist()
        # math.fsum is exact, so each unit's mean is the same whatever the order of its runs
        sums = [math.fsum(values[a:b]) for a, b in spans]
        return UnitLevels(means=np.array(sums, dtype=float) / runs_per_unit)
    unit_of_value = np.repeat(np.arange(len(runs_per_unit)), runs_per_unit)
    if factor.kind == "bool":
        return UnitLevels(set_counts=np.bincount(unit_of_value[numbers], minlength=len(runs_per_unit)))
    distinct, level_codes = _first_appearance(numbers)  # the levels in order of first appearance, unit after unit
    levels = list(columns.level_index[factor.key])
    counts = np.bincount(unit_of_value * len(distinct) + level_codes, minlength=len(runs_per_unit) * len(distinct))
    return UnitLevels(
        levels=[levels[i] for i in distinct.tolist()], counts=counts.reshape(len(runs_per_unit), len(distinct))
    )
