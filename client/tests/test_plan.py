"""The PTS v2.0.2 plan: order, matrix, editions, tracking variables, compliance and estimates."""

import gzip
import itertools
import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvmedb_client import plan as p
from nvmedb_client.cli import main

KIB = 1024
TB = 1_000_000_000_000
IOPS_BS = [1024 * KIB, 128 * KIB, 64 * KIB, 32 * KIB, 16 * KIB, 8 * KIB, 4 * KIB, 512]
IOPS_MIXES = [100, 95, 65, 50, 35, 5, 0]


def cells(series):
    return [(c.pattern, c.block_size_bytes, c.read_pct) for c in series.cells]


@pytest.mark.parametrize("edition", ["enterprise", "client"])
def test_the_iops_round_loops_over_mixes_outside_and_block_sizes_inside(edition):
    plan = p.build_plan(edition=edition, capacity_bytes=TB)
    iops = plan.blocks[0]
    assert (iops.test, iops.purge, iops.wipc) == ("iops", True, True)
    (series,) = iops.series
    expected = [("randrw", bs, mix) for mix in IOPS_MIXES for bs in IOPS_BS]
    assert cells(series) == expected
    assert series.runtime_s == 60 and series.max_rounds == 25


def test_the_enterprise_plan_runs_every_test_in_pts_order_with_tc4_qd32_and_the_whole_drive():
    plan = p.build_plan(tests=["wsat", "lat", "iops", "tp"], edition="enterprise", capacity_bytes=TB)
    assert plan.tests == ("iops", "tp", "lat", "wsat")
    assert [b.label for b in plan.blocks] == ["iops", "tp-bs1048576", "tp-bs131072", "lat", "wsat"]
    assert (plan.threads, plan.iodepth) == (4, 32)
    assert plan.edition.write_cache_enabled is False
    assert plan.active_range_bytes == TB // (1024 * KIB) * (1024 * KIB)
    assert plan.compliant, plan.compliance_reasons


