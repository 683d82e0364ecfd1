"""Fit the factor model: aliasing, ordinary least squares on unit means (statsmodels), variance shares."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping

import numpy as np

from analysis.factor_model.data import FACTORS, Column, Factor, Run, Table, columns_of, reference_of
from analysis.factor_model.results import Contributions, Effect, Estimate, FactorFit, FactorResult, UnitFigures
from analysis.factor_model.table import unit_table

# A column whose part not explained by the earlier columns is below this share of its own spread is aliased.
ALIAS_TOLERANCE = 1e-9
CONFIDENCE = 0.95


def separate(columns: list[Column], n_units: int) -> list[Column]:
    """Keep the columns, in priority order, that add something the intercept and the kept ones do not span; each
    other column gets `aliased_with` (the kept columns it is a combination of). Returns the kept columns.

    A column far outside the span (its projection's residual a thousand times the tolerance) is kept on that
    residual, against an orthonormal basis of the kept columns (projected twice: orthogonal to working precision);
    any other column is decided by the least squares on the kept columns themselves, as the tolerance is defined."""
    kept: list[Column] = []
    basis = np.ones((n_units, len(columns) + 1))  # the intercept, then the kept columns (the first k + 1 used)
    orthonormal = np.zeros_like(basis)
    orthonormal[:, 0] = 1 / math.sqrt(n_units) if n_units else 0.0
    for column in columns:
        k = len(kept) + 1
        tolerance = ALIAS_TOLERANCE * max(float(np.linalg.norm(column.x - column.x.mean())), 1.0)
        q = orthonormal[:, :k]
        residual = column.x - q @ (q.T @ column.x)
        residual -= q @ (q.T @ residual)
        if np.linalg.norm(residual) > 1e3 * tolerance:
            kept.append(column)
            basis[:, k] = column.x
            orthonormal[:, k] = residual / np.linalg.norm(residual)
            continue
        coef, *_ = np.linalg.lstsq(basis[:, :k], column.x, rcond=None)
        if np.linalg.norm(column.x - basis[:, :k] @ coef) > tolerance:
            kept.append(column)
            basis[:, k] = column.x
            orthonormal[:, : k + 1] = np.linalg.qr(basis[:, : k + 1])[0]  # barely outside: orthonormal from scratch
        else:
            column.aliased_with = [other for other, b in zip(kept, coef[1:], strict=True) if abs(b) > 1e-6]
    return kept


def variance_shares(x: np.ndarray, beta: np.ndarray, groups: list[list[int]]) -> list[float]:
    """Each group's share of the explained variance: the covariance of its part of the fit (its columns times their
    coefficients) with the whole fit, over the variance of the fit (Pratt's product measure). The shares add up to
    1; a factor with no effect has about none, however much it moves with others; a negative share is a factor
    that offsets others on the same units. No refits."""
    fitted = x[:, 1:] @ beta[1:]
    total = float(((fitted - fitted.mean()) ** 2).sum())
    if total <= 0:
        return [0.0] * len(groups)
    parts = [x[:, group] @ beta[group] for group in groups]
    return [float(((part - part.mean()) * (fitted - fitted.mean())).sum()) / total for part in parts]


def _count(away: np.ndarray, member: np.ndarray) -> tuple[int, int]:
    """The units `away` marks, and the contributors behind them."""
    return int(np.count_nonzero(away)), int(np.count_nonzero(member[away].any(axis=0)))


def _constant_reason(factor: Factor, reference: object, table: Table) -> str:
    """Why a recorded factor has no column; it speaks of the units in the fit only (runs left out may differ)."""
    if factor.kind == "continuous":
        return f"every unit in the fit within ±{factor.step / 2:g} of the median, {reference:g}"
    if factor.kind == "bool":
        flagged = bool(table.levels[factor.key].set_counts.any())
        return f"{'set on every run' if flagged else 'not set on any run'} of the {len(table.units)} units in the fit"
    return f"{reference} on every run of the {len(table.units)} units in the fit"


def fit(
    rows: Iterable[Run | Mapping],
    metric: str = "metric",
    figures_for: Collection | None = None,
    base: FactorFit | None = None,
) -> FactorFit:
    """The factor model of one drive model and one headline metric: log(metric) on the recorded factors, one row
    per unit. Returns effects only when there are at least two more units than parameters. `figures_for` limits the
    per-unit figures (FactorFit.units) to those unit keys; None: every unit. `base`: a fit of rows these rows begin
    with (the same row objects: a held unit's rows after the public ones), whose reading of them is reused."""
    table = unit_table(rows, base.run_columns if base is not None else None)
    units = table.units
    n = len(units)
    results: dict[str, FactorResult] = {}
    for factor in FACTORS:
        if factor.key in table.left_out:
            status, reason = table.left_out[factor.key]
            results[factor.key] = FactorResult(factor.key, factor.label, status, reason)
    references = {f.key: reference_of(f, table) for f in table.included} if units else {}
    columns: list[Column] = []
    for factor in table.included:
        cols = columns_of(factor, references[factor.key], table)
        if not cols:
            reason = _constant_reason(factor, references[factor.key], table)
            results[factor.key] = FactorResult(
                factor.key, factor.label, "constant", reason, reference=references[factor.key]
            )
        columns.extend(cols)
    kept = separate(columns, n)
    member = table.memberships
    contributors = member.shape[1]
    out = FactorFit(metric, "fitted", "", n, table.n_runs, contributors, notes=table.notes, reference=references)
    out.run_columns, out.unit_levels = table.run_columns, table.levels
    p = 1 + len(kept)
    if n < p + 2:
        out.status = "too_few_units"
        out.reason = f"too few units: {n} for {p} parameters (the model needs at least {p + 2})"
        out.factors = [results.get(f.key) or FactorResult(f.key, f.label, "not_fitted", out.reason) for f in FACTORS]
        return out

    from scipy.special import stdtrit
    from statsmodels.regression.linear_model import OLS

    y = np.array([u.log_value for u in units])
    x = np.column_stack([np.ones(n)] + [c.x for c in kept])
    res = OLS(y, x).fit()
    beta, cov = np.asarray(res.params), np.asarray(res.cov_params())
    t = float(stdtrit(res.df_resid, 0.5 + CONFIDENCE / 2))
    se = np.sqrt(np.maximum(np.diag(cov), 0))
    low, high = beta - t * se, beta + t * se
    tss = float(((y - y.mean()) ** 2).sum())
    out.r_squared = 1 - float(res.ssr) / tss if tss > 0 else None  # None: every unit the same
    out.df_resid = int(res.df_resid)
    out.reference_level = Estimate(math.exp(beta[0]), math.exp(low[0]), math.exp(high[0]))

    group_keys = [f.key for f in table.included if any(c.factor is f for c in kept)]
    groups = [[j for j, c in enumerate(kept, start=1) if c.factor.key == key] for key in group_keys]
    shares = dict(zip(group_keys, variance_shares(x, beta, groups), strict=True))
    effects: dict[int, Effect] = {}
    for j, column in enumerate(kept, start=1):
        n_u, n_c = _count(column.away, member)
        moves_with = [c.name for c in columns if column in c.aliased_with]
        effects[id(column)] = Effect(
            column.factor.key, column.name, column.level, "estimated" if n_u >= 2 else "indicative",
            math.exp(beta[j]), math.exp(low[j]), math.exp(high[j]), n_u, n_c, moves_with, column.factor.per,
        )  # fmt: skip
    for column in columns:
        if column not in kept:
            n_u, n_c = _count(column.away, member)
            names = [c.name for c in column.aliased_with]
            effects[id(column)] = Effect(
                column.factor.key, column.name, column.level, "not_separable", None, None, None, n_u, n_c, names
            )
    for factor in table.included:
        if factor.key in results:
            continue
        own = [c for c in columns if c.factor is factor]
        away = np.any([c.away for c in own], axis=0)
        n_u, n_c = _count(away, member)
        factor_effects = [effects[id(c)] for c in own]
        statuses = {e.status for e in factor_effects}
        status = next(s for s in ("estimated", "indicative", "not_separable") if s in statuses)
        share, reference = shares.get(factor.key), references[factor.key]
        results[factor.key] = FactorResult(
            factor.key, factor.label, status, "", share, reference, n_u, n_c, factor_effects
        )
    out.factors = [results[f.key] for f in FACTORS]

    _unit_figures(out, units, kept, effects, x, y, beta, cov, low, high, t, figures_for)
    return out


def _unit_figures(out: FactorFit, units, kept, effects, x, y, beta, cov, low, high, t, figures_for) -> None:
    """Each unit's normalized figure (its observed one ÷ the effects of its non-reference levels, with the delta
    method's interval) and each column's contribution to it, computed for all units at once."""
    xf = x[:, 1:]
    own, bound_a, bound_b = xf * beta[1:], xf * low[1:], xf * high[1:]
    value, lo, hi = np.exp(own), np.exp(np.minimum(bound_a, bound_b)), np.exp(np.maximum(bound_a, bound_b))
    log_norm = y - own.sum(axis=1)
    half = t * np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", xf, cov[1:, 1:], xf), 0.0))
    norm, norm_low, norm_high = np.exp(log_norm), np.exp(log_norm - half), np.exp(log_norm + half)
    away = np.column_stack([column.away for column in kept]) if kept else np.zeros((len(units), 0), dtype=bool)
    contributions = Contributions(kept, [effects[id(column)] for column in kept], value, lo, hi, away)
    chosen = [i for i, unit in enumerate(units) if figures_for is None or unit.id in figures_for]
    normalized = zip(norm[chosen].tolist(), norm_low[chosen].tolist(), norm_high[chosen].tolist(), strict=True)
    for i, estimate in zip(chosen, normalized, strict=True):
        unit = units[i]
        out.units[unit.id] = UnitFigures(unit, math.exp(y[i]), Estimate(*estimate), contributions, i)
