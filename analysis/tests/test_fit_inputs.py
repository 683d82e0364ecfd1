"""What a factor fit reads, and its digest (analysis.fit_inputs): the refit stores the digest of the runs it read, a
page reads the same runs again in one query and compares. Every input the rows are made of moves the digest; what
the rows do not read does not; a change made outside the publish path (no new data version, no refit queued) still
keeps old figures off the page."""

from __future__ import annotations

import hashlib
import importlib
import math

import orjson
import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.db.models import FloatField
from django.test.utils import CaptureQueriesContext

from analysis.explain import explain_submission
from analysis.explain_model import REFRESHING, metric_models
from analysis.factor_effects import refresh_factor_effects
from analysis.factor_rows import public_runs
from analysis.fit_inputs import (
    DIGEST_FORMAT,
    FLOAT_FIELDS,
    INPUT_FIELDS,
    POSITION,
    REPR_FORMAT,
    current_inputs,
    inputs_digest,
)
from analysis.models import FactorUnitFigures, Firmware, Host, TestRun
from analysis.tests.factories import FlagFactory
from analysis.tests.test_explain import SEQ, factor_population, metric

pytestmark = pytest.mark.django_db


def digest_now(model) -> str:
    public, own = current_inputs(model)
    assert own == []
    return inputs_digest(public)


def test_the_page_reads_the_digest_the_refit_stored():
    world = factor_population()
    model = world["model"]
    refresh_factor_effects(model)
    stored = set(FactorUnitFigures.objects.filter(drive_model=model).values_list("input_digest", flat=True))
    assert stored == {inputs_digest(public_runs(model))} == {digest_now(model)}


def test_the_digest_is_of_the_runs_in_order_whatever_their_form():
    world = factor_population()
    runs = public_runs(world["model"])
    tuples, _ = current_inputs(world["model"])
    assert inputs_digest(runs) == inputs_digest(tuples)
    assert inputs_digest(runs) != inputs_digest(runs[::-1]) != inputs_digest(runs[1:])


def change_headline(run):
    TestRun.objects.filter(pk=run.pk).update(headline={SEQ: run.headline[SEQ] * 1.01})


def change_firmware(run):
    TestRun.objects.filter(pk=run.pk).update(
        firmware=Firmware.objects.create(drive_model=run.drive_model, revision="X2")
    )


def change_host_cpu(run):
    Host.objects.filter(pk=run.host_id).update(cpu_model="another CPU")  # edited in place: no new data version


def flag_thermal(run):
    FlagFactory(submission=run.submission, test_run=run, kind="thermal_throttle", reason="ran hot")


def change_wear(run):
    TestRun.objects.filter(pk=run.pk).update(percentage_used=40)


def hide_submission(run):
    type(run.submission).objects.filter(pk=run.submission_id).update(hidden=True)


@pytest.mark.parametrize(
    "change", [change_headline, change_firmware, change_host_cpu, flag_thermal, change_wear, hide_submission]
)
def test_every_input_of_the_rows_moves_the_digest_and_keeps_old_figures_off_the_page(change):
    world = factor_population()
    model, normal = world["model"], world["submissions"]["n0"]
    refresh_factor_effects(model)
    before = digest_now(model)
    assert metric(explain_submission(normal), SEQ)["normalized"] is not None

    change(TestRun.objects.filter(submission=world["submissions"]["n3"], test="tp").get())
    assert digest_now(model) != before
    assert metric(explain_submission(normal), SEQ)["model_note"] == REFRESHING


def test_what_the_rows_do_not_read_leaves_the_figures_current():
    world = factor_population()
    model, normal = world["model"], world["submissions"]["n0"]
    refresh_factor_effects(model)
    before = digest_now(model)
    TestRun.objects.filter(drive_model=model).update(fio_version="fio-3.99")
    assert digest_now(model) == before
    assert metric(explain_submission(normal), SEQ)["normalized"] is not None


def test_a_page_checks_its_figures_in_one_query_of_the_drives_runs_however_many():
    world = factor_population()
    model, normal = world["model"], world["submissions"]["n0"]
    refresh_factor_effects(model)
    runs = list(TestRun.objects.filter(submission=normal).select_related("drive_model").order_by("test"))
    with CaptureQueriesContext(connection) as queries:
        models = metric_models(normal, runs)
    assert models[SEQ].normalized is not None
    # the drive's runs, this submission's own, its stored figures
    assert len(queries) == 3, [q["sql"][:80] for q in queries]


