"""DIRTH's histogram captures: the plan declares them, the histogram of each operating point comes from its capture
and only from a capture that ran at the point the sweep gives (crafted fio outputs at the boundaries), and the
runner's hook runs one capture per point the sweep can give."""

import json
import shutil

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_pts_dirth import _fio_doc, _runs_and_files

from nvmedb_client import bundle as bundle_module
from nvmedb_client import resume, runner
from nvmedb_client.cli import main
from nvmedb_client.plan import build_plan, plan_to_dict, quick_profile
from nvmedb_client.progress import Reporter
from nvmedb_client.pts import demand_intensity, dirth_capture, dirth_run
from nvmedb_client.runner import _Context

GIB = 1024**3
SWEEP = {(4, 4): 1000.0, (2, 4): 400.0, (4, 1): 600.0, (1, 1): 0.0}  # max TC 4/QD 4, min TC 1/QD 1


def _capture_doc(tc: int, qd: int, bins: dict) -> dict:
    doc = _fio_doc(500.0, bins)
    doc["global options"] = {"rw": "randrw", "bs": "8192", "rwmixread": "65", "iodepth": str(qd)}
    doc["jobs"][0]["job options"] = {"numjobs": str(tc)}
    return doc


def _with_captures(sweep: dict, captures: dict[str, tuple[int, int, dict]]):
    """Sweep runs of round 1 (each cell's bins {1000: 1}) and capture runs {point: (tc, qd, fio doc)}."""
    runs, read = _runs_and_files({(1, tc, qd): _fio_doc(v, {1000: 1}) for (tc, qd), v in sweep.items()})
    files = {}
    for point, (tc, qd, doc) in captures.items():
        run_id = dirth_capture.run_id(point)
        files[f"fio/{run_id}.json"] = json.dumps(doc).encode()
        runs.append({"id": run_id, "test": "dirth", "phase": "capture", "round": 1, "block_size_bytes": 8192,
                     "read_pct": 65, "threads": tc, "iodepth": qd, "output_file": f"fio/{run_id}.json"})  # fmt: skip
    return runs, lambda rel: files[rel] if rel in files else read(rel)


def _at(tc, qd, bins=None):
    return (tc, qd, _capture_doc(tc, qd, bins or {20_000: 7}))


def test_the_plan_declares_one_capture_per_operating_point_after_the_sweep():
    plan = build_plan(tests=["dirth"], capacity_bytes=GIB)
    (block,) = plan.blocks
    assert [(c.point, c.runtime_s) for c in block.captures] == [("max", 600), ("mid", 600), ("min", 600)]
    data = plan_to_dict(plan)
    (captures,) = [b["captures"] for b in data["blocks"]]
    assert [c["run_id"] for c in captures] == ["dirth-capture-max", "dirth-capture-mid", "dirth-capture-min"]
    assert all(c["threads"] is None and "decided after the sweep" in c["decided"] for c in captures)
    # 1 WIPC + 49 cells x 5 to 25 rounds + a pre-write before each round + 3 captures, each after a pre-write
    assert data["estimate"]["fio_runs"] == {"min": 1 + 50 * 5 + 3 * 2, "max": 1 + 50 * 25 + 3 * 2}
    ecw = plan_to_dict(build_plan(tests=["ecw"], capacity_bytes=GIB))
    assert "captures" not in ecw["blocks"][0]


def test_quick_captures_last_a_few_cells():
    plan = build_plan(tests=["dirth"], capacity_bytes=256 * 1024**2, target_kind="file", profile=quick_profile(1))
    assert [c.runtime_s for c in plan.blocks[0].captures] == [3, 3, 3]


def test_plan_prints_the_captures_and_their_length():
    out = CliRunner().invoke(main, ["plan", "--tests", "dirth", "--size", "1TB"]).output
    assert (
        "captures: 3 fio run(s) after the sweep, one per operating point: max (600 s), mid (600 s), min (600 s)" in out
    )
    assert "TC/QD decided after the sweep" in out


def test_each_histogram_comes_from_its_capture_at_the_points_tc_and_qd():
    runs, read = _with_captures(SWEEP, {"max": _at(4, 4, {50_000: 3}), "mid": _at(4, 1), "min": _at(1, 1)})
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    assert len(entry["points"]) == 4  # the captures are not cells of the curve
    by_point = {h["point"]: h for h in entry["histograms"]}
    assert by_point["max"] == {"point": "max", "run_id": "dirth-capture-max", "latency": "lat", "total_ios": 3,
                               "buckets": [[50_000, 63_000, 3]], "source": "capture"}  # fmt: skip
    assert by_point["mid"]["run_id"] == "dirth-capture-mid" and by_point["mid"]["total_ios"] == 7


def test_a_capture_at_another_tc_qd_is_not_published_for_the_point():
    runs, read = _with_captures(SWEEP, {"max": _at(4, 4), "mid": _at(2, 4), "min": _at(1, 1)})
    mid = next(
        h
        for h in demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))["histograms"]
        if h["point"] == "mid"
    )
    assert "buckets" not in mid and mid["flag"] == "dirth_capture_mismatch"
    assert "ran at TC 2/QD 4, not at the TC 4/QD 1 the sweep gives mid" in mid["missing"]


