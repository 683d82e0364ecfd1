"""The factor model on synthetic drive populations with known injected effects (no database).

The benchmark: seven normal units (1.5 % unit-to-unit noise, 0.5 % run-to-run noise, three to five runs each) and
one unit per factor: a Gen2 x4 slot capping sequential read at ×0.25 (link-limited on a link that is all the slot
allows), a link downtrained 16 → 8 GT/s (below capability; its Gen3 x4 cap costs ×0.55), 28 % spare against the
others' 7 % (random write ×1.45), a throttled unit, an 80 %-worn unit and an older firmware. The Gen2 box also has the
only Xeon host CPU, so that CPU cannot be told apart from the bus cap.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

from analysis.factor_model import Run, fit

SEQ, RW = "sequential read", "random write"
NORMAL = {
    "link_limited": False, "link_below_capability": False, "spare_fraction": 0.07, "throttled": False,
    "firmware": "2.1.0", "kernel": "6.8.0", "link": "Gen4 x4",
}  # fmt: skip
# unit → (its conditions, its injected ratio per metric)
FACTOR_UNITS = {
    "gen2": ({"link_limited": {SEQ: True, RW: False}, "host_cpu": "Xeon E5-2690 v4", "link": "Gen2 x4"},
             {SEQ: 0.25, RW: 1.0}),
    "downtrained": ({"link_below_capability": True, "link_limited": {SEQ: True, RW: False}, "link": "Gen3 x4"},
                    {SEQ: 0.55, RW: 1.0}),
    "spare": ({"spare_fraction": 0.28}, {SEQ: 1.0, RW: 1.45}),
    "throttled": ({"throttled": True}, {SEQ: 0.8, RW: 0.9}),
    "worn": ({"percentage_used": 80.0}, {SEQ: 1.0, RW: 0.8}),
    "old-firmware": ({"firmware": "1.4.2"}, {SEQ: 0.93, RW: 0.85}),
}  # fmt: skip
FACTOR_OF = {"gen2": "link_limited", "downtrained": "link_below_capability", "spare": "spare_fraction",
             "throttled": "throttled", "worn": "percentage_used", "old-firmware": "firmware"}  # fmt: skip
BASE = {SEQ: 6.5e9, RW: 2.0e5}


def population(seed: int, metric: str, copies: int = 1, normal: int = 7, unit_sd: float = 0.015) -> list[Run]:
    rng = np.random.default_rng(seed)
    specs = [(f"n{i}", {"host_cpu": "EPYC 7443" if i < 4 else "EPYC 9354"}, 1.0) for i in range(normal)]
    for name, (conditions, ratios) in FACTOR_UNITS.items():
        for copy in range(copies):
            host = {"host_cpu": "EPYC 9354" if name in ("spare", "old-firmware") else "EPYC 7443"}
            resolved = {k: v[metric] if isinstance(v, dict) else v for k, v in conditions.items()}
            specs.append((f"{name}-{copy}" if copies > 1 else name, {**host, **resolved}, ratios[metric]))
    runs = []
    for number, (unit, conditions, ratio) in enumerate(specs):
        level = BASE[metric] * ratio * math.exp(rng.normal(0, unit_sd))
        wear = conditions.get("percentage_used", float(rng.integers(1, 6)))
        for _ in range(int(rng.integers(3, 6))):
            value = level * math.exp(rng.normal(0, 0.005))
            fields = {**NORMAL, "percentage_used": wear, **conditions}
            runs.append(Run(unit, f"c{number % 5}", value, **fields))
    return runs


def injected(fit_, metric: str):
    """(unit, the fitted contribution of its factor, the injected ratio) for each factor unit whose factor varies
    for this metric (the Gen2 box is not link-limited on random write)."""
    for unit, factor in FACTOR_OF.items():
        estimate = fit_.contribution(unit, factor)
        assert estimate is not None or (metric, unit) == (RW, "gen2"), (metric, unit)
        if estimate is not None:
            yield unit, estimate, FACTOR_UNITS[unit][1][metric]


@pytest.mark.parametrize("metric", [SEQ, RW])
def test_each_injected_effect_is_covered_by_its_interval(metric):
    model = fit(population(1, metric), metric)
    assert model.status == "fitted" and model.n_units == 13
    for unit, estimate, ratio in injected(model, metric):
        assert estimate.covers(ratio), (unit, estimate, ratio)


def test_the_intervals_are_calibrated_over_twenty_seeds():
    covered: dict[tuple[str, str], int] = {}
    for seed in range(100, 120):
        for metric in (SEQ, RW):
            model = fit(population(seed, metric), metric)
            for unit, estimate, ratio in injected(model, metric):
                covered[unit, metric] = covered.get((unit, metric), 0) + estimate.covers(ratio)
    assert all(n >= 17 for n in covered.values()), covered
    assert sum(covered.values()) >= 0.9 * 20 * len(covered)


def test_a_host_cpu_found_only_on_the_gen2_box_is_not_separable_from_the_bus_cap():
    model = fit(population(1, SEQ), SEQ)
    cpu = model.factor("host_cpu")
    xeon = next(e for e in cpu.effects if e.level == "Xeon E5-2690 v4")
    assert xeon.status == "not_separable" and xeon.ratio is None and xeon.moves_with == ["link-limited"]
    link = model.factor("link_limited").effects[0]
    assert link.moves_with == ["host CPU Xeon E5-2690 v4"] and link.status == "indicative"
    assert all("host CPU" not in e.text for u in model.units for e in model.explain(u) if "not separable" not in e.text)
    # On random write the Gen2 box is not link-limited: the CPU is a level of its own, with no effect to speak of.
    rw = fit(population(1, RW), RW)
    assert rw.factor("link_limited").status == "constant"
    assert next(e for e in rw.factor("host_cpu").effects if e.level == "Xeon E5-2690 v4").status == "indicative"
    assert rw.explain("gen2") == []


@pytest.mark.parametrize("metric", [SEQ, RW])
def test_no_normal_unit_gets_an_explanation_and_each_factor_unit_names_its_factor(metric):
    model = fit(population(1, metric), metric)
    for i in range(7):
        assert model.explain(f"n{i}") == [], model.explain(f"n{i}")
    for unit, factor in FACTOR_OF.items():
        ratio = FACTOR_UNITS[unit][1][metric]
        lines = model.explain(unit)
        if ratio == 1.0:
            assert lines == [], (unit, lines)
            continue
        assert lines and lines[0].factor == factor, (unit, lines)
        assert lines[0].text.startswith(f"{metric} {'−' if ratio < 1 else '+'}"), lines[0].text
        assert abs(lines[0].gap - (ratio - 1)) < 0.06
    if metric == SEQ:
        text = model.explain("gen2")[0].text
        assert text.startswith("sequential read −7") and "link Gen2 x4 (link-limited) accounts for −7" in text
        assert "1 unit — indicative" in text and "not separable from host CPU Xeon E5-2690 v4" in text
        assert model.explain("downtrained")[0].label == "link Gen3 x4, below capability"
    else:
        assert model.explain("spare")[0].text.startswith("random write +4")
        assert "spare 28% of user capacity (reference 7%)" in model.explain("spare")[0].text


def test_link_is_never_named_for_a_unit_on_its_capable_link():
    runs = population(2, SEQ)
    # A slow normal unit (−8 %, far beyond the noise) on a capable link: nothing on record explains it.
    runs = [Run(**{**r.__dict__, "value": r.value * 0.92}) if r.unit == "n0" else r for r in runs]
    model = fit(runs, SEQ)
    assert model.explain("n0") == []
    assert all(e.factor not in ("link_limited", "link_below_capability") for u in model.units if not
               u.startswith(("gen2", "downtrained")) for e in model.explain(u))  # fmt: skip


def test_two_units_per_level_give_narrower_intervals_than_one():
    one, two = fit(population(3, SEQ), SEQ), fit(population(3, SEQ, copies=2), SEQ)
    for factor in FACTOR_OF.values():
        single, double = one.factor(factor).effects[0], two.factor(factor).effects[0]
        assert single.status == "indicative" and double.status == "estimated", factor
        assert double.n_units == 2 and double.n_contributors == 2
        assert math.log(double.high / double.low) < math.log(single.high / single.low), factor


def test_too_few_units_give_no_effects():
    runs = [r for r in population(4, SEQ, normal=2) if r.unit in ("n0", "n1", "gen2", "throttled", "worn")]
    model = fit(runs, SEQ)
    assert model.status == "too_few_units" and "too few units" in model.reason
    assert model.effects == [] and model.explain("gen2") == [] and model.normalized("gen2") is None


@pytest.mark.parametrize("metric", [SEQ, RW])
def test_normalized_figures_of_factor_units_land_at_the_normal_level(metric):
    model = fit(population(5, metric), metric)
    normal = math.exp(np.mean([math.log(model.observed(f"n{i}")) for i in range(7)]))
    for unit in FACTOR_UNITS:
        figure = model.normalized(unit)
        assert abs(figure.value / normal - 1) < 0.04, (unit, figure.value / normal)
        assert figure.low <= figure.value <= figure.high
    assert model.normalized("n0").value == pytest.approx(model.observed("n0"), rel=0.01)


def test_a_unit_tested_ten_times_is_one_observation():
    runs = population(6, RW)
    model = fit(runs, RW)
    tenfold = fit(runs * 10, RW)
    assert tenfold.n_units == model.n_units and tenfold.df_resid == model.df_resid
    a, b = model.factor("throttled").effects[0], tenfold.factor("throttled").effects[0]
    assert b.low == pytest.approx(a.low) and b.high == pytest.approx(a.high)


def test_shares_of_explained_variance_follow_the_injected_effects():
    model = fit(population(1, SEQ), SEQ)
    shares = {f.key: f.share for f in model.factors if f.share is not None}
    assert sum(shares.values()) == pytest.approx(1.0)
    assert max(shares, key=shares.get) == "link_limited" and shares["link_limited"] > 0.5
    # no effect on sequential read: about no share, though the EPYC 9354 host also runs the older firmware
    assert abs(shares["host_cpu"]) < 0.01 and abs(shares["spare_fraction"]) < 0.01
    assert model.r_squared > 0.95


def test_missing_values_and_unrecorded_factors_are_reported_not_imputed():
    runs = population(7, RW)
    # the scheduler is known for two units only, the firmware is unknown on one unit's runs
    runs = [Run(**{**r.__dict__, "scheduler": "none" if r.unit in ("n0", "n1") else None}) for r in runs]
    runs = [Run(**{**r.__dict__, "firmware": None}) if r.unit == "n6" else r for r in runs]
    model = fit([r.__dict__ | {"exported_column": 1} for r in runs], RW)
    scheduler = model.factor("scheduler")
    assert scheduler.status == "unrecorded" and "recorded for 2 of 13 units" in scheduler.reason
    assert (
        model.factor("kernel").status == "constant"
        and "6.8.0 on every run of the 12 units" in model.factor("kernel").reason
    )
    assert any("firmware not recorded on" in note and "left out" in note for note in model.notes)
    assert model.n_units == 12 and model.normalized("n6") is None


def test_runs_of_unknown_units_count_as_units_of_their_own():
    runs = [Run(**{**r.__dict__, "unit": None}) if r.unit == "n0" else r for r in population(8, RW)]
    model = fit(runs, RW)
    n0_runs = sum(r.unit is None for r in runs)
    assert model.n_units == 12 + n0_runs and model.status == "fitted"


def test_odd_inputs_numpy_and_decimal_values_non_positive_runs_and_a_unit_throttled_on_some_runs():
    assert fit([]).status == "too_few_units"
    same = fit([Run(f"u{i}", "c", 5.0, throttled=False) for i in range(5)])
    assert same.status == "fitted" and same.r_squared is None and same.explain("u0") == []
    rng = np.random.default_rng(9)
    rows = [
        {"unit": f"u{i}", "contributor": f"c{i % 3}", "throttled": i == 0 and k < 2, "firmware": "a",
         "value": np.float64(100 * (0.7 if i == 0 and k < 2 else 1) * math.exp(rng.normal(0, 0.01)))}
        for i in range(8) for k in range(4)
    ]  # fmt: skip
    rows += [{"unit": "u1", "contributor": "c0", "value": Decimal("100.5"), "throttled": False, "firmware": "a"},
             {"unit": "u1", "contributor": "c0", "value": 0, "throttled": False, "firmware": "a"}]  # fmt: skip
    model = fit(rows, "random read")
    assert model.n_runs == 33 and any("1 run(s) left out" in note for note in model.notes)
    (line,) = model.explain("u0")
    assert "thermal throttling on 50% of its runs accounts for −1" in line.text  # √0.7 − 1 = −16 %
    assert model.contribution("u0", "throttled").covers(math.sqrt(0.7))


@pytest.mark.parametrize("metric", [SEQ, RW])
def test_the_units_explain_names_a_factor_for_are_all_among_the_explainable(metric):
    """FactorFit.explainable lets a refit ask `explain` of a few units only: every unit with a line must be in it."""
    model = fit(population(3, metric, copies=2), metric)
    explainable = model.explainable().tolist()
    with_lines = {key for key in model.units if model.explain(key)}
    assert with_lines, "the factor units are explained"
    assert all(explainable[model.units[key].index] for key in with_lines)
    assert not all(explainable), "a normal unit is left out"


def test_each_units_differences_from_the_reference_are_read_off_its_runs():
    """explain_model's `differs` (per unit, from the fit's levels per unit) says what a walk over the unit's own runs
    says: a flag set on any run, a category level other than the reference, a mean half a step or more away."""
    from analysis.explain_model import _differs_by_unit
    from analysis.factor_model.data import BY_KEY, level_of

    model = fit(population(4, SEQ), SEQ)
    differs = _differs_by_unit(model)
    for figures in model.units.values():
        expected = set()
        for key, reference in model.reference.items():
            spec = BY_KEY[key]
            values = [level_of(spec, run) for run in figures.unit.runs]
            if spec.kind == "continuous":
                away = abs(math.fsum(map(float, values)) / len(values) - reference) >= spec.step / 2
            else:
                away = any(values) if spec.kind == "bool" else any(v != reference for v in values)
            if away:
                expected.add(key)
        assert differs[figures.index] == expected, figures.unit.id
    assert differs[model.units["old-firmware"].index] >= {"firmware"}
    assert differs[model.units["gen2"].index] >= {"link_limited", "host_cpu"}


@pytest.mark.parametrize("metric", [SEQ, RW])
def test_the_contributions_explain_reads_are_every_significant_one_the_unit_is_away_in(metric):
    """`explain` reads a unit's contributions through Contributions.significant_away (found for every unit at
    once): the same columns, in the same order and with the same estimates, as the unit's full contributions filtered
    on being away from the reference with a significant effect."""
    model = fit(population(5, metric, copies=2), metric)
    checked = 0
    for figures in model.units.values():
        expected = [item for item in figures.contributions if item[2] and item[1].significant]
        got = figures.significant_away_contributions()
        assert [(c, e, a) for c, e, a, _ in got] == [(c, e, a) for c, e, a, _ in expected], figures.unit.id
        assert [s for *_, s in got] == [s for *_, s in expected]
        assert all(type(number) is float for *_, s in got for number in (s.value, s.low, s.high))
        checked += bool(expected)
    assert checked >= 5, "units away in a significant column are checked"
