"""The factor model's per-unit figures, written by the refit task so pages, the API and exports read them.

`public_figures` stores, for every unit of a drive's public fit of one headline metric, its normalized figure with
its interval and the unit's own part of the explanation's metric entry (analysis.explain_model.unit_model; what is
the fit's, its units and reference level, is on the fit's FactorFitSummary); `held_figures` does the same for
a held submission of the drive, fitted with the public units (nothing of a held unit enters the public fit). Each
row keeps the digest of the runs the fit read (analysis.fit_inputs.inputs_digest): a page that would read other runs
now says the figures are being refreshed instead of showing old ones or fitting inline.

Called from their snapshot of the data, before the drive's row lock is taken to write the rows: `public_figures` by
analysis.factor_effects.refresh_factor_effects (every change of the drive's public data), `held_figures` by
analysis.factor_effects.refresh_held_figures (a submission held, or a held one's page finding its figures stale).
"""

from __future__ import annotations

from operator import attrgetter
from typing import NamedTuple

from analysis.explain_model import stored_entries, unit_model
from analysis.factor_model import FactorFit, fit
from analysis.factor_rows import DriveRows, held_rows
from analysis.fit_inputs import inputs_digest, unit_key, unit_number
from analysis.headline import BY_KEY, HEADLINES
from analysis.models import DriveModel, FactorFitSummary, TestRun
from analysis.selectors import pts_q
from submissions.models import Submission, SubmissionStatus


class FiguresRow(NamedTuple):
    """One FactorUnitFigures row as the refit writes it: its column values, made thousands at a time, so without a
    model instance each (a fifth of the rows' making). `fit` is the public fit's summary, saved after the row is made
    (its id is read at the write); None for a held submission's own fit."""

    drive_model_id: int
    fit: FactorFitSummary | None
    submission_id: object
    metric: str
    unit_key: int
    normalized: float | None
    normalized_low: float | None
    normalized_high: float | None
    figures: dict
    input_digest: str
    fitted_at: object

    def columns(self) -> dict:
        """The row's values by column (attribute) name, the fit's id read now."""
        values = self._asdict()
        fit = values.pop("fit")
        return {**values, "fit_id": fit.pk if fit is not None else None}


def _row(drive_model, fitted: FactorFit, metric: str, key: object, digest: str, now, fit=None, submission=None):
    model = unit_model(fitted, BY_KEY[metric], key)
    figures = fitted.units.get(key) if model.normalized else None
    normalized = figures.normalized if figures else None  # full precision here; the page's are rounded
    return FiguresRow(
        drive_model.pk,
        fit,
        submission.pk if submission is not None else None,
        metric,
        unit_number(key),
        normalized and normalized.value,
        normalized and normalized.low,
        normalized and normalized.high,
        model.stored(of_a_fit=fit is not None),
        digest,
        now,
    )


def public_figures(
    drive_model: DriveModel, fitted: FactorFit, found: DriveRows, summary: FactorFitSummary, now, digest: str
) -> list:
    """One row per unit of the public fit's rows (a unit the fit left out gets its note, no figure); `digest`: the
    inputs_digest of the runs the rows were made of (found.runs). The rows _row would make, thousands at a time:
    the entries from stored_entries, the columns common to every row read once."""
    metric, drive_id = summary.metric, drive_model.pk
    keys = list(dict.fromkeys(map(attrgetter("unit"), found.rows[metric])))
    entries = stored_entries(fitted, BY_KEY[metric], keys)
    # as _row: the unit's normalized figure where unit_models gives it one (a fit with a reference level)
    units = fitted.units if fitted.status == "fitted" and fitted.reference_level is not None else {}
    rows = []
    for key, entry in zip(keys, entries, strict=True):
        figures = units.get(key)
        normalized = figures.normalized if figures else None  # full precision here; the page's are rounded
        value, low, high = (normalized.value, normalized.low, normalized.high) if normalized else (None, None, None)
        rows.append(FiguresRow(drive_id, summary, None, metric, unit_number(key), value, low, high, entry, digest, now))
    return rows


def held_figures(
    drive_model: DriveModel,
    public: list[dict],
    now,
    found: DriveRows | None = None,
    fits: dict | None = None,
    submissions=None,
) -> list:
    """Per held submission of the drive (of `submissions`, when given) and headline metric it measured: its unit
    fitted with the public units. `public` is the drive's public runs as the public fit read them
    (analysis.factor_rows.public_runs), `found` their rows (rows_of) and `fits` the public fits per metric, which the
    held rows and fits start from; only the held unit's own figures are computed."""
    out = []
    held = Submission.objects.filter(status=SubmissionStatus.HELD, test_runs__drive_model=drive_model).distinct()
    if submissions is not None:
        held = held.filter(pk__in=[submission.pk for submission in submissions])
    for submission in held.order_by("pk"):
        rows_found, not_public = held_rows(submission, drive_model, public, found)
        if not not_public:
            continue
        runs = TestRun.objects.filter(pts_q(), submission=submission, drive_model=drive_model)
        keys = {run.test: unit_key(run.unit_id, run.pk) for run in runs}
        digest = inputs_digest(rows_found.runs)  # the public runs, then the held submission's own
        for headline in HEADLINES:
            rows = rows_found.rows.get(headline.key, [])
            key = keys.get(headline.test)
            if key is None or not any(row.unit == key for row in rows):
                continue
            fitted = fit(rows, headline.label, figures_for={key}, base=(fits or {}).get(headline.key))
            out.append(_row(drive_model, fitted, headline.key, key, digest, now, submission=submission))
    return out
