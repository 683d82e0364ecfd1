"""The factor model's per-unit figures are stored by the refit task (analysis.factor_figures) and read by pages: a page
view never fits (statsmodels and scipy cannot even be imported while it renders), shows the figures the fit gave,
and says they are being refreshed when the drive's data changed since the fit."""

import dataclasses
import math
import sys

import pytest

from analysis.explain import explain_submission
from analysis.explain_model import REFRESHING
from analysis.factor_effects import refresh_factor_effects, refresh_held_figures
from analysis.factor_model import fit
from analysis.factor_rows import drive_rows, held_rows
from analysis.fit_inputs import unit_number
from analysis.headline import BY_KEY
from analysis.models import FactorFitSummary, FactorUnitFigures, TestRun
from analysis.tests.factories import TestRunFactory
from analysis.tests.test_explain import SEQ, factor_population, metric

pytestmark = pytest.mark.django_db


def block_fitting(monkeypatch):
    """Any import of statsmodels or scipy fails from here on (already loaded modules included)."""
    for name in [n for n in sys.modules if n.split(".")[0] in ("statsmodels", "scipy")] + ["statsmodels", "scipy"]:
        monkeypatch.setitem(sys.modules, name, None)


def publish_another_unit(model):
    """A public run of a new unit of `model`: the drive's data changed since its last fit."""
    TestRunFactory(
        drive_model=model, test="tp", headline={SEQ: 6.6e9}, max_temperature_k=320.0, percentage_used=3,
        overprovisioning=0.0,
    )  # fmt: skip


def test_the_page_reads_the_stored_figures_and_never_fits(client, monkeypatch):
    world = factor_population()
    model, gen2 = world["model"], world["submissions"]["gen2"]
    refresh_factor_effects(model)
    rows = drive_rows(model).rows[SEQ]
    fitted = fit(rows, BY_KEY[SEQ].label)
    unit = gen2.test_runs.get(test="tp").unit_id

    block_fitting(monkeypatch)
    with pytest.raises(ImportError):  # the block is real: a fit would fail now
        fit(rows, SEQ)
    page = client.get(f"/submissions/{gen2.pk}/").content.decode()
    summary = explain_submission(gen2)

    assert "link Gen2 x4 (link-limited) accounts for −7" in page and REFRESHING not in page
    seq = metric(summary, SEQ)
    expected = fitted.normalized(unit)
    assert (seq["normalized"]["value"], seq["normalized"]["low"], seq["normalized"]["high"]) == (
        pytest.approx(expected.value, rel=1e-5), pytest.approx(expected.low, rel=1e-5),
        pytest.approx(expected.high, rel=1e-5),
    )  # fmt: skip
    assert seq["reference"]["value"] == pytest.approx(fitted.reference_level.value, rel=1e-5)
    stored = FactorUnitFigures.objects.get(drive_model=model, metric=SEQ, unit_key=unit_number(unit))
    assert stored.normalized == pytest.approx(expected.value, rel=1e-12) and stored.fit.metric == SEQ


def test_figures_of_older_data_are_not_shown_until_the_refit(monkeypatch):
    world = factor_population()
    model, normal = world["model"], world["submissions"]["n0"]
    assert metric(explain_submission(normal), SEQ)["model_note"] == REFRESHING  # never fitted yet
    refresh_factor_effects(model)
    assert metric(explain_submission(normal), SEQ)["normalized"] is not None

    # another unit published since the fit
    publish_another_unit(model)
    block_fitting(monkeypatch)
    seq = metric(explain_submission(normal), SEQ)
    assert seq["model_note"] == REFRESHING and seq["normalized"] is None and seq["lines"] == []
    monkeypatch.undo()

    refresh_factor_effects(model)
    seq = metric(explain_submission(normal), SEQ)
    assert seq["model_note"] == "" and seq["normalized"] is not None and seq["model_units"] == 11


