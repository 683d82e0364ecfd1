"""The factor_effects table: what explains each drive model's spread, one row per effect of the factor model
(analysis.factor_model, stored by analysis.factor_effects when the drive's public data changes). Registered in
datasets.tables.TABLES; run-level filters keep the drives with a matching run, like the drives table."""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.models import FactorEffect
from reports.table_types import Column


def _c(name, type_, description, source=None, unit=""):
    return Column(name=name, type=type_, description=description, source=source or name, unit=unit)


FACTOR_EFFECT_COLUMNS = (
    _c("drive_slug", "string", "The drive model's stable identifier (used in URLs).", "drive_model__slug"),
    _c("drive_name", "string", "Canonical model name.", "drive_model__name"),
    _c("vendor", "string", "Vendor name.", "drive_model__vendor__name"),
    _c("metric", "string", "The headline metric fitted (a key of the runs table's headline metrics, e.g. "
       "bw_1m_read); the model is log(metric) of one row per unit on the recorded factors."),
    _c("factor", "string", "link_limited, link_below_capability, throttled, spare_fraction, percentage_used, "
       "firmware, host_cpu, kernel or scheduler."),
    _c("level", "string", "For firmware, host CPU, kernel and scheduler: the level compared with the reference "
       "level; empty for the other factors."),
    _c("label", "string", "The factor (and level) in words."),
    _c("reference", "string", "The reference the ratio is against: the modal level of a category, the median unit "
       "of a continuous factor, False for a flag."),
    _c("per", "string", "For a continuous factor, the change the ratio is quoted for (e.g. per +10 points)."),
    _c("ratio", "number", "The metric at this level ÷ at the reference (exp of the coefficient); empty when the "
       "effect is not estimated (not separable, constant, unrecorded)."),
    _c("ci_low", "number", "Low end of the ratio's 95 % interval (t, the fit's residual degrees of freedom)."),
    _c("ci_high", "number", "High end of the ratio's 95 % interval."),
    _c("variance_share", "number", "The factor's share of the explained variance of log(metric) across units "
       "(Pratt's measure: the fitted factors' shares add up to 1, a negative one offsets others); the same on "
       "each level of a factor."),
    _c("n_units", "integer", "Units at this level (away from the reference)."),
    _c("n_contributors", "integer", "Contributors of those units."),
    _c("status", "string", "estimated (2 units or more at the level), indicative (1 unit), not_separable (the "
       "earlier factors' levels already span it), constant (every unit at one level), unrecorded (recorded for "
       "fewer than 75 % of the units) or not_fitted (it varies, but the fit has too few units: see the note)."),
    _c("note", "string", "Caveats: 1 unit — indicative; the levels it is not separable from; why a factor is "
       "constant, unrecorded or not fitted."),
    _c("fitted_at", "datetime", "When the drive's effects were last fitted (UTC)."),
)  # fmt: skip


def factor_effects(*, trials_of: int | None = None) -> QuerySet:
    """Every stored effect: they are fitted on public PTS runs only, trials never (whoever asks)."""
    return FactorEffect.objects.all()


def table(table_class):
    return table_class(
        "factor_effects",
        "Factor effects",
        "One row per effect of the factor model of each drive model and headline metric: how much a recorded "
        "condition (link, throttling, spare area, wear, firmware, host CPU, kernel, scheduler) moves the metric, "
        "as a ratio with its 95 % interval and the units behind it; a factor without an estimate is one row with "
        "its status and reason. Fitted on public PTS runs, one row per unit (docs/methodology.md, Factor model).",
        FACTOR_EFFECT_COLUMNS,
        factor_effects,
        ordering=("drive_model_id", "metric", "factor", "level"),
        runs_key=("drive_model_id", "drive_model_id"),
    )