def test_a_capture_whose_fio_output_contradicts_its_run_entry_is_a_mismatch():
    _, _, doc = _at(2, 4)  # fio ran TC 2/QD 4, the manifest says TC 4/QD 1
    runs, read = _with_captures(SWEEP, {"max": _at(4, 4), "mid": (4, 1, doc), "min": _at(1, 1)})
    mid = next(
        h
        for h in demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))["histograms"]
        if h["point"] == "mid"
    )
    assert mid["flag"] == "dirth_capture_mismatch" and "records TC 2/QD 4" in mid["missing"]


@pytest.mark.parametrize("iodepth", ["-1", "4x", "\u0664", "0", 4])
def test_hostile_recorded_options_leave_the_capture_unchecked_and_unpublished(iodepth):
    _, _, doc = _at(4, 1)
    doc["global options"]["iodepth"] = iodepth
    runs, read = _with_captures(SWEEP, {"max": _at(4, 4), "mid": (4, 1, doc), "min": _at(1, 1)})
    mid = next(
        h
        for h in demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))["histograms"]
        if h["point"] == "mid"
    )
    assert mid["flag"] == "dirth_capture_mismatch" and "cannot be checked" in mid["missing"]


def test_a_missing_capture_leaves_its_point_without_a_histogram_and_says_so():
    runs, read = _with_captures(SWEEP, {"max": _at(4, 4), "min": _at(1, 1)})
    by_point = {
        h["point"]: h for h in demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))["histograms"]
    }
    assert by_point["mid"]["flag"] == "dirth_capture_missing"
    assert "no capture run of mid (TC 4/QD 1)" in by_point["mid"]["missing"]
    assert "buckets" in by_point["max"] and "buckets" in by_point["min"]


def test_a_tie_for_mid_decides_which_capture_matches():
    # target (1000 + 0) / 2 = 500: TC 4/QD 1 (600) and TC 2/QD 4 (400) are equally near; the lower OIO is MidIOPS
    for tc, qd, published in ((4, 1, True), (2, 4, False)):
        runs, read = _with_captures(SWEEP, {"max": _at(4, 4), "mid": _at(tc, qd), "min": _at(1, 1)})
        mid = next(
            h
            for h in demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))["histograms"]
            if h["point"] == "mid"
        )
        assert ("buckets" in mid) is published


@pytest.mark.parametrize("bins", [{"-1": 1}, {"abc": 1}, {"100": -3}, {"100": 1.5}, {str(2**63): 1}])
def test_a_capture_with_hostile_bins_has_no_histogram_and_a_reason(bins):
    _, _, doc = _at(4, 1)
    doc["jobs"][0]["write"]["lat_ns"]["bins"] = bins
    runs, read = _with_captures(SWEEP, {"max": _at(4, 4), "mid": (4, 1, doc), "min": _at(1, 1)})
    mid = next(
        h
        for h in demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))["histograms"]
        if h["point"] == "mid"
    )
    assert "latency bin" in mid["missing"] and mid["source"] == "capture" and "buckets" not in mid


def test_a_bundle_without_captures_keeps_the_sweep_cells_histograms_unlabelled():
    runs, read = _with_captures(SWEEP, {})
    histograms = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))["histograms"]
    assert [h["run_id"] for h in histograms] == ["dirth-r01-tc04-qd04", "dirth-r01-tc04-qd01", "dirth-r01-tc01-qd01"]
    assert all("source" not in h for h in histograms)


def test_without_a_tc1_qd1_measurement_only_maxiops_is_captured():
    sweep = {k: v for k, v in SWEEP.items() if k != (1, 1)}
    runs, read = _with_captures(sweep, {"max": _at(4, 4)})
    entry = demand_intensity.derive("dirth", runs, demand_intensity.parsing(read))
    assert [h["point"] for h in entry["histograms"]] == ["max"]
    assert all("TC 1/QD 1" in op["missing"] for op in entry["operating_points"] if op["name"] != "max")


def test_an_interruption_during_the_captures_keeps_the_sweep():
    state = {"position": {"block": "dirth", "stage": "captures", "round": 2, "round_complete": False},
             "saved_at": "2026-11-23T10:00:00Z", "sessions": [{"started_at": "2026-11-23T09:00:00Z"}, {}]}  # fmt: skip
    gap = resume.interruption(state, now="2026-11-23T10:05:00Z")
    assert gap["action"] == "continued" and "the sweep and the finished captures are kept" in gap["reason"]
    block = build_plan(tests=["dirth"], capacity_bytes=GIB).blocks[0]
    assert {"dirth-capture-max", "dirth-capture-mid", "dirth-capture-min"} <= resume.block_run_ids(block)


# -- a real run interrupted during its captures --------------------------------------------------------------------


class _InterruptAt(Reporter):
    """Asks the runner to stop while fio runs `cell`, as SIGINT would (the run then ends at that fio run)."""

    def __init__(self, cell: str):
        self.cell, self.runner = cell, None

    def update(self, status, event):
        if event == "cell-started" and status.cell == self.cell:
            self.runner.interrupted = "SIGINT"


