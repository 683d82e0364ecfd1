"""DIRTH's pre-writes as the ADATA PTS 2.0 port runs them: the plan pins their parameters, `plan` shows and counts
them, a pre-write in the runs changes neither the curve, the operating points nor the tracking variable, and the
remaining-time estimate and resume account for them (the real runs are in test_pts_dirth.py's quick run)."""

import json

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_pts_dirth import _fio_doc, _runs_and_files
from test_pts_dirth_capture import interrupted_quick_dirth_run

from nvmedb_client import bundle as bundle_module
from nvmedb_client import resume, runner, tracking
from nvmedb_client.cli import main
from nvmedb_client.fio_output import parse_fio_output, summarize
from nvmedb_client.plan import build_plan, count_runs, estimate_duration, plan_to_dict, quick_profile
from nvmedb_client.pts import demand_intensity, dirth_prewrite

GIB = 1024**3


def _prewrites(plan):
    (block,) = [b for b in plan.blocks if b.test == "dirth"]
    return block, block.prewrites


def test_a_five_minute_random_write_at_tc32_qd32_and_8k_comes_before_every_round():
    block, prewrites = _prewrites(build_plan(tests=["dirth"], capacity_bytes=GIB))
    rounds = [p for p in prewrites if p.round is not None]
    assert [p.round for p in rounds] == list(range(1, block.series[0].max_rounds + 1)) == list(range(1, 26))
    assert [p.run_id for p in rounds[:3]] == ["dirth-r01-prewrite", "dirth-r02-prewrite", "dirth-r03-prewrite"]
    for p in rounds:
        assert (p.runtime_s, p.threads, p.iodepth) == (300, 32, 32)
        assert (p.pattern, p.read_pct, p.block_size_bytes) == ("randwrite", 0, 8 * 1024)


def test_a_sixty_minute_random_write_at_the_points_tc_qd_comes_before_each_capture():
    block, prewrites = _prewrites(build_plan(tests=["dirth"], capacity_bytes=GIB))
    points = [p for p in prewrites if p.point is not None]
    assert [(p.run_id, p.point) for p in points] == [
        ("dirth-prewrite-max", "max"), ("dirth-prewrite-mid", "mid"), ("dirth-prewrite-min", "min")
    ]  # fmt: skip
    assert [c.point for c in block.captures] == [p.point for p in points]
    for p in points:
        assert (p.runtime_s, p.threads, p.iodepth) == (3600, None, None)  # decided after the sweep
        assert (p.pattern, p.read_pct, p.block_size_bytes) == ("randwrite", 0, 8 * 1024)
    declared = plan_to_dict(build_plan(tests=["dirth"], capacity_bytes=GIB))["blocks"][0]["prewrites"]
    assert all(d["phase"] == "prewrite" for d in declared)
    assert all("decided after the sweep" in d["decided"] for d in declared if d["point"])


def test_quick_pre_writes_last_one_cell_before_a_round_and_two_before_a_capture():
    plan = build_plan(tests=["dirth"], capacity_bytes=256 * 1024**2, target_kind="file", profile=quick_profile(1))
    block, prewrites = _prewrites(plan)
    assert [(p.run_id, p.runtime_s, p.threads, p.iodepth) for p in prewrites] == [
        ("dirth-r01-prewrite", 1, 2, 4), ("dirth-r02-prewrite", 1, 2, 4),  # the quick sweep's highest TC/QD
        ("dirth-prewrite-max", 2, None, None), ("dirth-prewrite-mid", 2, None, None),
        ("dirth-prewrite-min", 2, None, None),
    ]  # fmt: skip
    assert estimate_duration(plan).max_s < 60


def test_ecw_has_no_pre_writes():
    (block,) = build_plan(tests=["ecw"], capacity_bytes=GIB).blocks
    assert block.prewrites == ()
    assert "prewrites" not in plan_to_dict(build_plan(tests=["ecw"], capacity_bytes=GIB))["blocks"][0]


