"""Fit the factor model (analysis.factor_model) on a drive model's public runs and store its effects.

`refresh_factor_effects` reads the drive's public PTS runs (analysis.factor_rows) in one snapshot, fits every
headline metric holding no lock, then replaces the drive's FactorEffect, FactorFitSummary and public units'
FactorUnitFigures rows in one short transaction under the drive model's row lock, unless a fit of the same or newer
data was written meanwhile (the drive's `factors_version` records the `data_version` its stored fit read).

`refresh_held_figures` does the same for one held submission's units, each fitted with the drive's public units. It
runs when a submission is held, and when a page of a held submission finds its stored figures fitted on other rows
than the drive's current ones (analysis.explain_model): not on every change of the drive's public data, which would
refit every held submission of the drive each time (half of a refit's time with a dozen held), for pages that only
their contributor and staff open.

It runs as a Celery task (analysis.tasks.refresh_factor_effects) queued after the commit of every transaction that
refreshes the drive's aggregates (publish, withdraw, hide, approve, re-derive: analysis.services.refresh_aggregates),
never inside it: the write path does not wait for a fit. numpy, scipy and statsmodels are imported by the fit only,
so a web process that reads the rows never loads them.
"""

from __future__ import annotations

import logging

import orjson
from django.db import connection
from django.utils import timezone
from psycopg.types.json import Jsonb

from analysis.fit_inputs import inputs_digest
from analysis.models import DriveModel, FactorEffect, FactorFitSummary, FactorUnitFigures
from nvmedb.bulk import insert_rows, insert_values
from nvmedb.collector import cycle_collector_paused
from nvmedb.durability import derived_rows_transaction, snapshot_transaction
from submissions.models import Submission, SubmissionStatus

logger = logging.getLogger(__name__)


def _note(effect) -> str:
    """The effect's caveats: one unit behind it; levels of other factors that move with it (theirs, if kept)."""
    parts = ["1 unit — indicative"] if effect.status == "indicative" else []
    if effect.moves_with:
        parts.append("not separable from " + ", ".join(effect.moves_with))
    return "; ".join(parts)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def effect_rows(drive_model: DriveModel, fitted, summary: FactorFitSummary, now) -> list[FactorEffect]:
    """FactorEffect rows of one fit: one per effect; one per factor that has none (constant, unrecorded, or not
    fitted: it varies, but the fit has too few units)."""
    rows = []
    for result in fitted.factors:
        common = {"drive_model": drive_model, "fit": summary, "metric": fitted.metric, "factor": result.key,
                  "fitted_at": now}  # fmt: skip
        if result.effects:
            for effect in result.effects:
                rows.append(
                    FactorEffect(
                        **common,
                        level="" if effect.level is None else str(effect.level)[:200],
                        label=effect.label[:260],
                        per=effect.per,
                        reference=_text(result.reference)[:200],
                        ratio=effect.ratio,
                        ci_low=effect.low,
                        ci_high=effect.high,
                        variance_share=result.share,
                        n_units=effect.n_units,
                        n_contributors=effect.n_contributors,
                        status=effect.status,
                        note=_note(effect)[:500],
                    )
                )
        elif result.status in ("constant", "unrecorded", "not_fitted"):
            rows.append(
                FactorEffect(
                    **common,
                    label=result.label,
                    reference=_text(result.reference)[:200],
                    status=result.status,
                    note=result.reason[:500],
                )
            )
    return rows


def refresh_factor_effects(drive_model: DriveModel, *, only_if_changed: bool = False) -> int | None:
    """Refit every headline metric of `drive_model` on its public runs and replace its effect rows. Returns the
    number of effect rows written; None when nothing was written: `only_if_changed` and the stored fit already read
    the drive's current data (its `factors_version` is the drive's `data_version`: a refit queued by a change an
    earlier one covered), or a refit of newer data wrote first.

    The fit reads one snapshot of the committed data (REPEATABLE READ on PostgreSQL; a SQLite transaction is one) and
    holds no lock while it fits; only the write takes the drive's row lock, so a publish or withdraw of the drive never
    waits for a fit."""
    versions = DriveModel.objects.filter(pk=drive_model.pk).values_list("data_version", "factors_version").first()
    if versions is None:
        return 0  # deleted since
    if only_if_changed and _covered(*versions):
        return None
    with snapshot_transaction():
        data_version = DriveModel.objects.filter(pk=drive_model.pk).values_list("data_version", flat=True).first()
        if data_version is None:
            return 0
        with cycle_collector_paused():
            fits = _fit_drive(drive_model, timezone.now())
    with derived_rows_transaction():  # a crash of the database can only leave the drive's fit behind its data
        locked = DriveModel.objects.select_for_update(no_key=True).filter(pk=drive_model.pk)
        stored = locked.values_list("factors_version", flat=True).first()
        if stored is not None and (stored > data_version or only_if_changed and stored == data_version):
            return None  # another refit wrote a fit of these data or of newer ones meanwhile
        FactorEffect.objects.filter(drive_model=drive_model).delete()
        FactorFitSummary.objects.filter(drive_model=drive_model).delete()  # and their units' figures (cascade)
        # a held submission's figures are refit on their own (refresh_held_figures); a submission no longer held
        # (approved, rejected, withdrawn) keeps none
        FactorUnitFigures.objects.filter(drive_model=drive_model, submission__isnull=False).exclude(
            submission__status=SubmissionStatus.HELD
        ).delete()
        effects, figures = [], []
        for _summary, summary_effects, unit_figures in fits:
            effects.extend(summary_effects)
            figures.extend(unit_figures)
        insert_rows([summary for summary, _effects, _figures in fits])  # their ids set, in one COPY
        _insert_figures(figures)
        DriveModel.objects.filter(pk=drive_model.pk).update(factors_version=data_version)
        _insert_effects(effects)
        return len(effects)


