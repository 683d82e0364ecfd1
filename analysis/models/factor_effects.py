"""The factor model's effects per drive model and headline metric (analysis.factor_model), stored when the drive's
public data changes so pages and exports read rows, never fit."""

from django.db import models
from django.db.models import Q

from analysis.models.hardware import DriveModel
from nvmedb.json_field import JSONField


class EffectStatus(models.TextChoices):
    ESTIMATED = "estimated", "estimated"  # two units or more at the level
    INDICATIVE = "indicative", "indicative"  # one unit at the level
    NOT_SEPARABLE = "not_separable", "not separable"  # the earlier factors' columns already span it
    CONSTANT = "constant", "constant"  # every unit in the fit at one level
    UNRECORDED = "unrecorded", "unrecorded"  # recorded for too few units to enter the model
    NOT_FITTED = "not_fitted", "not fitted"  # varies, but the fit has too few units for its factors


class FactorFitSummary(models.Model):
    """One fit: a drive model's headline metric on its recorded factors, one row per unit."""

    drive_model = models.ForeignKey(DriveModel, on_delete=models.CASCADE, related_name="factor_fits")
    metric = models.CharField(max_length=32, help_text="A headline key (analysis.headline).")
    status = models.CharField(max_length=16, help_text="fitted, or too_few_units (no effects then).")
    reason = models.CharField(max_length=300, blank=True)
    n_units = models.PositiveIntegerField()
    n_runs = models.PositiveIntegerField()
    n_contributors = models.PositiveIntegerField()
    r_squared = models.FloatField(null=True, blank=True, help_text="Of the unit rows; empty if every unit is equal.")
    reference_value = models.FloatField(
        null=True, blank=True, help_text="The metric of a typical unit at the reference conditions (capable link, "
        "modal firmware, no throttling, median spare and wear), SI units; empty when not fitted or fitted earlier.",
    )  # fmt: skip
    reference_low = models.FloatField(null=True, blank=True, help_text="95 % interval of the reference level.")
    reference_high = models.FloatField(null=True, blank=True)
    notes = JSONField(default=list, blank=True, help_text="Runs left out and what could not be decided.")
    fitted_at = models.DateTimeField()

    class Meta:
        ordering = ["drive_model", "metric"]
        constraints = [models.UniqueConstraint(fields=["drive_model", "metric"], name="factor_fit_once_per_metric")]

    def __str__(self) -> str:
        return f"{self.metric}: {self.status} ({self.n_units} units)"


class FactorEffect(models.Model):
    """One effect of one fit: a flag, a continuous factor per its step, or a category level against the reference
    level, as a ratio of the metric with its 95 % interval. A factor without effects (constant, unrecorded) is one
    row with no ratio and the reason in `note`, and so is a factor that varies in a fit with too few units
    (not_fitted)."""

    drive_model = models.ForeignKey(DriveModel, on_delete=models.CASCADE, related_name="factor_effects")
    fit = models.ForeignKey(FactorFitSummary, on_delete=models.CASCADE, related_name="effects")
    metric = models.CharField(max_length=32, help_text="A headline key (analysis.headline).")
    factor = models.CharField(max_length=32, help_text="A factor key (analysis.factor_model.FACTORS).")
    level = models.CharField(max_length=200, blank=True, help_text="The category level; blank for other factors.")
    label = models.CharField(max_length=260, help_text="The factor (and level) in words.")
    per = models.CharField(max_length=64, blank=True, help_text="A continuous factor: the change the ratio is for.")
    reference = models.CharField(max_length=200, blank=True, help_text="The reference level or value.")
    ratio = models.FloatField(null=True, blank=True, help_text="The metric at this level ÷ at the reference.")
    ci_low = models.FloatField(null=True, blank=True, help_text="95 % interval of the ratio: low end.")
    ci_high = models.FloatField(null=True, blank=True, help_text="95 % interval of the ratio: high end.")
    variance_share = models.FloatField(null=True, blank=True, help_text="The factor's share of explained variance.")
    n_units = models.PositiveIntegerField(default=0, help_text="Units at this level (away from the reference).")
    n_contributors = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=EffectStatus.choices)
    note = models.CharField(max_length=500, blank=True)
    fitted_at = models.DateTimeField()

    class Meta:
        ordering = ["drive_model", "metric", "factor", "level"]
        constraints = [
            models.UniqueConstraint(fields=["drive_model", "metric", "factor", "level"], name="factor_effect_once"),
        ]

    def __str__(self) -> str:
        return f"{self.metric} {self.label}: {self.status}"


class FactorUnitFigures(models.Model):
    """The factor model's figures for one unit and headline metric, written by the refit task
    (analysis.factor_figures) so that a page view, the API and the exports read them and never fit: the unit's
    normalized figure with its interval, and the rest of the explanation's metric entry (analysis.explain_model:
    MetricModel.from_row puts it together with what is the fit's)."""

    # No index of its own (the lookup index starts with it) and no constraint: a public row's drive is its fit's; a
    # row goes with its drive or its fit through the ORM's cascade, and the refit writes a fit's rows in the
    # transaction that saves the fit. Each constraint's check of a refit's thousands of rows was ~10 ms of its commit.
    drive_model = models.ForeignKey(
        DriveModel, on_delete=models.CASCADE, related_name="factor_unit_figures", db_index=False, db_constraint=False
    )
    fit = models.ForeignKey(
        FactorFitSummary, on_delete=models.CASCADE, null=True, blank=True, related_name="unit_figures",
        db_constraint=False,
        help_text="The drive's public fit; empty for a held unit's own fit (the public units plus it).",
    )  # fmt: skip
    submission = models.ForeignKey(
        "submissions.Submission", on_delete=models.CASCADE, null=True, blank=True, related_name="factor_unit_figures",
        help_text="The held submission whose unit was fitted with the public ones; empty for the public fit.",
        db_index=False,  # indexed where set (Meta): a refit writes thousands of public rows without one
    )  # fmt: skip
    metric = models.CharField(max_length=32, help_text="A headline key (analysis.headline).")
    unit_key = models.BigIntegerField(help_text="The physical unit's id, or minus the run's id for a run without one.")
    normalized = models.FloatField(null=True, blank=True, help_text="At the reference conditions, SI units.")
    normalized_low = models.FloatField(null=True, blank=True, help_text="95 % interval of the normalized figure.")
    normalized_high = models.FloatField(null=True, blank=True)
    figures = JSONField(
        default=dict, help_text="The unit's own part of the explanation's metric entry: beside the normalized columns "
        "and, in a public row, its fit's units and reference level (analysis.explain_model.MetricModel).",
    )  # fmt: skip
    input_digest = models.CharField(
        max_length=64, help_text="SHA-256 of the runs the fit read (analysis.fit_inputs): a page compares it."
    )
    fitted_at = models.DateTimeField()

    class Meta:
        ordering = ["drive_model", "metric", "unit_key"]
        indexes = [
            models.Index(fields=["drive_model", "metric", "unit_key"], name="factor_unit_figures_lookup"),
            models.Index(fields=["submission"], condition=Q(submission__isnull=False), name="factor_unit_figures_held"),
        ]

    def __str__(self) -> str:
        return f"{self.metric} unit {self.unit_key}: {self.normalized}"
