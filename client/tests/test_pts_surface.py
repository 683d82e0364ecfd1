"""The queue-depth x block-size surface (nvmedb extension): its grid, its options and its derived figures."""

import json

import pytest
from click.testing import CliRunner

from nvmedb_client import plan as p
from nvmedb_client.cli import main
from nvmedb_client.pts import surface as s
from nvmedb_client.pts.surface_figures import CellValue, derive, differences

KIB, MIB, GIB = 1024, 1024**2, 1024**3
TB = 1_000_000_000_000


def surface_plan(**options):
    return p.build_plan(tests=["surface"], capacity_bytes=TB, surface=s.SurfaceOptions(**options) if options else None)


def test_the_full_grid_is_every_power_of_two_from_4_kib_to_64_mib_and_qd_1_to_1024():
    plan = surface_plan()
    assert s.block_sizes(plan.surface.options) == [4 * KIB * 2**i for i in range(15)]
    assert s.queue_depths(plan.surface.options) == [2**i for i in range(11)]
    assert plan.surface.cell_s == s.PTS_CELL_S
    kept = {(c.pattern, c.block_size_bytes, c.iodepth) for c in plan.surface.cells}
    skipped = {(c.pattern, c.block_size_bytes, c.iodepth) for c, _ in plan.surface.skipped}
    assert len(kept) + len(skipped) == 4 * 15 * 11
    assert all(bs * qd > GIB for _, bs, qd in skipped) and all(bs * qd <= GIB for _, bs, qd in kept)
    assert ("read", 64 * MIB, 16) in kept and ("read", 64 * MIB, 32) in skipped


def test_the_block_purges_preconditions_and_runs_reads_then_writes_with_random_write_preconditioning_last():
    plan = surface_plan(max_bs=8 * KIB, max_qd=2)
    (block,) = plan.blocks
    assert (block.test, block.purge, block.wipc) == ("surface", True, True)
    order = [(series.phase, series.cells[0].pattern, series.max_rounds) for series in block.series]
    assert order == [
        ("surface", "read", 3), ("surface", "randread", 3), ("surface", "write", 3), ("surface-pc", "randwrite", 1),
        ("surface", "randwrite", 3),
    ]  # fmt: skip
    assert [(c.block_size_bytes, c.iodepth) for c in block.series[0].cells] == [
        (4096, 1),
        (4096, 2),
        (8192, 1),
        (8192, 2),
    ]
    assert all(series.threads == 1 for series in block.series)
    ids = [series.run_id(r, cell) for series in block.series for r in (1, 2, 3) for cell in series.cells]
    assert "surface-randread-bs8192-qd2-rep3" in ids and "surface-randwrite-pc" in ids


def test_the_surface_is_an_extension_never_in_the_default_plan_and_never_a_compliance_reason():
    assert "surface" not in p.build_plan(capacity_bytes=TB).tests
    plan = p.build_plan(tests=["iops", "surface"], capacity_bytes=TB)
    assert plan.compliant, plan.compliance_reasons
    data = p.plan_to_dict(plan)
    assert data["extensions"]["surface"]["label"] == "nvmedb extension, not part of the SNIA PTS"
    assert data["extensions"]["surface"]["target_note"] is None


def test_a_file_target_surface_says_it_measures_the_file_system_path():
    plan = p.build_plan(tests=["surface"], profile="quick", capacity_bytes=256 * MIB, target_kind="file")
    assert "file system path" in p.plan_to_dict(plan)["extensions"]["surface"]["target_note"]