def _insert_effects(effects: list[FactorEffect]) -> None:
    """The fit's effect rows, by their fields' values: nothing reads their ids, so none are reserved first (a round
    trip that took as long as their COPY)."""
    names = [field.attname for field in FactorEffect._meta.concrete_fields if not field.primary_key]
    for effect in effects:
        effect.fit_id = effect.fit.pk  # its summary was saved after the effect was made
    insert_values(FactorEffect, names, ([getattr(effect, name) for name in names] for effect in effects))


def _insert_figures(rows: list) -> None:
    """The units' figures (analysis.factor_figures.FiguresRow), thousands of rows of a JSON document each: on
    PostgreSQL by a binary COPY (bulk_create would send each column as one array parameter, quoting every document's
    every quote in Python, five times the CPU; a text COPY formats every float, timestamp and UUID as text for the
    server to parse again, three times the CPU of a binary one). The values go to COPY as they are, the
    document wrapped as JSON: the rows are made of Python ints, floats, strings, UUIDs and aware datetimes, so the
    fields' own preparation (a third of the write) would change nothing."""
    if connection.vendor != "postgresql":
        FactorUnitFigures.objects.bulk_create(FactorUnitFigures(**row.columns()) for row in rows)
        return
    if not rows:
        return
    field_of = {f.attname: f for f in FactorUnitFigures._meta.concrete_fields}
    field_of["fit"] = field_of["fit_id"]  # the row holds the summary itself, saved after the row was made
    names = rows[0]._fields
    fields = [field_of[name] for name in names]
    fit, figures = names.index("fit"), names.index("figures")
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    sql = f"COPY {quote(FactorUnitFigures._meta.db_table)} ({columns}) FROM STDIN (FORMAT BINARY)"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        copy.set_types([_copy_type(field) for field in fields])
        for row in rows:
            values = list(row)
            values[fit] = row.fit.pk if row.fit is not None else None
            values[figures] = Jsonb(values[figures], dumps=_json_bytes)
            copy.write_row(values)


def _copy_type(field) -> str:
    """The column's type as a binary COPY names it: its database type without a length ("varchar(32)": varchar,
    whose values are sent the same way whatever their length; the server checks the length as it stores them)."""
    return field.db_type(connection).split("(")[0]


def _json_bytes(document) -> bytes:
    """A figures document as JSON, five times as fast as the standard library (numpy's scalars as numbers too)."""
    return orjson.dumps(document, option=orjson.OPT_SERIALIZE_NUMPY)


def _covered(data_version: int, factors_version: int | None) -> bool:
    return factors_version is not None and factors_version >= data_version


def _fit_drive(drive_model: DriveModel, now) -> list:
    """The drive's public fits, not saved yet: per headline metric its FactorFitSummary, FactorEffect rows and public
    units' FactorUnitFigures."""
    # why: the fit loads numpy, scipy and statsmodels; a web process imports this module only to queue refits
    from analysis.factor_figures import public_figures
    from analysis.factor_model import fit
    from analysis.factor_rows import public_runs, rows_of

    found = rows_of(public_runs(drive_model))
    digest = inputs_digest(found.runs)
    fits = []
    for metric, rows in found.rows.items():
        fitted = fit(rows, metric)
        reference = fitted.reference_level if fitted.status == "fitted" else None
        summary = FactorFitSummary(
            drive_model=drive_model,
            metric=metric,
            status=fitted.status,
            reason=fitted.reason[:300],
            n_units=fitted.n_units,
            n_runs=fitted.n_runs,
            n_contributors=fitted.n_contributors,
            r_squared=fitted.r_squared,
            reference_value=reference and reference.value,
            reference_low=reference and reference.low,
            reference_high=reference and reference.high,
            notes=[*found.notes.get(metric, []), *fitted.notes],
            fitted_at=now,
        )
        fits.append(
            (
                summary,
                effect_rows(drive_model, fitted, summary, now),
                public_figures(drive_model, fitted, found, summary, now, digest),
            )
        )
    return fits


def refresh_held_figures(submission) -> int:
    """Fit the units of a held `submission` with each of its drives' public units and replace its FactorUnitFigures
    rows. Returns the rows written; 0 when the submission is no longer held (its rows are removed).

    Like the drive's refit, it reads one snapshot and fits holding no lock, then writes in one short transaction
    under the drive's row lock. A page compares the stored digest with the runs a fit would read now, so figures of a
    drive whose public data changed meanwhile are never shown as current."""
    # why: numpy, scipy and statsmodels, as in _fit_drive
    from analysis.factor_figures import held_figures
    from analysis.factor_model import fit
    from analysis.factor_rows import public_runs, rows_of

    written = 0
    drives = DriveModel.objects.filter(test_runs__submission=submission).distinct().order_by("pk")
    for drive_model in drives:
        now = timezone.now()
        with snapshot_transaction(), cycle_collector_paused():
            public = public_runs(drive_model)
            found = rows_of(public)
            fits = {metric: fit(rows, metric) for metric, rows in found.rows.items()}
            figures = held_figures(drive_model, public, now, found, fits, submissions=[submission])
        with derived_rows_transaction():  # a crash can only leave them stale, which a page tells by the digest
            list(DriveModel.objects.select_for_update(no_key=True).filter(pk=drive_model.pk).values_list("pk"))
            FactorUnitFigures.objects.filter(drive_model=drive_model, submission=submission).delete()
            if Submission.objects.filter(pk=submission.pk, status=SubmissionStatus.HELD).exists():
                _insert_figures(figures)
                written += len(figures)
    return written
