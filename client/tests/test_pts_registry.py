"""A test is its module plus one registry line: a made-up test registered here is planned, printed and judged for
steady state by the plan, the CLI and tracking.py, its step before each round is run by rounds.py and its manifest
figures are re-derived, compared and printed by `verify`, none of which knows its name."""

import dataclasses
import json
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from bundle_factory import default_fio_samples, make_bundle
from nvmedb_client import plan as p
from nvmedb_client import rounds
from nvmedb_client.cli import main
from nvmedb_client.cli.exit_codes import VERIFY_FAILED
from nvmedb_client.fio_output import FioSummary
from nvmedb_client.plan_types import STOP_WRITTEN, Block, Cell, Planned, Series, tracking_variable
from nvmedb_client.pts import registry
from nvmedb_client.pts.figures import ManifestFigures
from nvmedb_client.tracking import evaluate_runs, series_tracking

KIB = 1024


def _fake_module() -> SimpleNamespace:
    """Random 16 KiB reads until their IOPS are steady, then a WSAT-like time series of 16 KiB writes."""

    def plan_blocks(test, ctx):
        rounds = Series(test, "fake-rounds", (Cell("randread", 16 * KIB, 100),), 1, 8, ctx.cell_s, ctx.max_rounds)
        samples = Series(
            test, "fake-samples", (Cell("randwrite", 16 * KIB, 0),), 1, 8, ctx.cell_s, 3, stop=STOP_WRITTEN
        )
        return Planned((Block(test, test, purge=True, wipc=False, series=(rounds, samples)),))

    def tracking_variables(test, *, block_sizes=(), demand_point=None):
        return [tracking_variable(test, "fake-rounds", "read_bw_bytes_per_s", 16 * KIB, 100)]

    return SimpleNamespace(
        plan_blocks=plan_blocks, tracking_variables=tracking_variables, TRACKED_PHASES=("fake-rounds",)
    )


@pytest.fixture
def fake_test(monkeypatch):
    monkeypatch.setitem(registry.MODULES, "fake", _fake_module())
    monkeypatch.setattr(p, "TESTS", (*p.TESTS, "fake"))
    return "fake"


def _summary(value: float) -> FioSummary:
    fields = {f.name: None for f in dataclasses.fields(FioSummary) if f.default is dataclasses.MISSING}
    fields.update(fio_version="fio-3.33", jobs=1, runtime_s=1.0, total_iops=value / (16 * KIB), percentiles_ns={})
    return FioSummary(**{**fields, "read_bw_bytes_per_s": value})


def test_a_registered_test_is_planned_with_its_tracking_variable_and_printed(fake_test):
    plan = p.build_plan(tests=[fake_test], profile="quick", capacity_bytes=256 * 1024 * KIB, target_kind="file")
    (block,) = plan.blocks
    rounds, samples = block.series
    assert [v.id for v in series_tracking(rounds)] == ["fake.read_bw_bytes_per_s.rw100.bs16384"]
    assert series_tracking(samples) == []  # a time series is never judged for steady state
    assert samples.run_id(2, samples.cells[0]) == "fake-r0002"

    result = CliRunner().invoke(main, ["plan", "--tests", fake_test, "--profile", "quick"])
    assert result.exit_code == 0, result.output
    assert "tracking: read_bw_bytes_per_s of 100/0 @ 16 KiB (fake.read_bw_bytes_per_s.rw100.bs16384)" in result.output
    assert "stop: first steady round, at most 2 rounds" in result.output
    assert "stop: stop when 4x the capacity" in result.output


def test_a_registered_test_is_judged_for_steady_state_from_its_runs(fake_test):
    values = [
        100e6,
        1000e6,
        1010e6,
        990e6,
        1000e6,
        1005e6,
    ]  # round 1 is far off: rounds 2-6 are the first steady window
    runs = [
        {"id": f"fake-r{r:02d}", "test": fake_test, "phase": "fake-rounds", "round": r, "block_size_bytes": 16 * KIB,
         "read_pct": 100}
        for r in range(1, len(values) + 1)
    ]  # fmt: skip
    summaries = {run["id"]: _summary(value) for run, value in zip(runs, values, strict=True)}
    (entry,) = evaluate_runs(runs, summaries)
    assert (entry["variable"], entry["steady"], entry["steady_round"]) == (
        "fake.read_bw_bytes_per_s.rw100.bs16384",
        True,
        6,
    )
    assert entry["window"]["first_round"] == 2

    (not_yet,) = evaluate_runs(runs[:5], summaries)  # rounds 1-5 include the far-off round: not steady
    assert not_yet["steady"] is False and "not reached" in not_yet["reason"]