def test_the_quick_grid_s_three_repetitions_run_in_about_a_minute_on_a_256_mib_file(monkeypatch):
    monkeypatch.delenv(p.QUICK_CELL_ENV, raising=False)
    plan = p.build_plan(tests=["surface"], profile="quick", capacity_bytes=256 * MIB, target_kind="file")
    assert s.block_sizes(plan.surface.options) == [4 * KIB, 64 * KIB, MIB]
    assert s.queue_depths(plan.surface.options) == [1, 16]
    assert plan.surface.cell_s == 0.5 and plan.surface.options.repetitions == 3
    assert p.estimate_duration(plan).max_s < 90


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"min_bs": 3000}, "--surface-min-bs must be a power of two"),
        ({"min_bs": 2 * KIB}, "between 4 KiB and 64 MiB"),
        ({"max_bs": 128 * MIB}, "between 4 KiB and 64 MiB"),
        ({"min_bs": MIB, "max_bs": 64 * KIB}, "is larger than --surface-max-bs"),
        ({"max_qd": 2048}, "--surface-max-qd must be a power of two from 1 to 1024"),
        ({"max_qd": 3}, "--surface-max-qd must be a power of two"),
        ({"max_qd": 0}, "--surface-max-qd must be a power of two"),
        ({"bs_step": 1}, "--surface-bs-step must be a power of two of at least 2"),
        ({"qd_step": 6}, "--surface-qd-step must be a power of two of at least 2"),
        ({"patterns": ()}, "needs at least one of"),
        ({"patterns": ("randrw",)}, "unknown surface pattern 'randrw'"),
        ({"patterns": ("read", "read")}, "names a pattern twice"),
        ({"cell_s": 0.0}, "--surface-cell-s must be more than 0"),
        ({"cell_s": 1e9}, "at most 3600 seconds"),
        ({"max_inflight_bytes": 1}, "no cell could run"),
    ],
)
def test_a_grid_out_of_its_limits_is_refused_with_the_option_named(options, message):
    with pytest.raises(s.SurfaceError, match=message):
        surface_plan(**options)


def test_a_block_size_larger_than_the_range_or_smaller_than_the_lba_is_refused():
    with pytest.raises(s.SurfaceError, match="larger than the active range"):
        p.build_plan(tests=["surface"], capacity_bytes=8 * MIB, surface=s.SurfaceOptions(max_bs=16 * MIB))
    with pytest.raises(s.SurfaceError, match="smaller than the namespace's LBA"):
        p.build_plan(tests=["surface"], capacity_bytes=TB, lba_size_bytes=8192)


def test_surface_options_without_the_surface_test_are_refused():
    with pytest.raises(ValueError, match="surface test is not selected"):
        p.build_plan(tests=["iops"], capacity_bytes=TB, surface=s.SurfaceOptions())


def run_plan(*args):
    return CliRunner().invoke(main, ["plan", *args])


def test_plan_shows_the_grid_its_duration_and_bundle_size_with_the_extension_label():
    result = run_plan(
        "--tests", "surface", "--surface-max-bs", "1MiB", "--surface-max-qd", "64", "--surface-cell-s", "5"
    )
    assert result.exit_code == 0, result.output
    assert "nvmedb extension, not part of the SNIA PTS" in result.output
    assert "queue depths: 1, 2, 4, 8, 16, 32, 64" in result.output
    assert "estimated duration" in result.output and "estimated bundle size" in result.output
    assert "the surface is an nvmedb extension: never a PTS result or compliance" in result.output
    data = json.loads(run_plan("--tests", "surface", "--surface-max-bs", "1MiB", "--json").output)
    surface = data["extensions"]["surface"]
    assert surface["block_sizes_bytes"][-1] == MIB and len(surface["cells"]) == 4 * 9 * 11
    assert data["estimate"]["duration_s"]["max"] > 4 * 9 * 11 * 10


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--surface-max-bs", "lots"], "cannot read the size"),
        (["--surface-max-qd", "1e3"], "is not a whole number"),
        (["--surface-max-qd", "4096"], "from 1 to 1024"),
        (["--surface-cell-s", "nan"], "--surface-cell-s must be more than 0"),
        (["--surface-cell-s", "soon"], "is not a number of seconds"),
        (["--surface-patterns", "read,; rm -rf /"], "unknown surface pattern"),
        (["--surface-min-bs", "-4KiB"], "cannot read the size"),
    ],
)
def test_plan_refuses_hostile_surface_flags_with_a_clear_error(flags, message):
    result = run_plan("--tests", "surface", *flags)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_surface_flags_without_the_surface_test_are_refused_by_plan():
    result = run_plan("--tests", "iops", "--surface-max-qd", "8")
    assert result.exit_code != 0 and "surface test is not selected" in result.output


# --- derived figures ------------------------------------------------------------------------------------------