def test_figures_of_the_old_digest_are_forgotten_and_refitted_at_the_next_start(capsys):
    migration = importlib.import_module("analysis.migrations.0026_figures_digest_of_the_runs_read")
    world = factor_population()
    model, normal = world["model"], world["submissions"]["n0"]
    refresh_factor_effects(model)
    FactorUnitFigures.objects.update(input_digest="0" * 64)  # as stored before: a digest no page compares
    assert metric(explain_submission(normal), SEQ)["model_note"] == REFRESHING

    migration.forget_figures_of_the_old_digest(apps, None)
    assert not FactorUnitFigures.objects.exists()
    model.refresh_from_db()
    assert model.factors_version is None and model.factor_effects.exists()  # the drive's effects stay shown

    call_command("refresh_factor_effects", "--missing")  # what every start runs
    assert "1 drive models refitted" in capsys.readouterr().out
    assert metric(explain_submission(normal), SEQ)["normalized"] is not None
    call_command("refresh_factor_effects", "--missing")
    assert "0 drive models refitted" in capsys.readouterr().out  # fitted on known data now


def repr_digest(runs: list[tuple]) -> str:
    """The digest as it was computed before orjson wrote the runs (migration 0028)."""
    return hashlib.sha256(REPR_FORMAT + "\n".join(repr(run) for run in runs).encode()).hexdigest()


def test_the_digest_is_orjsons_text_and_the_repr_where_that_text_would_hide_a_difference():
    world = factor_population()
    tuples, _ = current_inputs(world["model"])
    assert inputs_digest(tuples) == hashlib.sha256(DIGEST_FORMAT + orjson.dumps(tuples)).hexdigest()
    position = POSITION["max_temperature_k"]
    for hidden in (math.nan, math.inf, -math.inf):
        changed = [tuples[0][:position] + (hidden,) + tuples[0][position + 1 :], *tuples[1:]]
        none = [tuples[0][:position] + (None,) + tuples[0][position + 1 :], *tuples[1:]]
        assert orjson.dumps(changed) == orjson.dumps(none)  # what orjson alone would not tell apart
        assert inputs_digest(changed) == repr_digest(changed) != inputs_digest(none)
    in_headline = [tuples[0][:3] + ({SEQ: math.nan},) + tuples[0][4:], *tuples[1:]]
    assert inputs_digest(in_headline) == repr_digest(in_headline)
    beyond_64_bits = [tuples[0][:3] + ({SEQ: 2**70},) + tuples[0][4:], *tuples[1:]]
    assert inputs_digest(beyond_64_bits) == repr_digest(beyond_64_bits)
    not_measured = [tuples[0][:3] + ({SEQ: None, "bw_1m_write": 0.0},) + tuples[0][4:], *tuples[1:]]
    assert inputs_digest(not_measured) == hashlib.sha256(DIGEST_FORMAT + orjson.dumps(not_measured)).hexdigest()


def test_every_float_input_is_checked_for_what_orjson_would_write_as_null():
    floats = set()
    for name in INPUT_FIELDS:
        model, *path, last = [TestRun, *name.split("__")]
        for step in path:
            model = model._meta.get_field(step).related_model
        field = model._meta.get_field(last) if last != "thermal_flag" else None
        if isinstance(field, FloatField):
            floats.add(name)
    assert floats == set(FLOAT_FIELDS)


def test_figures_of_the_repr_digest_are_refitted_at_the_next_start(capsys):
    migration = importlib.import_module("analysis.migrations.0028_refit_figures_of_the_repr_digest")
    world = factor_population()
    model, normal = world["model"], world["submissions"]["n0"]
    refresh_factor_effects(model)
    tuples, _ = current_inputs(model)
    FactorUnitFigures.objects.update(input_digest=repr_digest(tuples))  # as stored before
    assert metric(explain_submission(normal), SEQ)["model_note"] == REFRESHING

    migration.refit_figures_of_the_repr_digest(apps, None)
    model.refresh_from_db()
    assert model.factors_version is None
    call_command("refresh_factor_effects", "--missing")  # what every start runs
    assert "1 drive models refitted" in capsys.readouterr().out
    assert metric(explain_submission(normal), SEQ)["normalized"] is not None


def test_a_submission_page_reads_the_drives_runs_once_for_its_peers_and_its_figures():
    world = factor_population()
    model, normal = world["model"], world["submissions"]["n0"]
    refresh_factor_effects(model)
    with CaptureQueriesContext(connection) as queries:
        summary = explain_submission(normal)
    assert metric(summary, SEQ)["normalized"] is not None and summary["population_units"] == 10
    of_runs = [q["sql"] for q in queries if '"analysis_testrun"."headline"' in q["sql"]]
    # the drive's public runs (peers, digest) and this submission's own; nothing else reads a run's headline
    assert len(of_runs) == 3, of_runs  # and the submission's own runs with their details, first
    assert sum('"thermal_flag"' in sql for sql in of_runs) == 2
