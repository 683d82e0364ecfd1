"""The run_results export: one row per public PTS run with each headline metric, its rule, and the factor model's
conditions as typed columns that agree with the rows the model is fitted on (analysis.factor_rows)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from analysis import factor_rows
from analysis.factor_effects import refresh_factor_effects
from analysis.factor_rows import drive_rows
from analysis.headline import LAST_ROUNDS_MEAN, STEADY_WINDOW_MEAN
from analysis.models import FactorEffect, FlagKind
from analysis.tests.factories import FlagFactory, TestRunFactory
from analysis.tests.test_factor_effects import RW, SEQ, population
from datasets import tables_run_results
from datasets.filters import Filters, rows_queryset
from datasets.tables import TABLES

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"


def rows() -> list[dict]:
    spec = TABLES["run_results"]
    return [dict(zip(spec.column_names, row, strict=True)) for row in rows_queryset(spec, Filters())]


def test_the_table_has_a_column_per_metric_rule_factor_and_flag_kind_and_runs_says_flag_kinds():
    names = TABLES["run_results"].column_names
    for key in factor_rows.METRICS:
        assert {key, f"{key}_rule", f"{key}_link_limited"} <= set(names)
    factors = [
        "capable_gts",
        "capable_width",
        "negotiated_gts",
        "negotiated_width",
        "usable_link_bytes_per_s",
        "link_below_capability",
        "throttled",
        "spare_fraction",
        "max_temperature_k",
        "warning_temperature_k",
        "critical_temperature_k",
        "percentage_used",
        "firmware",
        "host_cpu",
        "kernel",
        "scheduler",
        "flag_kinds",
        "unit_serial_hash",
    ]
    assert set(factors) <= set(names)
    assert {f"flag_{kind.value}" for kind in FlagKind} <= set(names)
    assert "flags" not in names and "flag_kinds" in TABLES["runs"].column_names
    assert "flags" not in TABLES["runs"].column_names
    assert tables_run_results.LATENCY_THROUGHPUT_METRIC == factor_rows.LATENCY_THROUGHPUT_METRIC


def test_values_and_factor_columns_agree_with_the_model_rows():
    world = population()
    drive = world["drive"]
    exported = {row["run_id"]: row for row in rows()}
    runs = {r["id"]: r for r in factor_rows.public_runs(drive)}
    assert set(exported) == set(runs)
    model_rows = drive_rows(drive).rows
    for metric in (SEQ, RW):
        by_value = {round(r.value, 3): r for r in model_rows[metric]}
        for row in exported.values():
            model = by_value[round(row[metric], 3)]
            assert row[f"{metric}_link_limited"] == model.link_limited
            assert row["link_below_capability"] == model.link_below_capability
            assert row["throttled"] == model.throttled
            assert row["spare_fraction"] == model.spare_fraction
            assert row["percentage_used"] == model.percentage_used
            assert (row["firmware"], row["host_cpu"], row["kernel"]) == (model.firmware, model.host_cpu, model.kernel)
            assert row["scheduler"] == model.scheduler
    gen2 = [row for row in exported.values() if row["negotiated_gts"] == 5.0]
    assert len(gen2) == 2 and all(row[f"{SEQ}_link_limited"] and not row[f"{RW}_link_limited"] for row in gen2)
    assert all(row["capable_gts"] == 5.0 and row["negotiated_width"] == 4 for row in gen2)
    hot = [row for row in exported.values() if row["throttled"]]
    assert len(hot) == 2 and all(row["flag_thermal_throttle"] for row in hot)
    assert not any(row["flag_thermal_throttle"] for row in exported.values() if not row["throttled"])


def test_rules_missing_metrics_and_unknown_links_stay_missing():
    run = TestRunFactory(test="iops", headline={RW: 2e5}, steady=True, pcie_link=None, max_temperature_k=None)
    other = TestRunFactory(test="iops", headline={RW: 1e5}, steady=False)
    FlagFactory(submission=other.submission, test_run=other, kind="bus_bound", reason="one cell")
    found = {row["run_id"]: row for row in rows()}
    assert found[run.pk][f"{RW}_rule"] == STEADY_WINDOW_MEAN and found[other.pk][f"{RW}_rule"] == LAST_ROUNDS_MEAN
    assert found[run.pk][SEQ] is None and found[run.pk][f"{SEQ}_rule"] is None
    assert found[run.pk][f"{RW}_link_limited"] is None and found[run.pk]["throttled"] is None
    assert found[run.pk]["capable_gts"] is None
    # a drive model alone per run: no other unit to compare the link with
    assert found[other.pk][f"{RW}_link_limited"] is None
    assert found[other.pk]["flag_bus_bound"] is True and found[run.pk]["flag_bus_bound"] is False


def refit_snippet() -> str:
    text = DOCS.read_text()
    return re.search(r"<!-- refit snippet.*?```python\n(.*?)```", text, re.S).group(1)


def test_the_documented_refit_gives_the_factor_effects_figures(client):
    snippet = refit_snippet()
    assert len(snippet.strip().splitlines()) <= 10
    world = population()
    drive = world["drive"]
    refresh_factor_effects(drive)
    csv_text = b"".join(client.get("/datasets/run_results.csv").streaming_content).decode()
    import pandas as pd

    code = snippet.replace('pd.read_csv("run_results.csv")', "pd.read_csv(source)")
    code = code.replace("'some-drive'", repr(drive.slug)).replace('"iops_4k_read"', repr(SEQ))
    code = code.replace("print(", "found = (")
    scope = {"source": io.StringIO(csv_text), "pd": pd}
    exec(compile(code, "datasets.md", "exec"), scope)  # noqa: S102 - the documented snippet, run as a reader would
    found = scope["found"]
    site = {(e.factor, e.level): e for e in FactorEffect.objects.filter(drive_model=drive, metric=SEQ) if e.ratio}
    assert site
    for (factor, level), effect in site.items():
        name = f"{factor}_{level}" if level else factor
        ratio, low, high = found.loc[name]
        assert ratio == pytest.approx(effect.ratio, rel=1e-6), name
        assert (low, high) == (pytest.approx(effect.ci_low, rel=1e-6), pytest.approx(effect.ci_high, rel=1e-6))


def test_the_normalized_figures_are_the_fits_on_the_runs_that_measure_the_metric():
    from analysis.factor_model import fit
    from analysis.models import FactorFitSummary, TestRun

    drive = population()["drive"]
    unit = TestRun.objects.filter(drive_model=drive).first().unit
    TestRunFactory(drive_model=drive, unit=unit, test="iops", headline={"iops_4k_read": 5e5})  # no SEQ figure here
    refresh_factor_effects(drive)
    exported = rows()
    fitted = fit(drive_rows(drive).rows[SEQ], SEQ)
    fitted_at = FactorFitSummary.objects.get(drive_model=drive, metric=SEQ).fitted_at
    units = dict(TestRun.objects.values_list("pk", "unit_id"))
    measured = [row for row in exported if row[SEQ] is not None]
    assert measured and len(measured) < len(exported)
    for row in exported:
        if row[SEQ] is None:  # another test's run of the same unit: not a figure of this metric
            assert row[f"{SEQ}_normalized"] is None and row[f"{SEQ}_fitted_at"] is None
            continue
        expected = fitted.normalized(units[row["run_id"]])
        assert row[f"{SEQ}_normalized"] == pytest.approx(expected.value, rel=1e-12)
        assert (row[f"{SEQ}_normalized_low"], row[f"{SEQ}_normalized_high"]) == (
            pytest.approx(expected.low, rel=1e-12), pytest.approx(expected.high, rel=1e-12)
        )  # fmt: skip
        assert row[f"{SEQ}_fitted_at"] == fitted_at


def test_without_a_fit_the_normalized_figures_are_empty():
    population()  # never refitted (the task did not run)
    assert all(row[f"{SEQ}_normalized"] is None for row in rows())
    names = TABLES["run_results"].column_names
    for key in factor_rows.METRICS:
        assert {f"{key}_normalized", f"{key}_normalized_low", f"{key}_normalized_high", f"{key}_fitted_at"} <= set(
            names
        )
    units = {c.name: c.unit for c in TABLES["run_results"].columns}
    assert units[f"{SEQ}_normalized_low"] == "bytes/s" and units[f"{RW}_normalized"] == "IOPS"


@pytest.mark.postgres
def test_the_postgresql_copy_path_gives_the_same_normalized_figures_as_the_python_writer():
    import pyarrow.parquet as pq

    from datasets import writers
    from datasets.exports import export_stream

    drive = population()["drive"]
    refresh_factor_effects(drive)
    spec = TABLES["run_results"]
    fast = b"".join(export_stream(spec, Filters(), "csv")).decode()
    orm = b"".join(writers.write_csv(spec.columns, rows_queryset(spec, Filters()))).decode()
    wanted = [f"{SEQ}_normalized", f"{SEQ}_normalized_low", f"{SEQ}_normalized_high", f"{SEQ}_fitted_at"]

    def cells(text):
        import csv

        return sorted(
            (row["run_id"], *(float(row[w]) if row[w] and "fitted" not in w else row[w] for w in wanted))
            for row in csv.DictReader(io.StringIO(text, newline=""))
        )

    assert cells(fast) == cells(orm) and any(cell[1] for cell in cells(fast))
    table = pq.read_table(io.BytesIO(b"".join(export_stream(spec, Filters(), "parquet"))))
    assert str(table.schema.field(f"{SEQ}_normalized").type) == "double"
    assert table.schema.field(f"{SEQ}_normalized").metadata[b"unit"] == b"bytes/s"
    by_run = dict(zip(table.column("run_id").to_pylist(), table.column(f"{SEQ}_normalized").to_pylist(), strict=True))
    expected = {row["run_id"]: row[f"{SEQ}_normalized"] for row in rows()}
    assert by_run.keys() == expected.keys()
    assert all(
        (by_run[k] is None) == (v is None) and (v is None or by_run[k] == pytest.approx(v, rel=1e-12))
        for k, v in expected.items()
    )


def test_a_flag_counts_on_its_run_or_on_its_whole_submission_only():
    """analysis.selectors.run_flagged_q, read by the model rows and the export alike: a flag on one run does not
    flag the other runs of its submission; a flag on the whole submission (no run) flags each of its runs."""
    flagged = TestRunFactory(test="iops", headline={RW: 2e5}, max_temperature_k=330)
    sibling = TestRunFactory(test="tp", submission=flagged.submission, drive_model=flagged.drive_model,
                             headline={SEQ: 3e9}, max_temperature_k=330)  # fmt: skip
    whole = TestRunFactory(test="iops", drive_model=flagged.drive_model, headline={RW: 1e5}, max_temperature_k=330)
    plain = TestRunFactory(test="iops", drive_model=flagged.drive_model, headline={RW: 3e5}, max_temperature_k=330)
    FlagFactory(submission=flagged.submission, test_run=flagged, kind=FlagKind.THERMAL_THROTTLE, reason="run")
    FlagFactory(submission=whole.submission, test_run=None, kind=FlagKind.THERMAL_THROTTLE, reason="submission")
    FlagFactory(submission=plain.submission, test_run=plain, kind=FlagKind.BUS_BOUND, reason="another kind")
    expected = {flagged.pk: True, sibling.pk: False, whole.pk: True, plain.pk: False}
    model = {run["id"]: run["thermal_flag"] for run in factor_rows.public_runs(flagged.drive_model)}
    assert model == expected
    exported = {row["run_id"]: row for row in rows()}
    assert {pk: exported[pk]["flag_thermal_throttle"] for pk in expected} == expected
    assert {pk: exported[pk]["throttled"] for pk in expected} == expected
    assert exported[plain.pk]["flag_bus_bound"] is True and exported[flagged.pk]["flag_bus_bound"] is False