def test_a_series_with_an_unknown_stop_rule_is_refused():
    with pytest.raises(ValueError, match="unknown stop rule 'until-bored' for the fake fake-rounds series"):
        Series("fake", "fake-rounds", (Cell("randread", 4 * KIB, 100),), 1, 1, 1.0, 2, stop="until-bored")


def _figures_module(claimed_runs: int | None = None) -> SimpleNamespace:
    """A made-up test adding figures to the manifest: how many IOPS runs the bundle has, re-derived by verify."""

    def count(manifest):
        return {"iops_runs": sum(1 for run in manifest["runs"] if run.get("test") == "iops")}

    figures = ManifestFigures(
        key="fake_figures",
        mismatch="fake figures differ",
        derive=lambda manifest, *, read, summaries, ioengine=None: count(manifest),
        rederive=lambda bundle: count(bundle.manifest),
        differences=lambda claimed, derived: [] if claimed == derived else [f"fake: {claimed} claimed, {derived} read"],
        verify_lines=lambda derived: [f"FAKE: {derived['iops_runs']} IOPS runs"],
    )
    return SimpleNamespace(**vars(_fake_module()), MANIFEST_FIGURES=figures)


def test_the_figures_tests_add_to_the_manifest_come_in_run_order_once_per_module(monkeypatch):
    assert [f.key for f in registry.manifest_figures()] == ["demand_intensity", "surface"]  # ECW and DIRTH share one
    monkeypatch.setitem(registry.MODULES, "fake", _figures_module())
    assert [f.key for f in registry.manifest_figures()] == ["demand_intensity", "surface", "fake_figures"]
    assert [f.key for f in registry.manifest_figures(extensions=True)] == ["surface"]
    assert [f.key for f in registry.manifest_figures(extensions=False)] == ["demand_intensity", "fake_figures"]


@pytest.mark.parametrize("claimed", [15, 14])
def test_verify_re_derives_compares_and_prints_a_registered_tests_figures(
    monkeypatch, tmp_path, shared_samples, claimed
):
    monkeypatch.setitem(registry.MODULES, "fake", _figures_module())
    bundle = make_bundle(
        tmp_path,
        fio_samples=default_fio_samples(shared_samples),
        manifest_changes={"fake_figures": {"iops_runs": claimed}},
    )
    text = CliRunner().invoke(main, ["verify", str(bundle)])
    output = CliRunner().invoke(main, ["verify", str(bundle), "--json"]).output
    answer, _ = json.JSONDecoder().raw_decode(output)  # a failed verify adds its sentence after the JSON
    assert answer["fake_figures"] == {"iops_runs": 15}  # the bundle's 15 IOPS rounds, whatever the claim
    if claimed == 15:
        assert text.exit_code == 0, text.output
        assert "FAKE: 15 IOPS runs" in text.output
        assert answer["ok"] is True
    else:
        assert text.exit_code == VERIFY_FAILED
        assert "its fake figures differ from its raw data: fake: {'iops_runs': 14} claimed" in text.output
        assert answer["differences"] == ["fake: {'iops_runs': 14} claimed, {'iops_runs': 15} read"]


def test_a_registered_tests_before_round_step_runs_before_each_round(fake_test, monkeypatch):
    calls = []
    module = SimpleNamespace(
        **vars(_fake_module()), before_round=lambda runner, block, n: calls.append((block.label, n))
    )
    monkeypatch.setitem(registry.MODULES, fake_test, module)
    plan = p.build_plan(tests=[fake_test], profile="quick", capacity_bytes=256 * 1024 * KIB, target_kind="file")
    (block,) = plan.blocks
    series = block.series[0]
    run_ids = {series.run_id(r, c) for r in range(1, series.max_rounds + 1) for c in series.cells}
    runner = SimpleNamespace(
        context=SimpleNamespace(round=None, cell_index=None),
        completed=run_ids,  # every cell already ran: only the steps around them are walked
        status=SimpleNamespace(tracking=None),
        reporter=SimpleNamespace(update=lambda status, event: None),
        _position=lambda **where: calls.append(("position", where["round"], where["round_complete"])),
        _summary=lambda run_id: _summary(1000e6),
    )
    rounds.run_rounds(runner, series, block)
    assert calls == [
        (fake_test, 1), ("position", 1, False), ("position", 1, True),
        (fake_test, 2), ("position", 2, False), ("position", 2, True),
    ]  # fmt: skip
