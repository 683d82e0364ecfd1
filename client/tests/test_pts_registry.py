"""A test is its module plus one registry line: a made-up test registered here is planned, printed and judged for
steady state by the plan, the CLI and tracking.py, none of which knows its name."""

import dataclasses
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from nvmedb_client import plan as p
from nvmedb_client.cli import main
from nvmedb_client.fio_output import FioSummary
from nvmedb_client.plan_types import STOP_WRITTEN, Block, Cell, Planned, Series, tracking_variable
from nvmedb_client.pts import registry
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
