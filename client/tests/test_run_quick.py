"""Real `quick` runs with the real fio against temp files: the bundle, resuming after kill -9, and Ctrl-C.

One module-scoped run of every test on a 256 MiB file serves most assertions (it takes a few minutes on two
cores); the interruption tests use a smaller selection with half-second cells.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from nvmedb_client import resume as resume_module
from nvmedb_client.bundle import rederive_steady_state, verify_bundle
from nvmedb_client.cli import main
from nvmedb_client.fio_output import parse_fio_output, summarize
from nvmedb_client.plan import build_plan, quick_profile

pytestmark = pytest.mark.fio

CLIENT = [sys.executable, "-c", "from nvmedb_client.cli import main; main()"]
MIB = 1024**2


def client_env(config_dir: Path, cell_s: str) -> dict:
    return {**os.environ, "NVMEDB_CONFIG_DIR": str(config_dir), "NVMEDB_QUICK_CELL_S": cell_s}


def planned_ids(plan) -> list[str]:
    """Every run id of a plan whose series cannot become steady (fewer than 5 rounds), in execution order, WSAT aside."""
    assert plan.max_rounds < 5
    ids = []
    for block in plan.blocks:
        if block.wipc:
            ids.append(block.wipc_run_id)
        if block.interleaved:
            rounds = range(1, block.series[0].max_rounds + 1)
            ids += [s.run_id(r, c) for r in rounds for s in block.series for c in s.cells]
            continue
        for series in block.series:
            if series.phase == "wsat":
                continue
            ids += [series.run_id(r, c) for r in range(1, series.max_rounds + 1) for c in series.cells]
    return ids


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """`nvmedb-client run` of every test, quick profile, default settings, on a 256 MiB file."""
    base = tmp_path_factory.mktemp("quick")
    out = base / "out"
    env = client_env(base / "config", "1")
    started = time.monotonic()
    result = subprocess.run(
        CLIENT + ["run", "--target-file", str(base / "target.img"), "--size", "256MiB", "--profile", "quick",
                  "--out", str(out), "--json"],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout)
    extracted = base / "extracted"
    verified = verify_bundle(Path(answer["bundle"]), extract_to=extracted)
    return SimpleNamespace(
        base=base,
        env=env,
        elapsed=elapsed,
        bundle=Path(answer["bundle"]),
        run_dir=Path(answer["run_dir"]),
        verified=verified,
        manifest=verified.manifest,
        stderr=result.stderr,
    )


def test_every_test_runs_end_to_end_in_the_quick_profile_on_a_256_mib_file(quick_run):
    print(f"\nevery test, quick profile, 256 MiB file: {quick_run.elapsed:.0f} s wall time (target < 300 s)")
    assert {run["test"] for run in quick_run.manifest["runs"]} == {"iops", "tp", "lat", "wsat", "ecw", "dirth"}
    assert quick_run.bundle.parent == quick_run.run_dir.parent
    assert "round 2 done" in quick_run.stderr  # plain progress lines without a terminal
    # two rounds can never hold a 5-round window: the display says so instead of asking for more rounds
    assert "steady state cannot be judged in this profile (at most 2 rounds" in quick_run.stderr
    assert "needs 5" not in quick_run.stderr


def test_the_bundle_is_accepted_by_the_verify_command(quick_run):
    result = CliRunner().invoke(main, ["verify", str(quick_run.bundle), "--json"], env=quick_run.env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["ok"] is True


def test_every_planned_cell_ran_exactly_once_in_plan_order(quick_run):
    plan = build_plan(profile=quick_profile(1.0), capacity_bytes=256 * MIB, target_kind="file", edition="enterprise")
    ids = [run["id"] for run in quick_run.manifest["runs"]]
    expected = planned_ids(plan)
    assert [i for i in ids if not i.startswith("wsat-r")] == expected
    wsat_ids = [i for i in ids if i.startswith("wsat-r")]
    assert wsat_ids == [f"wsat-r{n:04d}" for n in range(1, len(wsat_ids) + 1)]
    first = ids.index(wsat_ids[0])  # WSAT runs between the latency test and ECW, without a gap
    assert ids[first : first + len(wsat_ids)] == wsat_ids and ids[first + len(wsat_ids)] == "ecw-wipc"
    state = json.loads((quick_run.run_dir / "state.json").read_text())
    assert [run["id"] for run in state["runs"]] == ids


def test_wsat_stopped_at_the_first_sample_that_reached_four_times_the_capacity(quick_run):
    wsat = [run for run in quick_run.manifest["runs"] if run["test"] == "wsat"]
    written = [
        summarize(parse_fio_output(quick_run.verified.read_bytes(run["output_file"]))).write_bytes for run in wsat
    ]
    target = 4 * 256 * MIB
    facts = json.loads(quick_run.verified.read_bytes("run.json"))
    assert facts["wsat"]["bytes_written"] == sum(written)
    if sum(written) >= target:
        assert sum(written[:-1]) < target
        assert "at least 4x the capacity" in facts["wsat"]["stop_reason"]
    else:
        assert len(wsat) == 60 and "time limit" in facts["wsat"]["stop_reason"]


def test_a_file_target_result_says_so_and_was_never_purged(quick_run):
    manifest = quick_run.manifest
    assert manifest["target"]["kind"] == "file"
    assert manifest["target"]["size_bytes"] == 256 * MIB
    assert manifest["profile"] == "quick"
    assert manifest["compliance"]["compliant"] is False
    reasons = " ".join(manifest["compliance"]["reasons"])
    assert "profile quick" in reasons and "file target" in reasons
    facts = json.loads(quick_run.verified.read_bytes("run.json"))
    assert [p["block"] for p in facts["purges"]] == [
        "iops",
        "tp-bs1048576",
        "tp-bs131072",
        "lat",
        "wsat",
        "ecw",
        "dirth",
    ]
    assert all(p["method"] is None and "never purged" in p["reason"] for p in facts["purges"])
    assert facts["write_cache"]["applicable"] is False
    assert all(run["smart_before"] is None and run["smart_after"] is None for run in manifest["runs"])
    assert facts["smart_missing"][0]["reason"]


def test_every_run_keeps_its_job_file_and_json_plus_output_with_the_percentiles(quick_run):
    for run in quick_run.manifest["runs"]:
        job = quick_run.verified.read_bytes(run["job_file"]).decode()
        assert "direct=1" in job.splitlines()
        doc = parse_fio_output(quick_run.verified.read_bytes(run["output_file"]))
        direction = "read" if run["read_pct"] == 100 else "write"
        total = doc["jobs"][0][direction]["lat_ns"]  # total latency, asked for with lat_percentiles=1
        assert "bins" in total, run["id"]  # json+
        assert {"99.000000", "99.900000", "99.990000", "99.999000"} <= set(total["percentile"])
    files = {entry["path"] for entry in quick_run.manifest["files"]}
    assert "system/facts.json" in files


def test_the_bundle_is_format_2_and_declares_every_system_file_with_its_kind(quick_run):
    manifest = quick_run.manifest
    assert manifest["format_version"] == 2
    declared = {entry["path"]: entry["kind"] for entry in manifest["system"]["files"]}
    system = {entry["path"] for entry in manifest["files"] if entry["path"].startswith("system/")}
    assert set(declared) == system
    assert declared["system/facts.json"] == "facts" and declared["system/commands.json"] == "commands"
    assert manifest["system"]["pci_path"] is None  # a file target sits on no PCI device, and the manifest says why
    assert manifest["system"]["pci_path_missing"] == "no device was given (--device)"


def test_the_bundle_names_the_target_file_without_its_directory(quick_run):
    assert quick_run.manifest["target"]["path"] == "target.img"
    directory = str(quick_run.base)  # the temp directory's path carries the user name
    for entry in quick_run.manifest["files"]:
        text = quick_run.verified.read_bytes(entry["path"]).decode("utf-8", "replace")
        assert directory not in text, entry["path"]
        if entry["path"].startswith("jobs/"):
            assert "filename=target.img" in text.splitlines()
        if entry["path"].startswith("fio/"):
            assert parse_fio_output(text.encode())["global options"]["filename"] == "target.img"
    assert directory not in json.dumps(quick_run.manifest)


def test_the_steady_state_claims_match_the_re_derivation_and_say_why_not_steady(quick_run):
    claims = quick_run.manifest["steady_state"]
    assert claims == rederive_steady_state(quick_run.verified)
    measured = [claim for claim in claims if claim["rounds_measured"]]
    assert {claim["variable"] for claim in measured} >= {
        "iops.total_iops.rw000.bs4096",
        "iops.total_iops.rw065.bs65536",
        "iops.total_iops.rw100.bs1048576",
        "lat.lat_mean_ns.rw000.bs4096",
    }
    for claim in measured:
        assert claim["steady"] is False
        assert "steady state not reached" in claim["reason"]


# --- interruptions -----------------------------------------------------------------------------------------------


def children_named(pid: int, name: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if comm == name and int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in ("Z", "X")


def start_small_run(base: Path) -> tuple[subprocess.Popen, dict, Path]:
    env = client_env(base / "config", "0.5")
    out = base / "out"
    log = open(base / "client.out", "w")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        CLIENT + ["run", "--target-file", str(base / "target.img"), "--size", "64MiB", "--profile", "quick",
                  "--edition", "client", "--tests", "tp,lat", "--out", str(out)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    return proc, env, out


def wait_for_fio_mid_run(proc: subprocess.Popen, out: Path, *, min_runs: int) -> tuple[Path, int]:
    """Until the checkpoint lists `min_runs` completed runs and a fio child is running; returns (run dir, fio pid)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it could be interrupted"
        states = list(out.glob("nvmedb-run-*/state.json"))
        if states:
            try:
                runs = json.loads(states[0].read_text())["runs"]
            except ValueError:
                runs = []
            fio = children_named(proc.pid, "fio")
            if len(runs) >= min_runs and fio:
                return states[0].parent, fio[0]
        time.sleep(0.05)
    raise AssertionError("no fio was seen running")