def cell(pattern, bs, qd, bw, iops=None):
    return CellValue(pattern, bs, qd, f"surface-{pattern}-bs{bs}-qd{qd}", bw, bw / bs if iops is None else iops)


def knee(figures, pattern="read"):
    entry = next(p for p in figures["patterns"] if p["pattern"] == pattern)
    return entry["knee"] and (entry["knee"]["block_size_bytes"], entry["knee"]["iodepth"])


def test_a_cell_at_exactly_90_percent_of_the_peak_is_the_knee_and_one_just_below_is_not():
    cells = [cell("read", 4096, 1, 900), cell("read", 4096, 2, 950), cell("read", 8192, 4, 1000)]
    assert knee(derive(cells)) == (4096, 1)
    below = [cell("read", 4096, 1, 899.9999), cell("read", 4096, 2, 950), cell("read", 8192, 4, 1000)]
    assert knee(derive(below)) == (4096, 2)


def test_exactly_90_percent_is_compared_exactly_on_whole_bytes_per_second():
    exact = [cell("write", 4096, 1, 2_700_000_000), cell("write", 4096, 2, 3_000_000_000)]
    assert knee(derive(exact), "write") == (4096, 1)
    short = [cell("write", 4096, 1, 2_699_999_999), cell("write", 4096, 2, 3_000_000_000)]
    assert knee(derive(short), "write") == (4096, 2)


def test_a_tie_in_bytes_in_flight_goes_to_the_lower_queue_depth():
    cells = [cell("read", 8192, 1, 1000), cell("read", 4096, 2, 1000), cell("read", 4096, 1, 10)]
    figures = derive(cells)
    assert knee(figures) == (8192, 1)
    assert [c["knee"] for c in figures["cells"] if c["knee"]] == [True]


def test_a_missing_cell_is_listed_with_its_reason_and_the_knee_uses_the_measured_ones():
    planned = [{"pattern": "read", "block_size_bytes": 4096, "iodepth": qd} for qd in (1, 2, 4)]
    skipped = [{"pattern": "read", "block_size_bytes": 4096, "iodepth": 8, "reason": "too many bytes in flight"}]
    cells = [cell("read", 4096, 1, 100), cell("read", 4096, 4, 400), CellValue("read", 4096, 2, "x", None, None)]
    figures = derive(cells, planned=planned, skipped=skipped)
    assert knee(figures) == (4096, 4)
    assert [(m["iodepth"], m["reason"]) for m in figures["missing"]] == [
        (2, "its fio output has no figure for it"),
        (8, "too many bytes in flight"),
    ]
    assert derive(cells[:2], planned=planned)["missing"][0]["reason"] == "no run in the bundle"


def test_the_speedup_is_iops_over_the_qd1_iops_and_is_none_with_a_reason_when_qd1_is_zero_or_missing():
    cells = [
        cell("randread", 4096, 1, 4096 * 100, 100), cell("randread", 4096, 8, 4096 * 650, 650),
        cell("randread", 8192, 1, 0, 0), cell("randread", 8192, 8, 8192 * 10, 10),
        cell("randread", 16384, 8, 16384 * 10, 10),
    ]  # fmt: skip
    rows = {(c["block_size_bytes"], c["iodepth"]): c for c in derive(cells)["cells"]}
    assert rows[(4096, 1)]["speedup"] == 1.0 and rows[(4096, 8)]["speedup"] == 6.5
    assert (
        rows[(8192, 8)]["speedup"] is None and rows[(8192, 8)]["speedup_reason"] == "the QD 1 cell measured zero IOPS"
    )
    assert rows[(16384, 8)]["speedup_reason"] == "no QD 1 cell at this block size"


def test_a_pattern_measuring_no_bandwidth_has_no_knee_and_says_why():
    figures = derive([cell("write", 4096, 1, 0, 0)])
    (pattern,) = figures["patterns"]
    assert pattern["knee"] is None and "zero bandwidth" in pattern["knee_reason"]


