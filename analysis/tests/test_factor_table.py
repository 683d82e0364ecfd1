"""The factor model's unit table (analysis.factor_model.data) counts each factor's levels per unit once, with numpy:
its references and design columns must be exactly (bit for bit) what walking every unit's runs one by one gives, on
odd inputs too (Decimal and numpy values, runs of unknown units, non-positive metrics, unrecorded levels). And the
aliasing screen (separate), which decides most columns on an orthonormal basis, keeps and aliases exactly the columns
its least-squares rule does, near the tolerance too."""

from __future__ import annotations

import math
import random
from collections import Counter
from decimal import Decimal

import numpy as np
import pytest

from analysis.factor_model import FACTORS, Run
from analysis.factor_model.data import Column, columns_of, level_of, reference_of
from analysis.factor_model.model import ALIAS_TOLERANCE, separate
from analysis.factor_model.table import unit_table


def odd_runs(seed: int) -> list[Run]:
    rng = random.Random(seed)
    runs = []
    for unit in range(rng.randint(3, 14)):
        for _ in range(rng.randint(1, 5)):
            value = rng.choice([rng.uniform(1e3, 1e9), Decimal(str(rng.uniform(1, 9))), np.float64(rng.uniform(1, 2)),
                                0.0, -1.0, float("nan"), rng.uniform(1e3, 1e9)])  # fmt: skip
            runs.append(Run(
                unit=None if unit == 0 else f"u{unit}", contributor=f"c{rng.randint(0, 3)}", value=value,
                link_limited=rng.choice([None, True, False, False]), link_below_capability=rng.choice([True, False]),
                spare_fraction=rng.choice([0.07, 0.28, Decimal("0.1"), None]), throttled=rng.choice([False, True]),
                percentage_used=rng.choice([1.0, 3.0, 80.0]), firmware=rng.choice(["2.1", "1.4", "0.9", None]),
                host_cpu=rng.choice(["Xeon", "EPYC"]), kernel="6.8", scheduler=rng.choice(["none", "mq-deadline"]),
            ))  # fmt: skip
    return runs


def walked(factor, units) -> tuple[object, list[tuple[object, list[float]]]]:
    """The reference and columns (level, x) of one factor, from every unit's runs one by one."""
    values = [[level_of(factor, r) for r in u.runs] for u in units]
    if factor.kind == "continuous":
        means = [math.fsum(float(v) for v in vs) / len(vs) for vs in values]
        reference = float(np.median(means))
        x = [(m - reference) / factor.step for m in means]
        return reference, [(None, x)] if any(abs(v) >= 0.5 for v in x) else []
    if factor.kind == "bool":
        x = [math.fsum(bool(v) for v in vs) / len(vs) for vs in values]
        return False, [(None, x)] if max(x) > min(x) else []
    counts = [Counter(vs) for vs in values]
    by_units = Counter(level for c in counts for level in c)
    by_runs = sum(counts, Counter())
    reference = min(by_units, key=lambda lv: (-by_units[lv], -by_runs[lv], str(lv)))
    columns = []
    for level in sorted(set(by_units) - {reference}, key=str):
        x = [c.get(level, 0) / len(vs) for c, vs in zip(counts, values, strict=True)]
        if max(x) > min(x):
            columns.append((level, x))
    return reference, columns


@pytest.mark.parametrize("seed", range(25))
def test_the_counted_table_is_the_runs_walked_one_by_one(seed):
    runs = odd_runs(seed)
    table = unit_table(runs)
    positive = [r for r in runs if not isinstance(r.value, float) or (math.isfinite(r.value) and r.value > 0)]
    positive = [r for r in positive if float(r.value) > 0 and math.isfinite(float(r.value))]
    assert sum(len(u.runs) for u in table.units) == table.n_runs <= len(positive)
    for unit in table.units:
        logs = [math.log(float(r.value)) for r in unit.runs]
        assert unit.log_value == sum(logs) / len(logs)
        assert unit.contributors == frozenset(r.contributor for r in unit.runs)
        assert all(level_of(f, r) is not None for f in table.included for r in unit.runs)
    assert [u.id for u in table.units] == list(dict.fromkeys(r.unit for u in table.units for r in u.runs))
    assert table.memberships.sum(axis=1).tolist() == [len(u.contributors) for u in table.units]
    assert table.memberships.shape[1] == len({c for u in table.units for c in u.contributors})
    for factor in table.included:
        reference, expected = walked(factor, table.units)
        assert reference_of(factor, table) == reference
        got = [(c.level, c.x.tolist()) for c in columns_of(factor, reference, table)]
        assert got == expected  # exact: the same floats, not approximately
    assert {f.key for f in table.included} | set(table.left_out) == {f.key for f in FACTORS}