def wait_until_gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def resume(run_dir: Path, env: dict) -> Path:
    result = subprocess.run(
        CLIENT + ["run", "--resume", str(run_dir), "--json"], env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return Path(json.loads(result.stdout)["bundle"])


def small_plan():
    return build_plan(
        tests=["tp", "lat"], edition="client", profile=quick_profile(0.5), capacity_bytes=64 * MIB, target_kind="file"
    )


def test_a_run_killed_with_sigkill_mid_cell_resumes_into_a_complete_bundle_with_each_cell_once(tmp_path):
    proc, env, out = start_small_run(tmp_path)
    run_dir, fio_pid = wait_for_fio_mid_run(proc, out, min_runs=4)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert wait_until_gone(fio_pid), "fio outlived the killed client"
    before = json.loads((run_dir / "state.json").read_text())
    assert len(before["runs"]) >= 4
    assert before["sessions"][0]["outcome"] is None  # the killed session never got to write its end

    bundle = resume(run_dir, env)
    verified = verify_bundle(bundle, extract_to=Path(tempfile.mkdtemp(dir=tmp_path)))
    ids = [run["id"] for run in verified.manifest["runs"]]
    assert ids == planned_ids(small_plan())
    assert ids[: len(before["runs"])] == [run["id"] for run in before["runs"]]
    facts = json.loads(verified.read_bytes("run.json"))
    sessions = facts["sessions"]
    assert [s["resumed"] for s in sessions] == [False, True]
    assert sessions[-1]["outcome"] == "finished"
    assert not list((run_dir / "files" / "fio").glob("*.partial"))
    result = CliRunner().invoke(main, ["verify", str(bundle)], env=env)
    assert result.exit_code == 0, result.output

    # The idle time is recorded, from the last checkpoint to the resume, and not hidden: fio was killed inside a
    # test, so that test started again from its preconditioning and its earlier runs are kept as superseded.
    (gap,) = facts["interruptions"]
    assert gap["started_at"] == before["saved_at"]
    assert gap["resumed_at"] == sessions[1]["started_at"]
    assert gap["length_s"] > 0
    assert gap["action"] == "restart"
    assert gap["block"] == before["position"]["block"]
    assert verified.manifest["interruptions"] == facts["interruptions"]
    superseded = facts["superseded_runs"]
    assert [run["id"] for run in superseded] == gap["superseded_runs"]
    blocks = {block.label: block for block in small_plan().blocks}
    restarted = blocks[gap["block"]]
    assert {run["id"] for run in superseded} <= resume_module.block_run_ids(restarted)
    assert {run["id"] for run in before["runs"]} - {run["id"] for run in superseded} <= set(ids)
    for run in superseded:
        assert run["output_file"].startswith(f"superseded/{gap['block']}-1/")
        assert json.loads(verified.read_bytes(run["output_file"]))["jobs"]
    if restarted.wipc:
        assert restarted.wipc_run_id in ids  # preconditioned again after the interruption


def test_ctrl_c_stops_fio_and_leaves_a_resumable_directory(tmp_path):
    proc, env, out = start_small_run(tmp_path)
    run_dir, fio_pid = wait_for_fio_mid_run(proc, out, min_runs=2)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert wait_until_gone(fio_pid)
    output = (tmp_path / "client.out").read_text()
    assert f"nvmedb-client run --resume {run_dir}" in output
    state = json.loads((run_dir / "state.json").read_text())
    assert state["sessions"][-1]["outcome"] == "interrupted"
    done = [run["id"] for run in state["runs"]]
    assert len(done) >= 2
    assert not list((run_dir / "files" / "fio").glob("*.partial"))
    assert not list(out.glob("*.nvmedb.tar.gz"))

    bundle = resume(run_dir, env)
    manifest = verify_bundle(bundle, extract_to=Path(tempfile.mkdtemp(dir=tmp_path))).manifest
    assert [run["id"] for run in manifest["runs"]] == planned_ids(small_plan())


def test_a_series_stops_at_its_first_steady_round_or_runs_to_the_round_limit(tmp_path):
    env = client_env(tmp_path / "config", "0.5")
    result = subprocess.run(
        CLIENT + ["run", "--target-file", str(tmp_path / "target.img"), "--size", "64MiB", "--profile", "quick",
                  "--edition", "client", "--tests", "tp", "--max-rounds", "7", "--out", str(tmp_path / "out"),
                  "--json"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    bundle = verify_bundle(Path(json.loads(result.stdout)["bundle"]), extract_to=tmp_path / "extracted")
    assert bundle.manifest["plan"]["max_rounds"] == 7
    from nvmedb_client.steady_state import first_steady_round

    claims = {c["phase"]: c for c in bundle.manifest["steady_state"] if c["block_size_bytes"] == 1024 * 1024}
    runs = {phase: [r for r in bundle.manifest["runs"] if r["phase"] == phase] for phase in ("tp-write", "tp-read")}
    # a throughput round is a write segment and a read segment: both directions ran the same rounds
    assert [r["round"] for r in runs["tp-write"]] == [r["round"] for r in runs["tp-read"]]
    last = runs["tp-write"][-1]["round"]
    assert [r["round"] for r in runs["tp-write"]] == list(range(1, last + 1))
    metric = {"tp-write": "write_bw_bytes_per_s", "tp-read": "read_bw_bytes_per_s"}
    points = {
        phase: [
            (r["round"], getattr(summarize(parse_fio_output(bundle.read_bytes(r["output_file"]))), metric[phase]))
            for r in phase_runs
        ]
        for phase, phase_runs in runs.items()
    }
    both = first_steady_round(points)
    print(f"\n{last} rounds; both directions steady in one window at round {both}")
    # the block stopped at the first round where both were steady together, or ran to the limit
    assert last == (both if both is not None else 7)
    for claim in claims.values():
        if claim["steady"]:
            assert claim["steady_round"] <= last and claim["window"]["last_round"] == claim["steady_round"]
        else:
            assert last == 7 and claim["reason"] == "steady state not reached in 7 rounds"


def test_throughput_rounds_alternate_write_and_read_and_carry_their_sequential_position(quick_run):
    from nvmedb_client.fio_jobs import sequential_starts

    runs = [run for run in quick_run.manifest["runs"] if run["test"] == "tp" and run["phase"] != "wipc"]
    assert [run["phase"] for run in runs[:4]] == ["tp-write", "tp-read", "tp-write", "tp-read"]
    range_bytes = quick_run.manifest["target"]["active_range_bytes"]
    for phase, field in (("tp-write", "write_bytes"), ("tp-read", "read_bytes")):
        for bs in {run["block_size_bytes"] for run in runs}:
            series = sorted(
                (r for r in runs if r["phase"] == phase and r["block_size_bytes"] == bs), key=lambda r: r["round"]
            )
            moved = [
                getattr(summarize(parse_fio_output(quick_run.verified.read_bytes(r["output_file"]))), field)
                for r in series
            ]
            starts = sequential_starts(slice_bytes=range_bytes, block_size=bs, moved=[m // bs * bs for m in moved])
            for run, start in zip(series, starts, strict=False):
                job = quick_run.verified.read_bytes(run["job_file"]).decode().splitlines()
                assert f"offset={start}" in job and f"size={range_bytes - start}" in job, run["id"]
                assert "iodepth=32" in job and "numjobs=1" not in job
    wipc = {run["id"]: run for run in quick_run.manifest["runs"] if run["phase"] == "wipc"}
    assert wipc["tp-bs131072-wipc"]["block_size_bytes"] == 131072
    assert wipc["tp-bs1048576-wipc"]["block_size_bytes"] == 1048576


def test_the_quick_bundle_size_estimate_is_within_half_of_the_real_bundle(quick_run):
    from nvmedb_client.plan import estimate_bundle_bytes

    plan = build_plan(profile=quick_profile(1.0), capacity_bytes=256 * MIB, target_kind="file", edition="enterprise")
    low, high = estimate_bundle_bytes(plan)
    actual = quick_run.bundle.stat().st_size
    print(f"\nquick bundle: {actual / MIB:.2f} MiB; estimated {low / MIB:.2f} to {high / MIB:.2f} MiB")
    assert abs((low + high) / 2 - actual) <= 0.5 * actual  # the middle of the range is within ±50 %
    assert low <= 1.5 * actual and high >= 0.5 * actual