def test_the_estimates_count_a_pre_write_per_round_run_and_one_per_capture():
    with_them = build_plan(tests=["dirth"], capacity_bytes=GIB)
    block = with_them.blocks[0]
    from dataclasses import replace

    without = replace(with_them, blocks=(replace(block, prewrites=()),))
    (low, high), (low0, high0) = count_runs(with_them), count_runs(without)
    assert (low - low0, high - high0) == (5 + 3, 25 + 3)  # 5 to 25 rounds, 3 captures
    d, d0 = estimate_duration(with_them), estimate_duration(without)
    overhead = 0.35
    assert abs((d.min_s - d0.min_s) - (5 * (300 + overhead) + 3 * (3600 + overhead))) < 1e-6
    assert abs((d.max_s - d0.max_s) - (25 * (300 + overhead) + 3 * (3600 + overhead))) < 1e-6


def test_plan_prints_the_pre_writes_and_counts_them():
    out = CliRunner().invoke(main, ["plan", "--tests", "dirth", "--size", "1TB"]).output
    assert "pre-writes: before each round, 300 s of random writes (R/W 0/100, 8 KiB) at TC 32/QD 32 (25 at most)" in out
    assert "before each capture, random writes (R/W 0/100, 8 KiB) at the point's TC/QD: max (3600 s)" in out
    data = json.loads(CliRunner().invoke(main, ["plan", "--tests", "dirth", "--size", "1TB", "--json"]).output)
    assert data["estimate"]["fio_runs"] == {"min": 1 + 50 * 5 + 3 * 2, "max": 1 + 50 * 25 + 3 * 2}


# -- the derivation ignores them -----------------------------------------------------------------------------------


def _with_prewrites(runs, read):
    """The runs plus a pre-write before each round at the tracked cell's TC/QD and one per point, each with an
    output far from any cell's (were it read as a cell, the curve, the points and the tracking would change)."""
    extra, files = [], {}
    rounds = sorted({r["round"] for r in runs})
    ids = [(dirth_prewrite.round_run_id(n), n, 4, 4) for n in rounds]
    ids += [(dirth_prewrite.point_run_id(p), 1, tc, qd) for p, tc, qd in (("max", 4, 4), ("mid", 4, 1), ("min", 1, 1))]
    for run_id, number, tc, qd in ids:
        files[f"fio/{run_id}.json"] = json.dumps(_fio_doc(10**6 * number, {100: 5})).encode()
        extra.append({"id": run_id, "test": "dirth", "phase": "prewrite", "round": number, "block_size_bytes": 8192,
                      "read_pct": 0, "pattern": "randwrite", "threads": tc, "iodepth": qd,
                      "output_file": f"fio/{run_id}.json"})  # fmt: skip

    def both(rel):
        return files[rel] if rel in files else read(rel)

    return runs + extra, both


def test_pre_write_runs_change_neither_the_curve_the_operating_points_nor_the_tracking_variable():
    iops = {(4, 4): 1000.0, (4, 1): 600.0, (1, 4): 400.0, (1, 1): 100.0}
    cells = {(rnd, tc, qd): _fio_doc(v + rnd, {1000: 1}) for rnd in range(1, 6) for (tc, qd), v in iops.items()}
    runs, read = _runs_and_files(cells)
    runs = [{**r, "block_size_bytes": 8192, "read_pct": 65, "pattern": "randrw"} for r in runs]  # the DIRTH cell
    all_runs, all_read = _with_prewrites(runs, read)
    assert len(all_runs) == len(runs) + 5 + 3
    assert demand_intensity.derive("dirth", all_runs, demand_intensity.parsing(all_read)) == demand_intensity.derive(
        "dirth", runs, demand_intensity.parsing(read)
    )
    entry = demand_intensity.derive("dirth", all_runs, demand_intensity.parsing(all_read))
    assert entry["round"] == 5 and entry["round_basis"] == "steady round"
    assert {p["name"]: p["run_id"] for p in entry["operating_points"]} == {
        "max": "dirth-r05-tc04-qd04", "mid": "dirth-r05-tc04-qd01", "min": "dirth-r05-tc01-qd01"
    }  # fmt: skip

    def summaries(rs, rd):
        return {r["id"]: summarize(parse_fio_output(rd(r["output_file"]))) for r in rs}

    assert tracking.evaluate_runs(all_runs, summaries(all_runs, all_read)) == tracking.evaluate_runs(
        runs, summaries(runs, read)
    )