def test_a_fit_that_gives_a_unit_no_finite_interval_writes_nothing_and_keeps_the_fit_before(monkeypatch):
    world = factor_population()
    model, normal = world["model"], world["submissions"]["n0"]
    refresh_factor_effects(model)
    before = sorted(FactorUnitFigures.objects.filter(drive_model=model).values_list("pk", "normalized_low"))
    publish_another_unit(model)

    def with_a_nan(rows, metric, **kwargs):
        fitted = fit(rows, metric, **kwargs)
        figures = next(iter(fitted.units.values()))
        figures.normalized = dataclasses.replace(figures.normalized, low=math.nan)
        return fitted

    monkeypatch.setattr("analysis.factor_model.fit", with_a_nan)
    with pytest.raises(ValueError, match="not a finite number: nan"):
        refresh_factor_effects(model)
    assert sorted(FactorUnitFigures.objects.filter(drive_model=model).values_list("pk", "normalized_low")) == before
    assert metric(explain_submission(normal), SEQ)["model_note"] == REFRESHING  # the fit before, of older data


def test_a_held_units_figures_are_fitted_with_the_public_units_and_stored_apart():
    world = factor_population(status_of={"gen2": "held"})
    model, held = world["model"], world["submissions"]["gen2"]
    refresh_factor_effects(model)
    assert not FactorUnitFigures.objects.filter(submission=held).exists()  # the drive's refit fits public units only

    assert refresh_held_figures(held) == 2
    stored = FactorUnitFigures.objects.filter(drive_model=model, submission=held)
    assert {row.metric for row in stored} == {SEQ, "iops_4k_write"} and all(row.fit is None for row in stored)
    assert not FactorUnitFigures.objects.filter(
        drive_model=model, submission__isnull=True, unit_key=held.test_runs.first().unit_id
    ).exists()  # the public fit's rows are the public units only
    rows = drive_rows(model).rows[SEQ] + [
        row for row in held_rows(held, model)[0].rows[SEQ] if row.unit == held.test_runs.get(test="tp").unit_id
    ]
    expected = fit(rows, BY_KEY[SEQ].label).normalized(held.test_runs.get(test="tp").unit_id)
    assert stored.get(metric=SEQ).normalized == pytest.approx(expected.value, rel=1e-12)


def test_a_held_page_with_stale_figures_queues_their_refit_and_the_drives_refit_leaves_them(
    monkeypatch, django_capture_on_commit_callbacks
):
    world = factor_population(status_of={"gen2": "held"})
    model, held = world["model"], world["submissions"]["gen2"]
    refresh_factor_effects(model)
    refresh_held_figures(held)
    fitted_at = FactorUnitFigures.objects.get(submission=held, metric=SEQ).fitted_at

    # another unit published since: the drive is refit, the held unit's figures are left as they were (stale)
    publish_another_unit(model)
    refresh_factor_effects(model)
    assert FactorUnitFigures.objects.get(submission=held, metric=SEQ).fitted_at == fitted_at
    queued = []
    monkeypatch.setattr("analysis.tasks.refresh_held_figures.delay", queued.append)
    with django_capture_on_commit_callbacks(execute=True):
        assert metric(explain_submission(held), SEQ)["model_note"] == REFRESHING
        metric(explain_submission(held), SEQ)
    assert queued == [str(held.pk)]  # once, however often the page is viewed before the refit starts
    monkeypatch.undo()

    from analysis.tasks import refresh_held_figures as task

    assert task(str(held.pk)) == 2  # what the worker runs
    seq = metric(explain_submission(held), SEQ)
    assert seq["model_note"] == "" and seq["normalized"] is not None and seq["model_units"] == 11


def test_a_submission_no_longer_held_loses_its_held_figures_at_the_drives_next_refit():
    world = factor_population(status_of={"gen2": "held"})
    model, held = world["model"], world["submissions"]["gen2"]
    refresh_factor_effects(model)
    refresh_held_figures(held)
    type(held).objects.filter(pk=held.pk).update(status="rejected")

    refresh_factor_effects(model)
    assert not FactorUnitFigures.objects.filter(submission=held).exists()
    assert refresh_held_figures(held) == 0  # and a late refit of it writes none


