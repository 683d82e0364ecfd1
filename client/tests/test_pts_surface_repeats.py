"""The surface's repeated cells (nvmedb extension): the option, the interleaved plan and its time, the medians, the
spread and the knee's agreement between repetitions."""

import json

import pytest
from click.testing import CliRunner

from nvmedb_client import plan as p
from nvmedb_client import resume
from nvmedb_client.cli import main
from nvmedb_client.pts import surface as s
from nvmedb_client.pts.surface_figures import CellValue, derive, differences

KIB, MIB = 1024, 1024**2
TB = 1_000_000_000_000


def quick_plan(**options):
    surface = s.SurfaceOptions(**{**s.QUICK_OPTIONS.to_dict(), "patterns": ("read",), **options})
    return p.build_plan(tests=["surface"], profile="quick", capacity_bytes=256 * MIB, surface=surface)


def test_the_plan_s_time_estimate_counts_every_repetition():
    one, three = quick_plan(repetitions=1), quick_plan(repetitions=3)
    cells = len(three.surface.cells)
    per_cell = three.surface.cell_s + p.ASSUMED_RUN_OVERHEAD_S
    for bound in ("min_s", "max_s"):
        added = getattr(p.estimate_duration(three), bound) - getattr(p.estimate_duration(one), bound)
        assert added == pytest.approx(2 * cells * per_cell)


def test_every_repetition_has_its_own_run_id_and_a_resumed_run_knows_them_all():
    plan = quick_plan()
    (block,) = plan.blocks
    ids = resume.block_run_ids(block)
    assert len([i for i in ids if i.startswith("surface-read-")]) == len(plan.surface.cells) * 3
    assert "surface-read-bs65536-qd16-rep3" in ids and "surface-read-bs65536-qd16-rep4" not in ids


@pytest.mark.parametrize("value", [0, 6, -1])
def test_repetitions_out_of_1_to_5_are_refused_naming_the_option(value):
    with pytest.raises(s.SurfaceError, match="--surface-repetitions must be from 1 to 5"):
        quick_plan(repetitions=value)


def test_plan_prints_the_repetitions_and_says_when_a_trial_surface_is_not_repeatable():
    runner = CliRunner()
    args = ["plan", "--size", "1TB", "--tests", "surface", "--profile", "quick"]
    shown = runner.invoke(main, [*args, "--surface-repetitions", "2"])
    assert shown.exit_code == 0, shown.output
    assert "2 repetition(s) of every cell" in shown.output and "not repeatable" in shown.output
    default = runner.invoke(main, [*args, "--json"])
    surface = json.loads(default.output)["extensions"]["surface"]
    assert (surface["repetitions"], surface["repeatable"]) == (3, True)
    refused = runner.invoke(main, [*args, "--surface-repetitions", "two"])
    assert refused.exit_code != 0 and "is not a whole number" in refused.output


def rep(bs, qd, bw, repetition, pattern="read"):
    return CellValue(pattern, bs, qd, f"surface-{pattern}-bs{bs}-qd{qd}-rep{repetition}", bw, bw / bs, repetition)


def test_a_cell_s_figure_is_the_median_with_min_max_and_its_coefficient_of_variation():
    figures = derive([rep(4096, 1, 100, 1), rep(4096, 1, 130, 2), rep(4096, 1, 90, 3)], repetitions=3)
    (cell,) = figures["cells"]
    assert (cell["bw_bytes_per_s"], cell["bw_min_bytes_per_s"], cell["bw_max_bytes_per_s"]) == (100, 90, 130)
    mean = (100 + 130 + 90) / 3
    sd = (((100 - mean) ** 2 + (130 - mean) ** 2 + (90 - mean) ** 2) / 2) ** 0.5
    assert cell["bw_cv"] == pytest.approx(sd / mean) and cell["noisy"] is True  # about 19%
    assert cell["run_id"] == "surface-read-bs4096-qd1-rep1" and cell["n_repetitions"] == 3
    assert figures["repeatable"] is True and figures["patterns"][0]["noisy_cells"] == 1
    steady = derive([rep(4096, 1, 100, 1), rep(4096, 1, 105, 2), rep(4096, 1, 98, 3)], repetitions=3)
    assert steady["cells"][0]["noisy"] is False and steady["patterns"][0]["noisy_cells"] == 0


def test_the_knee_is_computed_on_the_medians_and_counts_the_repetitions_that_agree():
    # repetitions 1 and 3 reach 90% at QD 2; repetition 2 has a lucky QD 4 cell that moves its own knee to QD 4
    cells = [
        rep(4096, 1, 50, 1), rep(4096, 2, 95, 1), rep(4096, 4, 100, 1),
        rep(4096, 1, 50, 2), rep(4096, 2, 95, 2), rep(4096, 4, 300, 2),
        rep(4096, 1, 50, 3), rep(4096, 2, 96, 3), rep(4096, 4, 100, 3),
    ]  # fmt: skip
    (pattern,) = derive(cells, repetitions=3)["patterns"]
    assert (pattern["knee"]["iodepth"], pattern["peak_bw_bytes_per_s"]) == (2, 100)
    assert [k["iodepth"] for k in pattern["knee_by_repetition"]] == [2, 4, 2]
    assert (pattern["knee_agreeing_repetitions"], pattern["repetitions"], pattern["knee_moves"]) == (2, 3, True)


def test_one_repetition_has_no_spread_and_says_why_and_a_missing_repetition_is_named():
    old = derive([CellValue("read", 4096, 1, "surface-read-bs4096-qd1", 100, 25)])
    (cell,) = old["cells"]
    assert cell["n_repetitions"] == 1 and cell["bw_cv"] is None and cell["bw_min_bytes_per_s"] is None
    assert "one repetition" in cell["spread_reason"] and cell["noisy"] is None
    assert old["repeatable"] is False and old["patterns"][0]["knee_moves"] is False
    planned = [{"pattern": "read", "block_size_bytes": 4096, "iodepth": 1}]
    partial = derive([rep(4096, 1, 100, 1), rep(4096, 1, 110, 3)], planned=planned, repetitions=3)
    assert partial["missing"] == [
        {"pattern": "read", "access": "sequential", "direction": "read", "block_size_bytes": 4096, "iodepth": 1,
         "repetition": 2, "reason": "no run in the bundle"},
    ]  # fmt: skip
    assert partial["cells"][0]["n_repetitions"] == 2 and partial["cells"][0]["bw_bytes_per_s"] == 105


def test_a_claimed_spread_that_differs_from_the_raw_data_is_named():
    derived = derive([rep(4096, 1, 100, 1), rep(4096, 1, 130, 2), rep(4096, 1, 90, 3)], repetitions=3)
    claimed = json.loads(json.dumps(derived))
    assert differences(claimed, derived) == []
    claimed["cells"][0]["bw_max_bytes_per_s"] = 100
    (found,) = differences(claimed, derived)
    assert "bw_max_bytes_per_s=100" in found and "130" in found