def separated_by_least_squares(columns: list[Column], n_units: int) -> list[Column]:
    """The aliasing rule as defined: each column against the least squares on the intercept and the kept columns."""
    kept, basis = [], np.ones((n_units, 1))
    for column in columns:
        coef, *_ = np.linalg.lstsq(basis, column.x, rcond=None)
        spread = np.linalg.norm(column.x - column.x.mean())
        if np.linalg.norm(column.x - basis @ coef) > ALIAS_TOLERANCE * max(spread, 1.0):
            kept.append(column)
            basis = np.column_stack([basis, column.x])
        else:
            column.aliased_with = [k for k, b in zip(kept, coef[1:], strict=True) if abs(b) > 1e-6]
    return kept


@pytest.mark.parametrize("seed", range(30))
def test_separate_keeps_and_aliases_exactly_the_columns_the_least_squares_rule_does(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 60))
    xs = [rng.choice([0.0, 0.25, 0.5, 1.0], size=n) for _ in range(int(rng.integers(1, 8)))]
    for _ in range(int(rng.integers(1, 8))):  # combinations of earlier columns, exact or almost
        a, b = rng.integers(0, len(xs), size=2)
        nudge = rng.choice([0.0, 0.0, 1e-13, 1e-10, 1e-9, 1e-8, 1e-6, 1e-3]) * rng.standard_normal(n)
        xs.append(
            rng.choice([1.0, -2.0, 0.5]) * xs[a] + rng.choice([0.0, 1.0]) * xs[b] + rng.choice([0.0, 3.0]) + nudge
        )
    xs.append(np.ones(n))  # the intercept again
    factor = FACTORS[0]
    ours = [Column(factor, i, x, x != 0) for i, x in enumerate(xs)]
    theirs = [Column(factor, i, x.copy(), x != 0) for i, x in enumerate(xs)]
    kept = [c.level for c in separate(ours, n)]
    assert kept == [c.level for c in separated_by_least_squares(theirs, n)]
    assert [[k.level for k in c.aliased_with] for c in ours] == [[k.level for k in c.aliased_with] for c in theirs]
    assert len(kept) < len(xs)  # some column was aliased: the test saw both outcomes


def same_table(a, b) -> None:
    assert (a.included, a.left_out, a.notes, a.n_runs) == (b.included, b.left_out, b.notes, b.n_runs)
    assert [(u.id, u.runs, u.contributors, u.log_value) for u in a.units] == [
        (u.id, u.runs, u.contributors, u.log_value) for u in b.units
    ]
    assert a.memberships.tolist() == b.memberships.tolist()
    for key, levels in a.levels.items():
        other = b.levels[key]
        assert levels.levels == other.levels
        for name in ("means", "set_counts", "counts"):
            mine, theirs = getattr(levels, name), getattr(other, name)
            assert (mine is None and theirs is None) or mine.tolist() == theirs.tolist()


@pytest.mark.parametrize("seed", range(25))
def test_a_table_built_on_an_earlier_fits_columns_is_the_table_of_every_run(seed):
    runs = odd_runs(seed)
    rng = random.Random(seed)
    first = runs[: rng.randint(0, len(runs))]
    base = unit_table(first).run_columns
    same_table(unit_table(runs, base), unit_table(runs))
    other = [*first[1:], *first[:1], *runs[len(first) :]]  # rows that do not begin with the base's
    same_table(unit_table(other, base), unit_table(other))