def interrupted_quick_dirth_run(tmp_path, cell: str):
    """The run directory of a real quick DIRTH run on a 64 MiB file, stopped while fio ran `cell`."""
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed")
    config = runner.RunConfig(
        target_kind="file", target_path=str(tmp_path / "t.img"), size_bytes=64 * 1024**2, tests=["dirth"],
        edition="enterprise", profile="quick", cell_runtime_s=0.5,
    )  # fmt: skip
    run_dir = runner.create_run_dir(config=config, out_dir=tmp_path)
    reporter = _InterruptAt(cell)
    first = runner.Runner(run_dir=run_dir, reporter=reporter)
    reporter.runner = first
    with pytest.raises(runner.RunInterrupted):
        first.execute(out_dir=tmp_path / "out", signing_key=Ed25519PrivateKey.generate())
    return run_dir


@pytest.mark.fio
def test_a_run_interrupted_during_its_captures_resumes_without_redoing_the_sweep(tmp_path):
    run_dir = interrupted_quick_dirth_run(tmp_path, "dirth-capture-mid")
    state = runner.load_state(run_dir)
    before = {run["id"]: run["started_at"] for run in state["runs"]}
    assert "dirth-capture-max" in before and "dirth-capture-mid" not in before
    state["saved_at"] = "2026-01-01T00:00:00.000000Z"  # the interruption lasted long: the drive could idle
    runner.write_json_atomic(run_dir / "state.json", state)

    path = runner.Runner(run_dir=run_dir).execute(out_dir=tmp_path / "out", signing_key=Ed25519PrivateKey.generate())
    manifest = bundle_module.verify_bundle(path, extract_to=tmp_path / "x").manifest
    (gap,) = manifest["interruptions"]
    assert gap["action"] == "continued" and gap["stage"] == "captures"
    assert any("during the operating-point captures" in r for r in manifest["compliance"]["reasons"])
    assert not json.loads((run_dir / "state.json").read_text()).get("superseded_runs")
    after = {run["id"]: run["started_at"] for run in manifest["runs"]}
    assert {k: after[k] for k in before} == before  # the sweep and the first capture were not run again
    assert [r for r in after if r.startswith("dirth-capture")] == [
        "dirth-capture-max", "dirth-capture-mid", "dirth-capture-min"
    ]  # fmt: skip
    (claim,) = manifest["demand_intensity"]
    assert [h.get("source") for h in claim["histograms"]] == ["capture"] * 3
    assert all(h["total_ios"] > 0 for h in claim["histograms"])


class _Recorder:
    """The runner methods dirth_run.run_captures calls, recording what it asks for (the fio runs themselves are
    tested with real fio above; this pins which points get a capture when the sweep cannot give them all)."""

    def __init__(self, files, runs):
        self.files, self.state, self.completed = (
            files,
            {"runs": runs, "ioengine": {"engine": "psync", "note": None}},
            {},
        )
        self.context, self.recorded_target, self.messages, self.fio_runs = _Context(), "t.img", [], []
        self.plan = build_plan(tests=["dirth"], capacity_bytes=GIB, target_kind="file", profile=quick_profile(1))

    def _position(self, **where):
        pass

    def _update(self, **where):
        pass

    def _message(self, text):
        self.messages.append(text)

    run_cell = runner.Runner.run_cell  # the real job rendering, down to the fio call recorded below

    def _run_fio(self, **run):
        self.fio_runs.append(run)


def test_without_a_tc1_qd1_measurement_only_maxiops_is_run_and_the_others_say_why(tmp_path):
    sweep = {(2, 4): 1000.0, (2, 1): 400.0, (1, 4): 600.0}  # no TC 1/QD 1 cell
    runs, read = _runs_and_files({(1, tc, qd): _fio_doc(v, {1000: 1}) for (tc, qd), v in sweep.items()})
    for run in runs:
        (tmp_path / run["output_file"]).parent.mkdir(exist_ok=True)
        (tmp_path / run["output_file"]).write_bytes(read(run["output_file"]))
    recorder = _Recorder(tmp_path, runs)
    block = recorder.plan.blocks[0]
    dirth_run.run_captures(recorder, block)
    prewrite, run = recorder.fio_runs  # the point's pre-write, then its capture, at the same TC/QD
    assert (prewrite["run_id"], prewrite["phase"], prewrite["runtime_s"]) == ("dirth-prewrite-max", "prewrite", 2)
    assert (prewrite["threads"], prewrite["iodepth"]) == (2, 4) and "rw=randwrite" in prewrite["job_text"]
    sweep_cell = next(c for c in block.series[0].cells if (c.threads, c.iodepth) == (2, 4))
    assert (run["run_id"], run["cell"], run["runtime_s"]) == ("dirth-capture-max", sweep_cell, 3)
    assert "rw=randrw" in run["job_text"] and "iodepth=4" in run["job_text"] and "numjobs=2" in run["job_text"]
    assert recorder.messages == [
        f"no {p} capture: the TC 1/QD 1 cell (MinIOPS) has no measurement" for p in ("mid", "min")
    ]