def test_deleting_a_drive_deletes_its_figures_public_and_held():
    """The drive is not a checked reference of a figures row (migration 0027): the ORM's cascade removes them."""
    world = factor_population(status_of={"hot": "held"})
    model = world["model"]
    refresh_factor_effects(model)
    refresh_held_figures(world["submissions"]["hot"])
    assert FactorUnitFigures.objects.filter(drive_model=model, submission__isnull=False).exists()
    assert FactorUnitFigures.objects.filter(drive_model=model, submission__isnull=True).exists()
    pk = model.pk
    TestRun.objects.filter(drive_model=model).delete()  # a drive with runs is protected
    model.delete()
    assert not FactorUnitFigures.objects.filter(drive_model_id=pk).exists()


def test_a_refit_leaves_no_figures_of_the_fit_it_replaced():
    """The fit is not a checked reference of a figures row either (migration 0029): the refit's deletion of the old
    fits takes their rows with them, through the ORM's cascade."""
    world = factor_population()
    model = world["model"]
    refresh_factor_effects(model)
    first = set(FactorUnitFigures.objects.filter(drive_model=model).values_list("fit_id", flat=True))
    n_rows = FactorUnitFigures.objects.filter(drive_model=model).count()
    publish_another_unit(model)
    refresh_factor_effects(model)

    fits = set(FactorFitSummary.objects.filter(drive_model=model).values_list("pk", flat=True))
    now = set(FactorUnitFigures.objects.filter(drive_model=model).values_list("fit_id", flat=True))
    assert first and not first & now and now <= fits
    assert FactorUnitFigures.objects.filter(drive_model=model).count() > n_rows  # the new unit's rows added
    FactorFitSummary.objects.filter(drive_model=model).delete()
    assert not FactorUnitFigures.objects.filter(drive_model=model).exists()


def _columns(row) -> tuple:
    """A FactorUnitFigures row, or a FiguresRow the refit made, as its columns (its fit as the fit's metric)."""
    fit_metric = row.fit.metric if row.fit is not None else None
    return (
        row.drive_model_id, fit_metric, row.submission_id, row.metric, row.unit_key, row.normalized,
        row.normalized_low, row.normalized_high, row.figures, row.input_digest, row.fitted_at,
    )  # fmt: skip


def test_every_stored_column_is_the_value_the_fit_made_to_the_last_bit():
    """The figures go to the database as the fits made them (on PostgreSQL a binary COPY): read back, every column
    of the public and the held rows is the value made, each float to its last bit, the documents and the held
    submission's id included."""
    from analysis.factor_effects import _fit_drive
    from analysis.factor_figures import held_figures
    from analysis.factor_rows import public_runs

    world = factor_population(status_of={"gen2": "held"})
    model, held = world["model"], world["submissions"]["gen2"]
    refresh_factor_effects(model)
    refresh_held_figures(held)
    public_at = FactorFitSummary.objects.filter(drive_model=model).first().fitted_at
    held_at = FactorUnitFigures.objects.filter(submission=held).first().fitted_at
    made = [row for _summary, _effects, rows in _fit_drive(model, public_at) for row in rows]
    made += held_figures(model, public_runs(model), held_at, submissions=[held])
    stored = FactorUnitFigures.objects.filter(drive_model=model).select_related("fit")

    def order(columns: tuple) -> tuple:
        return str(columns[2]), columns[3], columns[4]

    assert sorted(map(_columns, stored), key=order) == sorted(map(_columns, made), key=order)
    assert any(row.submission_id == held.pk for row in stored) and any(row.figures.get("lines") for row in stored)
    assert all(row.normalized is not None and row.normalized != round(row.normalized, 6) for row in made[:5])