def test_the_client_plan_has_one_throughput_size_tc2_qd16_and_75_percent_of_the_drive():
    plan = p.build_plan(edition="client", capacity_bytes=TB)
    assert [b.label for b in plan.blocks] == ["iops", "tp-bs1048576", "lat", "wsat"]
    assert (plan.threads, plan.iodepth) == (2, 16)
    assert plan.edition.write_cache_enabled is True
    assert plan.active_range_bytes == (TB * 75 // 100) // (1024 * KIB) * (1024 * KIB)
    assert all(s.threads == 2 and s.iodepth == 16 for b in plan.blocks if b.test in ("iops", "wsat") for s in b.series)


def test_each_throughput_block_purges_preconditions_then_writes_then_reads_sequentially():
    plan = p.build_plan(tests=["tp"], capacity_bytes=TB)
    for block, bs in zip(plan.blocks, [1024 * KIB, 128 * KIB], strict=True):
        assert (block.purge, block.wipc) == (True, True)
        write, read = block.series
        assert (write.phase, cells(write)) == ("tp-write", [("write", bs, 0)])
        assert (read.phase, cells(read)) == ("tp-read", [("read", bs, 100)])
        assert write.split_range and read.split_range
        assert (write.threads, write.iodepth) == (read.threads, read.iodepth) == (1, 32)  # one stream, TC 1 / QD 32
        assert block.wipc_block_size_bytes == bs  # preconditioned with the block size under test
        assert block.interleaved  # each round: a write segment, then a read segment


def test_a_thread_or_depth_override_applies_to_throughput_too_and_is_recorded():
    plan = p.build_plan(tests=["tp"], capacity_bytes=TB, threads=2, iodepth=8)
    assert all((s.threads, s.iodepth) == (2, 8) for b in plan.blocks for s in b.series)
    assert not plan.compliant


def test_latency_runs_at_tc1_qd1_over_three_mixes_and_three_small_block_sizes():
    plan = p.build_plan(tests=["lat"], capacity_bytes=TB)
    (series,) = plan.blocks[0].series
    assert (series.threads, series.iodepth) == (1, 1)
    assert cells(series) == [("randrw", bs, mix) for mix in (100, 65, 0) for bs in (512, 4 * KIB, 8 * KIB)]


def test_wsat_purges_without_preconditioning_and_samples_every_minute_for_at_most_a_day():
    plan = p.build_plan(tests=["wsat"], edition="client", capacity_bytes=TB)
    (block,) = plan.blocks
    assert (block.purge, block.wipc) == (True, False)
    (series,) = block.series
    assert cells(series) == [("randwrite", 4 * KIB, 0)]
    assert (series.threads, series.iodepth, series.runtime_s, series.max_rounds) == (2, 16, 60, 24 * 60)
    assert plan.wsat_target_bytes == 4 * TB


def test_the_tracking_variables_are_the_ones_the_pts_names():
    data = p.plan_to_dict(p.build_plan(capacity_bytes=TB))
    by_label = {b["label"]: [v["id"] for s in b["series"] for v in s["tracking_variables"]] for b in data["blocks"]}
    assert by_label["iops"] == [
        "iops.total_iops.rw000.bs4096",
        "iops.total_iops.rw065.bs65536",
        "iops.total_iops.rw100.bs1048576",
    ]
    assert by_label["tp-bs131072"] == [
        "tp.write_bw_bytes_per_s.rw000.bs131072",
        "tp.read_bw_bytes_per_s.rw100.bs131072",
    ]
    assert by_label["lat"] == ["lat.lat_mean_ns.rw000.bs4096"]
    assert by_label["wsat"] == []


def test_every_run_of_a_plan_has_its_own_id():
    plan = p.build_plan(capacity_bytes=TB, profile="quick")
    ids = [b.wipc_run_id for b in plan.blocks if b.wipc]
    for block in plan.blocks:
        for series in block.series:
            ids += [series.run_id(r, c) for r, c in itertools.product(range(1, 26), series.cells)]
    assert len(ids) == len(set(ids))


def test_the_pts_plan_on_a_device_is_compliant():
    assert p.build_plan(capacity_bytes=TB).compliance_reasons == ()


def test_quick_file_targets_and_overrides_are_listed_as_reasons_for_non_compliance():
    plan = p.build_plan(capacity_bytes=TB, profile="quick", target_kind="file", threads=8, iodepth=4, edition="client")
    reasons = " | ".join(plan.compliance_reasons)
    assert not plan.compliant
    assert "profile quick" in reasons
    assert "file target" in reasons
    assert "TC 8 instead of the client edition's TC 2" in reasons
    assert "QD 4 instead of the client edition's QD 16" in reasons


def test_the_edition_values_given_explicitly_are_not_an_override():
    assert p.build_plan(capacity_bytes=TB, threads=4, iodepth=32).compliant


def test_fewer_rounds_than_the_pts_allows_is_non_compliant_and_more_is_recorded():
    assert "max rounds lowered to 10" in p.build_plan(capacity_bytes=TB, max_rounds=10).compliance_reasons[0]
    more = p.build_plan(capacity_bytes=TB, max_rounds=40)
    assert more.compliant
    assert p.plan_to_dict(more)["max_rounds"] == 40
    assert {s.max_rounds for b in more.blocks if b.test != "wsat" for s in b.series} == {40}


def test_the_quick_profile_caps_the_range_and_shortens_cells(monkeypatch):
    monkeypatch.delenv(p.QUICK_CELL_ENV, raising=False)
    plan = p.build_plan(capacity_bytes=TB, profile="quick")
    assert plan.active_range_bytes == 1024**3
    assert plan.wsat_target_bytes == 4 * 1024**3
    assert {s.runtime_s for b in plan.blocks for s in b.series} == {1.0}
    assert plan.max_rounds == 2


def test_the_quick_cell_time_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(p.QUICK_CELL_ENV, "2")
    assert p.quick_profile().cell_runtime_s == 2.0
    monkeypatch.setenv(p.QUICK_CELL_ENV, "soon")
    with pytest.raises(ValueError, match="NVMEDB_QUICK_CELL_S"):
        p.quick_profile()


def test_the_active_range_is_whole_mebibytes_so_every_block_size_tiles_it():
    plan = p.build_plan(capacity_bytes=256 * 1024**2 + 12345, edition="client", profile="quick")
    assert plan.active_range_bytes % (1024 * KIB) == 0
    assert plan.active_range_bytes <= (256 * 1024**2 + 12345) * 0.75


def test_a_target_too_small_for_the_plan_is_refused_with_the_numbers():
    with pytest.raises(ValueError, match="too small"):
        p.build_plan(capacity_bytes=3 * 1024**2)


@pytest.mark.parametrize(
    ("text", "value"),
    [("256MiB", 256 * 1024**2), ("1G", 1024**3), ("500GB", 500 * 10**9), ("4096", 4096), ("1.5KiB", 1536)],
)
def test_sizes_are_read_with_binary_and_decimal_units(text, value):
    assert p.parse_size(text) == value


@pytest.mark.parametrize("text", ["", "12 parsecs", "-1G", "0.3B"])
def test_a_size_that_is_not_a_size_is_refused(text):
    with pytest.raises(ValueError):
        p.parse_size(text)


def test_the_quick_plan_is_designed_to_fit_in_five_minutes():
    plan = p.build_plan(capacity_bytes=256 * 1024**2, profile=p.quick_profile(1.0), target_kind="file")
    assert p.estimate_duration(plan).max_s < 300


def test_a_full_pts_estimate_has_lower_and_upper_bounds_in_hours():
    estimate = p.estimate_duration(p.build_plan(capacity_bytes=TB))
    # 5 to 25 IOPS rounds of 56 one-minute cells alone take 4.7 to 23.3 hours
    assert 5 * 56 * 60 < estimate.min_s < estimate.max_s
    assert estimate.max_s > 25 * 56 * 60


def test_the_bundle_estimate_per_fio_output_covers_a_real_pts_runs_compressed_json_plus(shared_samples):
    outputs = sorted((shared_samples / "ssspt-hp-iops-1").glob("*.json"))
    assert len(outputs) > 100
    sizes = [len(gzip.compress(path.read_bytes())) for path in outputs]
    assert statistics.mean(sizes) <= p.FIO_OUTPUT_GZIP_BYTES <= 2 * max(sizes)


def test_the_bundle_estimate_grows_with_the_number_of_runs():
    low, high = p.estimate_bundle_bytes(p.build_plan(capacity_bytes=TB))
    runs_low, runs_high = p.count_runs(p.build_plan(capacity_bytes=TB))
    assert low < high
    assert high - low == (runs_high - runs_low) * (
        p.FIO_OUTPUT_GZIP_BYTES + p.RUN_EXTRA_GZIP_BYTES + p.MANIFEST_GZIP_BYTES_PER_RUN
    )


def test_plan_json_prints_the_manifest_plan_and_text_mentions_every_part():
    result = CliRunner().invoke(main, ["plan", "--edition", "client", "--size", "512GB", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data == p.plan_to_dict(p.build_plan(edition="client", capacity_bytes=512 * 10**9))
    text = CliRunner().invoke(main, ["plan", "--tests", "iops,lat", "--threads", "8"])
    assert text.exit_code == 0, text.output
    for needle in (
        "R/W mixes (outer loop): 100/0, 95/5, 65/35",
        "0.5 KiB",
        "TC 8 / QD 32",
        "tracking: total_iops",
        "estimated duration",
        "estimated bundle size",
        "NOT a PTS result",
        "first steady round",
    ):
        assert needle in text.output


def test_plan_refuses_an_unknown_test_with_the_choices():
    result = CliRunner().invoke(main, ["plan", "--tests", "iops,speed"])
    assert result.exit_code == 2
    assert "speed" in result.output and "iops, tp, lat, wsat" in result.output


FIXTURES = Path(__file__).parent / "fixtures"


def test_on_a_4kn_namespace_half_kib_cells_are_planned_as_skipped_with_the_reason():
    plan = p.build_plan(capacity_bytes=TB, lba_size_bytes=4096)
    iops = next(b for b in plan.blocks if b.test == "iops").series[0]
    lat = next(b for b in plan.blocks if b.test == "lat").series[0]
    assert all(c.block_size_bytes >= 4096 for c in iops.cells + lat.cells)
    assert len(iops.cells) == 7 * 7 and len(lat.cells) == 3 * 2
    skipped = {(s.test, s.cell.block_size_bytes, s.cell.read_pct) for s in plan.skipped_cells}
    assert skipped == {("iops", 512, m) for m in p.IOPS_MIXES} | {("lat", 512, m) for m in p.LAT_MIXES}
    assert not plan.compliant
    assert any("LBA is 4096 bytes" in reason and "0.5 KiB" in reason for reason in plan.compliance_reasons)
    data = p.plan_to_dict(plan)
    assert data["lba_size_bytes"] == 4096 and len(data["skipped_cells"]) == 10


def test_a_512_byte_lba_namespace_runs_every_cell():
    plan = p.build_plan(capacity_bytes=TB, lba_size_bytes=512)
    assert plan.skipped_cells == () and plan.compliant


def _fake_nvme(monkeypatch, stdout, ok=True):
    from nvmedb_client.system import commands

    calls = []

    def fake_run_command(args, *, timeout=None, check=False):
        calls.append(list(args))
        return commands.CommandResult(
            args=tuple(args), returncode=0 if ok else 1, stdout=stdout, stderr="" if ok else "No such device",
            duration_s=0.01,
        )  # fmt: skip

    monkeypatch.setattr(commands, "run_command", fake_run_command)
    return calls


def test_plan_with_a_device_reads_its_size_and_lba_format_and_shows_the_skipped_cells(monkeypatch):
    from click.testing import CliRunner

    from nvmedb_client.cli import main

    calls = _fake_nvme(monkeypatch, (FIXTURES / "id-ns-4kn.json").read_text())
    result = CliRunner().invoke(main, ["plan", "--device", "/dev/nvme0n1"])
    assert result.exit_code == 0, result.output
    assert calls == [["nvme", "id-ns", "/dev/nvme0n1", "-o", "json"]]
    assert (
        "an NVMe namespace, capacity 960 GB (894 GiB), active range" in result.output
    )  # 234423126 x 4096 bytes, not 1 TB assumed
    assert "assumed" not in result.output and "LBA 4096 bytes" in result.output
    assert result.output.count("SKIPPED: randrw") == 10
    as_json = CliRunner().invoke(main, ["plan", "--device", "/dev/nvme0n1", "--json"])
    assert json.loads(as_json.output)["capacity_bytes"] == 234423126 * 4096


def test_plan_with_a_device_that_cannot_be_read_says_why(monkeypatch):
    from click.testing import CliRunner

    from nvmedb_client.cli import main

    _fake_nvme(monkeypatch, "", ok=False)
    result = CliRunner().invoke(main, ["plan", "--device", "/dev/nvme9n1"])
    assert result.exit_code != 0 and "cannot read the namespace of /dev/nvme9n1" in result.output


def test_a_quick_plan_without_a_device_is_estimated_for_a_file_target():
    result = CliRunner().invoke(main, ["plan", "--profile", "quick", "--json"])
    data = json.loads(result.output)
    assert data["target_kind"] == "file"
    real_quick_bundle = (
        0.67 * p.MIB
    )  # 147 runs on a loaded machine; a quiet one made 0.46 MiB (see QUICK_RUN_GZIP_BYTES)
    low, high = data["estimate"]["bundle_bytes"]["min"], data["estimate"]["bundle_bytes"]["max"]
    assert abs((low + high) / 2 - real_quick_bundle) <= 0.5 * real_quick_bundle
    text = CliRunner().invoke(main, ["plan", "--profile", "quick"]).output
    assert "target: a file (never purged), capacity 268 MB (256 MiB)" in text
    assert "iops: purge" not in text and "iops, WIPC" in text


def test_a_run_remembers_the_namespace_lba_size_so_a_resume_plans_the_same_skipped_cells():
    from dataclasses import asdict

    from nvmedb_client.run_state import RunConfig

    config = RunConfig(target_kind="device", target_path="/dev/nvme0n1", size_bytes=TB, tests=["lat"],
                       edition="enterprise", profile="pts", lba_size_bytes=4096)  # fmt: skip
    again = RunConfig(**json.loads(json.dumps(asdict(config))))
    assert again.build_plan().skipped_cells == config.build_plan().skipped_cells != ()


def test_a_namespace_whose_lba_exceeds_a_tracking_cell_tracks_only_the_cells_it_runs():
    plan = p.build_plan(tests=["lat"], capacity_bytes=TB, lba_size_bytes=8192)
    (series,) = plan.blocks[0].series
    assert p.series_tracking(series) == []  # the 4 KiB tracking cell cannot run on 8 KiB LBAs


# --- plan --target-file: the plan `run --target-file` follows, without touching the file -----------------------------


def files_under(path: Path) -> dict:
    return {p.relative_to(path): (p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*")}


@pytest.mark.parametrize(
    "options",
    [
        ["--size", "256MiB", "--profile", "quick", "--tests", "iops,lat,surface", "--surface-max-bs", "64KiB"],
        ["--size", "2GiB", "--tests", "tp,wsat", "--edition", "client", "--max-rounds", "3"],
    ],
)
def test_plan_on_a_target_file_prints_the_plan_run_follows_and_writes_nothing(options, tmp_path, monkeypatch):
    from nvmedb_client import runner
    from nvmedb_client.run_state import RunConfig

    planned_dir, run_dir = tmp_path / "planned", tmp_path / "run"
    planned_dir.mkdir()
    monkeypatch.setenv("NVMEDB_CONFIG_DIR", str(planned_dir / "config"))
    target = planned_dir / "target.img"
    result = CliRunner().invoke(main, ["plan", "--target-file", str(target), *options, "--json"])
    assert result.exit_code == 0, result.output
    planned = json.loads(result.output)
    assert files_under(planned_dir) == {}  # no target file, no config directory, no run directory

    started = []
    monkeypatch.setattr(runner, "execute_run", lambda **kwargs: started.append(kwargs["run_dir"]) or tmp_path / "b")
    monkeypatch.setenv("NVMEDB_CONFIG_DIR", str(run_dir / "config"))
    ran = CliRunner().invoke(main, ["run", "--target-file", str(target), *options, "--out", str(run_dir)])
    assert ran.exit_code == 0, ran.output
    config = RunConfig(**json.loads((started[0] / "state.json").read_text())["config"])
    assert config.target_kind == "file" and config.target_path == str(target)
    assert planned == p.plan_to_dict(config.build_plan())
    text = CliRunner().invoke(main, ["plan", "--target-file", str(target), *options])
    assert text.exit_code == 0, text.output
    assert f"target file: {target} (a run creates it; plan writes nothing)" in text.output
    assert "target: a file (never purged), capacity" in text.output and "(assumed; pass --size)" not in text.output
    assert "estimated duration" in text.output


def test_plan_on_an_existing_target_file_leaves_it_as_it_was(tmp_path):
    target = tmp_path / "target.img"
    target.write_bytes(b"keep me")
    before = files_under(tmp_path)
    result = CliRunner().invoke(main, ["plan", "--target-file", str(target), "--size", "256MiB", "--profile", "quick"])
    assert result.exit_code == 0, result.output
    assert "(exists: a run reuses it; plan writes nothing)" in result.output
    assert files_under(tmp_path) == before and target.read_bytes() == b"keep me"


def test_plan_says_when_run_would_refuse_the_target_file(tmp_path):
    target = tmp_path / "missing-folder" / "target.img"
    result = CliRunner().invoke(main, ["plan", "--target-file", str(target), "--size", "256MiB", "--profile", "quick"])
    assert result.exit_code == 1
    assert "estimated duration" in result.output  # the plan is printed first
    assert "`run` would refuse this target: The folder" in result.output
    assert not (tmp_path / "missing-folder").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "--target-file needs --size"),
        (["--size", "256MiB", "--device", "/dev/nvme0n1"], "Give exactly one target"),
    ],
)
def test_plan_on_a_target_file_needs_a_size_and_no_device(extra, message, tmp_path):
    result = CliRunner().invoke(main, ["plan", "--target-file", str(tmp_path / "t.img"), *extra])
    assert result.exit_code == 2 and message in result.output
    assert files_under(tmp_path) == {}
