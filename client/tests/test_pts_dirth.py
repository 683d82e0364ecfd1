"""ECW and DIRTH on the client: the plan against the spec's parameters, the fio job, the derivation of the
demand-intensity curve, the operating points and the histograms (crafted fio outputs at their boundaries), and a
real quick run whose claim `verify` re-derives."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nvmedb_client import bundle as bundle_module
from nvmedb_client import fio_jobs
from nvmedb_client.cli import main
from nvmedb_client.plan import build_plan, estimate_duration, plan_to_dict, quick_profile
from nvmedb_client.pts import demand_intensity, dirth, ecw

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


def _series(plan, test):
    block = next(b for b in plan.blocks if b.test == test)
    return block, block.series[0]


@pytest.mark.parametrize("test", ["ecw", "dirth"])
def test_the_pts_sweep_runs_tc_and_qd_32_to_1_high_to_low_tracking_tc32_qd32(test):
    # the loops of the PTS-E demand-intensity tests (as the ADATA PTS 2.0 port runs them): 7 x 7 cells, 6 included
    plan = build_plan(tests=[test], capacity_bytes=100 * GIB)
    block, series = _series(plan, test)
    assert block.purge and block.wipc
    cells = [(c.threads, c.iodepth) for c in series.cells]
    assert cells == [(tc, qd) for tc in (32, 16, 8, 6, 4, 2, 1) for qd in (32, 16, 8, 6, 4, 2, 1)]
    assert {(c.pattern, c.block_size_bytes, c.read_pct) for c in series.cells} == {
        ("randrw", 4096 if test == "ecw" else 8192, 40 if test == "ecw" else 65)
    }
    assert series.runtime_s == 60 and series.max_rounds == 25 and series.phase == "wdpc"
    variables = plan_to_dict(plan)["blocks"][0]["series"][0]["tracking_variables"]
    assert variables == [
        {
            "id": f"{test}.total_iops.tc32.qd32",
            "metric": "total_iops",
            "block_size_bytes": 4096 if test == "ecw" else 8192,
            "read_pct": 40 if test == "ecw" else 65,
            "threads": 32,
            "iodepth": 32,
        }
    ]
    assert plan.compliant


def test_the_ecw_stimulus_is_the_spec_mix_of_block_sizes_reads_and_hot_zones():
    assert sum(pct for _, pct in ecw.BLOCK_SIZE_MIX) == 100
    assert dict(ecw.BLOCK_SIZE_MIX)[4096] == 67 and dict(ecw.BLOCK_SIZE_MIX)[512] == 4
    assert ecw.LBA_ZONES == ((50, 5), (30, 15), (20, 80)) and ecw.READ_PCT == 40
    plan = build_plan(tests=["ecw"], capacity_bytes=GIB, target_kind="file", profile="quick")
    _, series = _series(plan, "ecw")
    cell = series.cells[0]
    job = fio_jobs.render_cell(
        name="ecw-r01-tc02-qd04", filename="t.img", cell=cell, threads=cell.threads, iodepth=cell.iodepth,
        runtime_s=1, range_bytes=plan.active_range_bytes, split=False, ioengine="libaio",
    )  # fmt: skip
    lines = job.splitlines()
    assert "rw=randrw" in lines and "rwmixread=40" in lines and "iodepth=4" in lines and "numjobs=2" in lines
    assert "random_distribution=zoned:50/5:30/15:20/80" in lines
    assert "bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4096/67:8192/10:16384/7:32768/3:65536/3" in lines
    assert not any(line.startswith("bs=") for line in lines)


def test_dirth_is_the_oltp_stimulus_random_8k_65_percent_reads():
    plan = build_plan(tests=["dirth"], capacity_bytes=GIB, target_kind="file", profile="quick")
    _, series = _series(plan, "dirth")
    assert {(c.pattern, c.block_size_bytes, c.read_pct, c.workload) for c in series.cells} == {
        ("randrw", 8192, 65, None)
    }
    cell = series.cells[0]
    job = fio_jobs.render_cell(
        name="dirth-r01-tc02-qd04", filename="t.img", cell=cell, threads=cell.threads, iodepth=cell.iodepth,
        runtime_s=1, range_bytes=plan.active_range_bytes, split=False, ioengine="libaio",
    )  # fmt: skip
    lines = job.splitlines()
    assert "rw=randrw" in lines and "rwmixread=65" in lines and any(line.startswith("bs=8") for line in lines)


def test_the_quick_sweep_is_a_two_by_two_grid_of_short_cells_and_few_rounds():
    plan = build_plan(tests=["ecw", "dirth"], capacity_bytes=256 * MIB, target_kind="file", profile=quick_profile(1))
    for test in ("ecw", "dirth"):
        _, series = _series(plan, test)
        assert [(c.threads, c.iodepth) for c in series.cells] == [(2, 4), (2, 1), (1, 4), (1, 1)]
        assert series.runtime_s == 1 and series.max_rounds == 2
    estimate = plan_to_dict(plan)["estimate"]
    # 2 WIPC + 2 tests x 2 rounds x 4 cells + DIRTH's 2 round pre-writes + 3 captures, each after a pre-write
    assert estimate["fio_runs"] == {"min": 26, "max": 26}
    assert estimate_duration(plan).max_s < 60


def test_run_ids_name_the_thread_count_and_queue_depth():
    plan = build_plan(tests=["dirth"], capacity_bytes=GIB, target_kind="file", profile="quick")
    _, series = _series(plan, "dirth")
    assert series.run_id(3, series.cells[0]) == "dirth-r03-tc02-qd04"
    assert len({series.run_id(1, c) for c in series.cells}) == len(series.cells)


def test_ecw_is_skipped_with_the_reason_on_a_namespace_of_4k_lbas():
    plan = build_plan(tests=["ecw", "dirth"], capacity_bytes=100 * GIB, lba_size_bytes=4096)
    assert [b.test for b in plan.blocks] == ["dirth"]
    assert any("ecw skipped" in r and "4096-byte LBAs" in r for r in plan.compliance_reasons)


# -- the derivation on crafted fio outputs -----------------------------------------------------------------------


def _fio_doc(iops: float, bins: dict[int, int] | None, *, kind: str = "lat_ns", mean_ns: float = 1000.0) -> dict:
    ios = sum((bins or {}).values()) or 1
    latency = {"min": 1, "max": 10, "mean": mean_ns, "N": ios}
    if bins is not None:
        latency["bins"] = {str(k): v for k, v in bins.items()}
    write = {"iops": iops, "bw_bytes": int(iops * 4096), "io_bytes": ios * 4096, "io_kbytes": ios * 4,
             "runtime": 1000, "total_ios": ios, kind: latency}  # fmt: skip
    if kind == "clat_ns":
        write["lat_ns"] = {"min": 1, "max": 10, "mean": mean_ns, "N": ios}
    return {"fio version": "fio-3.33", "jobs": [{"jobname": "x", "error": 0, "write": write}]}


def _runs_and_files(cells: dict[tuple[int, int, int], dict]):
    runs, files = [], {}
    for (round_number, tc, qd), doc in cells.items():
        run_id = f"dirth-r{round_number:02d}-tc{tc:02d}-qd{qd:02d}"
        files[f"fio/{run_id}.json"] = json.dumps(doc).encode()
        runs.append({"id": run_id, "test": "dirth", "phase": "wdpc", "round": round_number, "block_size_bytes": 4096,
                     "read_pct": 0, "threads": tc, "iodepth": qd, "output_file": f"fio/{run_id}.json"})  # fmt: skip
    return runs, files.__getitem__


def test_the_operating_points_are_max_mid_and_tc1_qd1_with_ties_to_the_lower_demand():
    # (2,4) and (4,2) tie at the highest IOPS and the same OIO: the one with fewer threads wins
    iops = {(4, 2): 900.0, (2, 4): 900.0, (4, 1): 500.0, (2, 1): 600.0, (1, 1): 100.0}
    runs, read = _runs_and_files({(1, tc, qd): _fio_doc(v, {1000: 1}) for (tc, qd), v in iops.items()})
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    points = {p["name"]: (p.get("threads"), p.get("iodepth")) for p in entry["operating_points"]}
    # mid: target (900 + 100) / 2 = 500, met exactly by TC 4/QD 1; 600 is farther
    assert points == {"max": (2, 4), "mid": (4, 1), "min": (1, 1)}
    assert entry["round_basis"] == "last round: steady state not reached" and entry["round"] == 1


def test_a_mid_point_tie_goes_to_the_fewer_outstanding_ios():
    # target (1000 + 0.0) / 2 = 500: 400 and 600 are equally near; OIO 4 (TC 4/QD 1) beats OIO 8 (TC 2/QD 4)
    iops = {(4, 4): 1000.0, (2, 4): 400.0, (4, 1): 600.0, (1, 1): 0.0}
    runs, read = _runs_and_files({(1, tc, qd): _fio_doc(v, {1000: 1}) for (tc, qd), v in iops.items()})
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    assert next(p for p in entry["operating_points"] if p["name"] == "mid")["threads"] == 4


def test_max_and_mid_are_chosen_only_below_the_response_time_ceiling_which_is_exclusive():
    ceiling = dirth.RESPONSE_TIME_CEILING_NS
    cells = {
        (1, 4, 4): _fio_doc(2000.0, {1000: 1}, mean_ns=ceiling),  # the most IOPS, exactly at the ceiling: out
        (1, 4, 2): _fio_doc(1500.0, {1000: 1}, mean_ns=ceiling - 1),
        (1, 2, 2): _fio_doc(800.0, {1000: 1}),
        (1, 1, 1): _fio_doc(100.0, {1000: 1}),
    }
    runs, read = _runs_and_files(cells)
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    points = {p["name"]: (p.get("threads"), p.get("iodepth")) for p in entry["operating_points"]}
    # max: TC 4/QD 2 (1500); mid target (1500 + 100) / 2 = 800: TC 2/QD 2
    assert points == {"max": (4, 2), "mid": (2, 2), "min": (1, 1)}


def test_without_a_cell_below_the_ceiling_max_and_mid_are_missing_with_the_reason():
    ceiling = dirth.RESPONSE_TIME_CEILING_NS
    cells = {(1, 2, 2): _fio_doc(900.0, {1000: 1}, mean_ns=2 * ceiling),
             (1, 1, 1): _fio_doc(100.0, {1000: 1}, mean_ns=ceiling)}  # fmt: skip
    runs, read = _runs_and_files(cells)
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    by_name = {p["name"]: p for p in entry["operating_points"]}
    assert "below 5 ms" in by_name["max"]["missing"] and "below 5 ms" in by_name["mid"]["missing"]
    assert (by_name["min"]["threads"], by_name["min"]["iodepth"]) == (1, 1)
    assert [h["point"] for h in entry["histograms"]] == ["min"]


def test_a_missing_cell_is_recorded_missing_and_a_missing_tc1_qd1_leaves_min_and_mid_unchosen():
    cells = {(1, 2, 4): _fio_doc(900.0, {1000: 1}), (1, 1, 1): _fio_doc(100.0, {1000: 1}),
             (2, 2, 4): _fio_doc(950.0, {1000: 1})}  # fmt: skip
    runs, read = _runs_and_files(cells)
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    assert entry["round"] == 2
    missing = {(p["threads"], p["iodepth"]): p.get("missing") for p in entry["points"]}
    assert missing[(2, 4)] is None and missing[(1, 1)] == "round 2 has no run of TC 1/QD 1"
    by_name = {p["name"]: p for p in entry["operating_points"]}
    assert by_name["max"]["iops"] == 950.0
    assert "TC 1/QD 1" in by_name["min"]["missing"] and "TC 1/QD 1" in by_name["mid"]["missing"]
    assert [h["point"] for h in entry["histograms"]] == ["max"]


def test_a_bin_on_a_bucket_edge_falls_in_the_bucket_it_opens():
    assert 1000 in dirth.HISTOGRAM_EDGES_NS and 800 in dirth.HISTOGRAM_EDGES_NS
    rows = dirth.histogram({999: 1, 1000: 2, 1249: 3, 1250: 4, 50: 5, 10**12: 6})
    assert rows == [[0, 100, 5], [800, 1000, 1], [1000, 1250, 5], [1250, 1600, 4], [100 * 10**9, None, 6]]


def test_the_five_nines_is_fios_rule_over_the_merged_bins_and_clat_stands_in_without_lat_bins():
    bins = {1000: 99_999, 5000: 1}  # the 99.999th percentile is reached exactly at the last I/O of the first bin
    runs, read = _runs_and_files({(1, 1, 1): _fio_doc(10.0, bins)})
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    assert entry["points"][0]["lat_p99_999_ns"] == 1000.0
    runs, read = _runs_and_files({(1, 1, 1): _fio_doc(10.0, {1000: 99_998, 5000: 2}, kind="clat_ns")})
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    assert entry["points"][0]["lat_p99_999_ns"] == 5000.0
    assert entry["histograms"][0]["latency"] == "clat"


@pytest.mark.parametrize("bins", [{"-1": 1}, {"abc": 1}, {"100": -3}, {"100": 1.5}, {"100": True}])
def test_hostile_bins_make_the_point_missing_with_a_reason_not_a_crash(bins):
    doc = _fio_doc(10.0, {1000: 1})
    doc["jobs"][0]["write"]["lat_ns"]["bins"] = bins
    runs, read = _runs_and_files({(1, 1, 1): doc})
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    point = entry["points"][0]
    assert point["lat_p99_999_ns"] is None and "latency bin" in point["lat_p99_999_missing"]
    assert "latency bin" in entry["histograms"][0]["missing"]


def test_claim_differences_name_each_part_that_differs():
    derived = [{"test": "dirth", "round": 2, "points": [], "operating_points": [], "histograms": []}]
    claimed = [{**derived[0], "round": 3}, {"test": "ecw"}]
    differences = demand_intensity.claim_differences(claimed, derived)
    assert differences == [
        "dirth: the manifest's round differ from the raw data",
        "the manifest claims a demand-intensity result for ecw, which its runs do not support",
    ]
    assert demand_intensity.claim_differences(derived, derived) == []


# -- a real quick run --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    base = tmp_path_factory.mktemp("ecwdirth")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config"), "NVMEDB_QUICK_CELL_S": "1"}
    result = subprocess.run(
        [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
         str(base / "t.img"), "--size", "256MiB", "--profile", "quick", "--tests", "ecw,dirth", "--out",
         str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    path = json.loads(result.stdout)["bundle"]
    verified = bundle_module.verify_bundle(path, extract_to=base / "x")
    return path, verified, base


@pytest.mark.fio
def test_a_real_quick_run_carries_each_cells_raw_files_and_a_claim_verify_rederives(real_run):
    path, verified, _ = real_run
    manifest = verified.manifest
    files = {f["path"] for f in manifest["files"]}
    for test in ("ecw", "dirth"):
        runs = [r for r in manifest["runs"] if r["test"] == test and r["phase"] == "wdpc"]
        assert sorted((r["round"], r["threads"], r["iodepth"]) for r in runs) == sorted(
            (rnd, tc, qd) for rnd in (1, 2) for tc in (2, 1) for qd in (4, 1)
        )
        assert all(r["output_file"] in files and r["job_file"] in files for r in runs)
    claims = {e["test"]: e for e in manifest["demand_intensity"]}
    assert set(claims) == {"ecw", "dirth"}
    assert all(p["iops"] > 0 and p["lat_p99_999_ns"] >= p["lat_mean_ns"] > 0 for p in claims["ecw"]["points"])
    assert [p["name"] for p in claims["dirth"]["operating_points"]] == ["max", "mid", "min"]
    histograms = claims["dirth"]["histograms"]
    assert [h["point"] for h in histograms] == ["max", "mid", "min"]
    assert all(sum(b[2] for b in h["buckets"]) == h["total_ios"] > 0 for h in histograms)
    # each histogram is its point's capture, run after the sweep at the TC/QD the sweep gives the point
    captures = {r["id"]: r for r in manifest["runs"] if r["phase"] == "capture"}
    assert list(captures) == ["dirth-capture-max", "dirth-capture-mid", "dirth-capture-min"]
    for op, histogram in zip(claims["dirth"]["operating_points"], histograms, strict=True):
        run = captures[histogram["run_id"]]
        assert histogram["source"] == "capture" and run["output_file"] in files
        assert (run["threads"], run["iodepth"], run["runtime_s"]) == (op["threads"], op["iodepth"], 3)
        sweep = next(r for r in manifest["runs"] if r["test"] == "dirth" and r["phase"] == "wdpc")
        assert [run[k] for k in ("pattern", "block_size_bytes", "read_pct")] == [
            sweep[k] for k in ("pattern", "block_size_bytes", "read_pct")
        ]  # fmt: skip
    # the port's pre-writes: random writes at 8 KiB before each round (the sweep's highest TC/QD, one cell long)
    # and before each capture (its point's TC/QD, two cells long), in the run order the port has
    order = [r["id"] for r in manifest["runs"] if r["test"] == "dirth"]
    prewrites = {r["id"]: r for r in manifest["runs"] if r["phase"] == "prewrite"}
    assert list(prewrites) == ["dirth-r01-prewrite", "dirth-r02-prewrite", "dirth-prewrite-max",
                               "dirth-prewrite-mid", "dirth-prewrite-min"]  # fmt: skip
    assert order.index("dirth-r01-prewrite") == 1 and order.index("dirth-r02-prewrite") == 6  # after WIPC, round 1
    ops = {op["name"]: op for op in claims["dirth"]["operating_points"]}
    for run_id, run in prewrites.items():
        point = run_id.removeprefix("dirth-prewrite-")
        want = (2, 4, 1) if point not in ops else (ops[point]["threads"], ops[point]["iodepth"], 2)
        assert (run["threads"], run["iodepth"], run["runtime_s"]) == want
        assert (run["pattern"], run["block_size_bytes"], run["read_pct"]) == ("randwrite", 8192, 0)
        if point in ops:
            assert order.index(run_id) + 1 == order.index(f"dirth-capture-{point}")
        job = verified.read_bytes(run["job_file"]).decode()
        assert "rw=randwrite" in job and f"iodepth={want[1]}" in job and f"numjobs={want[0]}" in job
        recorded = json.loads(verified.read_bytes(run["output_file"]))["global options"]
        assert recorded["rw"] == "randwrite" and recorded["bs"] == "8192"
    assert demand_intensity.rederive(verified) == manifest["demand_intensity"]
    result = CliRunner().invoke(main, ["verify", path, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["demand_intensity"] == manifest["demand_intensity"]
    text = CliRunner().invoke(main, ["verify", path]).output
    assert "DIRTH: demand-intensity curve re-derived from round 2 (last round: steady state not reached)" in text
    assert "4 of 4 TC x QD cells measured; operating points max TC " in text
    assert "histograms from the captures" in text


@pytest.mark.parametrize("claimed", [None, "x", [1, "a"], [{"test": ["dirth"]}], {"test": "dirth"}])
def test_claims_of_any_shape_are_compared_without_an_error(claimed):
    derived = [{"test": "dirth", "round": 1, "points": [], "operating_points": [], "histograms": []}]
    differences = demand_intensity.claim_differences(claimed, derived)
    assert differences[0] == "the manifest has no demand-intensity result for dirth"


@pytest.mark.fio
def test_verify_refuses_a_signed_bundle_whose_operating_points_are_not_its_raw_datas(real_run, tmp_path):
    _, verified, base = real_run
    manifest = {k: v for k, v in verified.manifest.items() if k != "files"}
    dirth_claim = next(e for e in manifest["demand_intensity"] if e["test"] == "dirth")
    dirth_claim["operating_points"][0]["iops"] *= 2
    forged = bundle_module.write_bundle(
        run_dir=base / "x" / bundle_module.FILES_DIR, manifest=manifest, signing_key=Ed25519PrivateKey.generate(),
        out_path=tmp_path / "forged.nvmedb.tar.gz", files=[f["path"] for f in verified.manifest["files"]],
    )  # fmt: skip
    result = CliRunner().invoke(main, ["verify", str(forged)])
    assert result.exit_code != 0
    assert "dirth: the manifest's operating points differ from the raw data" in result.output


def test_plan_prints_the_sweep_the_stimulus_and_an_estimate_for_any_subset_of_tests():
    result = CliRunner().invoke(main, ["plan", "--tests", "dirth,ecw", "--size", "1TB"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "thread counts (outer loop, high to low): 32, 16, 8, 6, 4, 2, 1" in out
    assert "queue depths (inner loop, high to low): 32, 16, 8, 6, 4, 2, 1" in out
    assert "stimulus: random, 65/35 R/W, 8 KiB blocks" in out and "below 5 ms" in out
    assert "4 KiB 67%" in out and "50% of I/Os to 5% of the range" in out
    assert "tracking: total_iops at TC 32 / QD 32" in out and "MaxIOPS and MidIOPS among the cells" in out
    assert "estimated duration" in out and "estimated bundle size" in out
    data = json.loads(CliRunner().invoke(main, ["plan", "--tests", "dirth", "--size", "1TB", "--json"]).output)
    assert data["tests"] == ["dirth"]
    # 1 WIPC + 49 cells x 5 to 25 rounds + a pre-write before each round + 3 captures, each after a pre-write
    assert data["estimate"]["fio_runs"] == {"min": 1 + 50 * 5 + 3 * 2, "max": 1 + 50 * 25 + 3 * 2}


def test_the_client_edition_leaves_ecw_and_dirth_out_unless_asked_and_then_says_so():
    assert "ecw" not in build_plan(edition="client", capacity_bytes=GIB).tests
    plan = build_plan(tests=["dirth"], edition="client", capacity_bytes=GIB)
    assert "dirth: an Enterprise (PTS-E) test, run with the client edition's settings" in plan.compliance_reasons