def test_differences_name_a_claimed_knee_peak_or_cell_the_raw_data_does_not_give():
    cells = [cell("read", 4096, 1, 900), cell("read", 4096, 2, 1000)]
    derived = derive(cells)
    assert differences(json.loads(json.dumps(derived)), derived) == []
    claimed = json.loads(json.dumps(derived))
    claimed["patterns"][0]["knee"]["iodepth"] = 2
    claimed["cells"][0]["iops"] *= 1.01
    claimed["cells"].append({"pattern": "read", "block_size_bytes": 8192, "iodepth": 1})
    found = differences(claimed, derived)
    assert any("90% knee" in line for line in found)
    assert any("iops=" in line for line in found)
    assert any("claims a cell it has no run for" in line for line in found)
    assert differences(None, derived) == ["the manifest has no surface figures for its surface runs"]
    assert differences(claimed, None) == ["the manifest claims surface figures, but the bundle has no surface runs"]


HOSTILE = (None, True, -1, 2**64, 1e308, "", "x" * 10_000, [], {}, [1, [2]], {"a": {"b": []}})


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_claim_or_plan_is_compared_or_left_out_without_raising(value):
    from nvmedb_client.pts.surface_figures import derive_from_manifest

    cells = [cell("read", 4096, 1, 900), cell("read", 4096, 2, 1000)]
    derived = derive(cells)
    for claimed in (
        {"patterns": value, "cells": value},
        {"patterns": [{"pattern": value, "knee": value, "peak_bw_bytes_per_s": value}]},
        {"cells": [{"pattern": value, "block_size_bytes": value, "iodepth": value, "iops": value}]},
    ):
        found = differences(claimed, derived)
        assert found and all(isinstance(line, str) and len(line) < 400 for line in found)
    runs = [
        {"id": c.run_id, "test": "surface", "phase": "surface", "pattern": "read", "block_size_bytes": 4096,
         "iodepth": c.iodepth} for c in cells
    ] + [{"id": "odd", "test": "surface", "phase": "surface", "pattern": "read", "block_size_bytes": 8192,
          "iodepth": value}]  # fmt: skip
    plan = {"extensions": {"surface": {"cells": [value, {"pattern": "read", "block_size_bytes": value,
            "iodepth": 1}], "skipped_cells": value, "target_note": value}}}  # fmt: skip
    from types import SimpleNamespace

    summaries = {c.run_id: SimpleNamespace(read_bw_bytes_per_s=c.bw_bytes_per_s, read_iops=c.iops) for c in cells}
    figures = derive_from_manifest({"runs": runs, "plan": plan}, summaries)
    assert [(c["block_size_bytes"], c["iodepth"]) for c in figures["cells"]] == [(4096, 1), (4096, 2)]


def test_run_refuses_a_hostile_surface_flag_before_writing_anything(tmp_path):
    out = tmp_path / "out"
    result = CliRunner(env={"NVMEDB_CONFIG_DIR": str(tmp_path / "config")}).invoke(
        main,
        ["run", "--target-file", str(tmp_path / "t.img"), "--size", "256MiB", "--profile", "quick", "--tests",
         "surface", "--surface-max-qd", "4096", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code != 0 and "--surface-max-qd must be a power of two from 1 to 1024" in result.output
    assert not out.exists() and not (tmp_path / "t.img").exists()


def test_a_resumed_run_rebuilds_the_same_surface_grid_from_its_checkpoint(tmp_path):
    from nvmedb_client.run_state import RunConfig, config_from_state, create_run_dir, load_state

    options = s.SurfaceOptions(min_bs=8 * KIB, max_bs=MIB, bs_step=4, max_qd=64, qd_step=8, patterns=("randread",))
    config = RunConfig(
        target_kind="file", target_path=str(tmp_path / "t.img"), size_bytes=256 * MIB, tests=["surface"],
        edition="enterprise", profile="quick", cell_runtime_s=1.0, surface=options.to_dict(),
    )  # fmt: skip
    run_dir = create_run_dir(config=config, out_dir=tmp_path / "out")
    rebuilt = config_from_state(load_state(run_dir)).build_plan()
    assert rebuilt.surface.options == options
    assert [(c.block_size_bytes, c.iodepth) for c in rebuilt.surface.cells] == [
        (bs, qd) for bs in (8 * KIB, 32 * KIB, 128 * KIB, 512 * KIB) for qd in (1, 8, 64)
    ]