# -- progress and resume -------------------------------------------------------------------------------------------


def test_the_remaining_time_counts_the_pre_writes_still_to_come(tmp_path):
    from nvmedb_client.run_state import RunConfig, create_run_dir

    config = RunConfig(target_kind="file", target_path=str(tmp_path / "t.img"), size_bytes=256 * 1024**2,
                       tests=["dirth"], edition="enterprise", profile="quick", cell_runtime_s=1.0)  # fmt: skip
    run = runner.Runner(run_dir=create_run_dir(config=config, out_dir=tmp_path / "runs"))
    low, high = run._remaining()
    prewrites = run.plan.blocks[0].prewrites
    for prewrite in prewrites:
        run.completed[prewrite.run_id] = {"id": prewrite.run_id}
    low_done, high_done = run._remaining()
    # quick: at most 2 rounds, both inside the window's minimum, so each bound drops by every pre-write
    overhead = 0.35
    total = sum(p.runtime_s + overhead for p in prewrites)
    assert abs((low - low_done) - total) < 1e-6 and abs((high - high_done) - total) < 1e-6


def test_an_interruption_during_a_round_pre_write_keeps_the_rounds_and_runs_it_again():
    state = {"position": {"block": "dirth", "stage": "prewrite", "round": 3, "round_complete": False},
             "saved_at": "2026-11-23T10:00:00Z", "sessions": [{"started_at": "2026-11-23T09:00:00Z"}, {}]}  # fmt: skip
    gap = resume.interruption(state, now="2026-11-23T10:05:00Z")
    assert gap["action"] == "continued" and "the pre-write before round 3" in gap["reason"]
    block = build_plan(tests=["dirth"], capacity_bytes=GIB).blocks[0]
    assert {"dirth-r01-prewrite", "dirth-r25-prewrite", "dirth-prewrite-min"} <= resume.block_run_ids(block)


@pytest.mark.fio
def test_a_run_interrupted_in_a_round_pre_write_runs_that_pre_write_again_and_keeps_the_rest(tmp_path):
    run_dir = interrupted_quick_dirth_run(tmp_path, "dirth-r02-prewrite")
    before = {run["id"]: run["started_at"] for run in runner.load_state(run_dir)["runs"]}
    assert "dirth-r01-prewrite" in before and "dirth-r01-tc01-qd01" in before and "dirth-r02-prewrite" not in before

    path = runner.Runner(run_dir=run_dir).execute(out_dir=tmp_path / "out", signing_key=Ed25519PrivateKey.generate())
    manifest = bundle_module.verify_bundle(path, extract_to=tmp_path / "x").manifest
    (gap,) = manifest["interruptions"]
    assert (gap["action"], gap["stage"], gap["round"]) == ("continued", "prewrite", 2)
    assert not json.loads((run_dir / "state.json").read_text()).get("superseded_runs")
    after = [run["id"] for run in manifest["runs"]]
    started = {run["id"]: run["started_at"] for run in manifest["runs"]}
    assert {k: started[k] for k in before} == before  # WIPC, the first pre-write and round 1 were not run again
    assert after.count("dirth-r02-prewrite") == 1 and after.index("dirth-r02-prewrite") == 6  # then round 2
    assert after[7] == "dirth-r02-tc02-qd04"
