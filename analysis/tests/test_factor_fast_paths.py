"""The refit's fast paths give exactly what the plain paths give: the rows rows_of makes (a Run's __dict__ filled
in, not its __init__), the stored entries of a public fit (stored_entries, not a MetricModel per unit), and the
table's numbering and logs."""

from __future__ import annotations

import dataclasses
import math
import random
from decimal import Decimal

import numpy as np
import pytest

from analysis.explain_model import stored_entries, unit_models
from analysis.factor_model import Run, fit
from analysis.factor_model.table import _logs, _numbered, _positive
from analysis.factor_rows import rows_of, throughput
from analysis.fit_inputs import unit_key
from analysis.headline import HEADLINES
from analysis.overprovisioning import spare_vs_user
from analysis.tests.test_factor_model import population
from analysis.tests.test_factor_rows import public_runs, run

SEQ = "bw_1m_read"


def plain_row(metric: str, row: dict, limited) -> Run:
    """The Run the rows of `metric` hold for run `row`, made by Run's __init__."""
    gen, width, flag = row["pcie_link__generation"], row["pcie_link__width"], row["thermal_flag"]
    return Run(
        unit=unit_key(row["unit_id"], row["id"]), contributor=row["submission__uploader_id"],
        value=float(row["headline"][metric]), link_limited=limited,
        link_below_capability=row["pcie_link__below_capability"], spare_fraction=spare_vs_user(row["overprovisioning"]),
        throttled=True if flag else (False if row["max_temperature_k"] is not None else None),
        percentage_used=None if row["percentage_used"] is None else float(row["percentage_used"]),
        firmware=row["firmware__revision"] or None, host_cpu=row["host__cpu_model"] or None,
        kernel=row["host__kernel"] or None, scheduler=row["scheduler"] or None,
        link=f"Gen{gen} x{width}" if gen and width else None,
    )  # fmt: skip


def test_each_row_is_the_run_its_init_makes_field_for_field_in_order():
    runs = [
        *public_runs(),
        run(201, None, seq=3.1e9, lat=6e4, thermal_flag=True, firmware__revision="", max_temperature_k=None),
        run(202, 9, seq=2.0e9, percentage_used=None, overprovisioning=None, pcie_link__generation=None),
    ]
    found = rows_of(runs)
    for metric, rows in found.rows.items():
        by_id = {r["id"]: r for r in runs}
        measured = [r for r in runs if r["headline"].get(metric) is not None]
        assert len(rows) == len(measured)
        for row, source in zip(rows, measured, strict=True):
            plain = plain_row(metric, by_id[source["id"]], row.link_limited)
            assert row == plain and repr(row) == repr(plain)
            assert list(vars(row).items()) == list(vars(plain).items())  # the same order, values and types
            assert [type(v) for v in vars(row).values()] == [type(v) for v in vars(plain).values()]
        # the verdict as the plain rule gives it: below the highest median of the other units
        medians = {}
        for source in measured:
            medians.setdefault(unit_key(source["unit_id"], source["id"]), []).append(
                throughput(metric, source["headline"])
            )
        medians = {unit: float(np.median(values)) for unit, values in medians.items()}
        for row, source in zip(rows, measured, strict=True):
            others = [value for unit, value in medians.items() if unit != row.unit]
            usable = source["pcie_link__usable_bandwidth_bytes_per_s"]
            expected = None if usable is None or not others else usable < max(others)
            assert row.link_limited == expected


def entries_the_plain_way(fitted, headline, keys) -> list[dict]:
    return [model.stored(of_a_fit=True) for model in unit_models(fitted, headline, keys)]


@pytest.mark.parametrize("seed", range(4))
def test_the_stored_entries_are_the_unit_models_stored(seed):
    headline = HEADLINES[seed % len(HEADLINES)]
    fitted = fit(population(seed, "sequential read", copies=1 + seed % 2), headline.label)
    assert fitted.status == "fitted"
    keys = [*fitted.units, "not-in-the-fit"]
    random.Random(seed).shuffle(keys)
    entries = stored_entries(fitted, headline, keys)
    assert entries == entries_the_plain_way(fitted, headline, keys)
    assert any("lines" in entry for entry in entries) and any("differs" in entry for entry in entries)
    assert [list(entry) for entry in entries] == [list(e) for e in entries_the_plain_way(fitted, headline, keys)]


def test_the_stored_entries_of_a_fit_with_too_few_units_are_its_note():
    rows = [r for r in population(1, "sequential read") if r.unit in ("n0", "n1")]
    fitted = fit(rows, "x")
    assert fitted.status == "too_few_units"
    assert stored_entries(fitted, HEADLINES[0], ["n0", "n1"]) == entries_the_plain_way(
        fitted, HEADLINES[0], ["n0", "n1"]
    )


@pytest.mark.parametrize("field", ["low", "value", "observed"])
def test_a_fit_with_a_figure_that_is_not_finite_is_refused_as_the_plain_path_does(field):
    fitted = fit(population(2, "sequential read"), "x")
    figures = next(iter(fitted.units.values()))
    if field == "observed":
        figures.observed = math.inf
    else:
        figures.normalized = dataclasses.replace(figures.normalized, **{field: math.nan})
    with pytest.raises(ValueError) as plain:
        entries_the_plain_way(fitted, HEADLINES[0], list(fitted.units))
    with pytest.raises(ValueError, match=str(plain.value)):
        stored_entries(fitted, HEADLINES[0], list(fitted.units))


def test_numbering_is_setdefaults_first_appearance_with_equal_keys_as_one():
    keys = ["a", 1, "b", 1.0, True, "a", None, 2, None]
    index, plain = {"b": 0}, {"b": 0}
    codes = _numbered(keys, index)
    for key in keys:
        plain.setdefault(key, len(plain))
    assert index == plain and [type(k) for k in index] == [type(k) for k in plain]
    assert codes.tolist() == [plain[key] for key in keys]


def test_the_logs_of_floats_are_those_of_the_generic_rule():
    values = [2.5, 0.0, -1.0, math.nan, math.inf, -math.inf, 1e-320, 1e308, 7.0]
    plain = [math.log(float(v)) if _positive(v) else math.nan for v in values]
    assert np.array_equal(_logs(values), np.array(plain), equal_nan=True)
    mixed = [*values, Decimal("2"), np.float64(3.0), True]
    plain = [math.log(float(v)) if _positive(v) else math.nan for v in mixed]
    assert np.array_equal(_logs(mixed), np.array(plain), equal_nan=True)
