"""A real quick run of HIR, XSR and two WSAT optional workloads with the real fio against a file: the logs are in the
signed bundle, `verify` re-derives every figure and agrees with the client, and a changed claim is caught."""

import copy
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from nvmedb_client.bundle import verify_bundle
from nvmedb_client.cli import main
from nvmedb_client.pts import verify as pts_verify

pytestmark = pytest.mark.fio

CLIENT = [sys.executable, "-c", "from nvmedb_client.cli import main; main()"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    import os

    base = tmp_path_factory.mktemp("hirxsr")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config"), "NVMEDB_QUICK_CELL_S": "0.5"}
    result = subprocess.run(
        CLIENT + ["run", "--target-file", str(base / "target.img"), "--size", "64MiB", "--profile", "quick",
                  "--tests", "hir,xsr,ws-vod,ws-comp", "--out", str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    bundle = Path(json.loads(result.stdout)["bundle"])
    verified = verify_bundle(bundle, extract_to=base / "extracted")
    return SimpleNamespace(base=base, bundle=bundle, verified=verified, manifest=verified.manifest)


def test_every_segment_left_its_per_interval_logs_declared_and_hashed_in_the_bundle(run):
    files = {entry["path"] for entry in run.manifest["files"]}
    segments = [r for r in run.manifest["runs"] if r["phase"] in ("hir-wait", "hir-base", "xsr-g1", "xsr-g2", "xsr-g3")]
    assert len(segments) == 13
    for entry in segments:
        kind = "bw" if entry["test"] == "xsr" else "iops"
        expected = 1 if entry["test"] == "xsr" else 4  # TC 1 for XSR, the enterprise TC 4 for HIR
        assert [p.split("_")[-1].split(".")[0] for p in entry["log_files"]] == [kind] * expected
        assert set(entry["log_files"]) <= files
    assert not (run.base / ".nvmedb-logs").exists()


def test_fio_recorded_no_directory_of_the_user(run):
    root = run.verified.root / "files"
    for entry in run.manifest["runs"]:
        text = (root / entry["output_file"]).read_text()
        assert str(run.base) not in text
        assert str(run.base) not in (root / entry["job_file"]).read_text()


def test_the_client_claims_hir_and_xsr_figures_from_the_logs(run):
    hir = run.manifest["derived"]["hir"]
    assert [s["idle_s"] for s in hir["wait_states"]] == [round(idle * 0.5 / 15, 3) for idle in (5, 10, 15, 25, 50)]
    assert sum(state["bursts_measured"] for state in hir["wait_states"]) >= 1
    for state in hir["wait_states"]:
        if state["recovery_ratio"] is not None:  # a wait state whose bursts had whole intervals
            assert state["recovery_iops"] > 0 and state["recovered"] == (state["recovery_ratio"] > 1.2)
    xsr = run.manifest["derived"]["xsr"]
    assert [g["block_size_bytes"] for g in xsr["groups"]] == [1048576, 8192, 1048576]
    assert all(g["final_bytes_per_s"] > 0 for g in xsr["groups"])
    assert "series" not in xsr["groups"][0]  # per-interval series are re-derived, never claimed


def test_the_wsat_workloads_ran_their_own_stimulus(run):
    ws = [r for r in run.manifest["runs"] if r["test"] in ("ws-vod", "ws-comp")]
    assert {r["test"] for r in ws} == {"ws-vod", "ws-comp"}
    job = (run.verified.root / "files" / next(r for r in ws if r["test"] == "ws-comp")["job_file"]).read_text()
    assert "random_distribution=zoned:50/5:30/15:20/80" in job
    assert json.loads((run.verified.root / "files" / "run.json").read_text())["wsat_workloads"].keys() == {
        "ws-vod",
        "ws-comp",
    }


def test_verify_re_derives_the_figures_and_agrees(run):
    result = CliRunner().invoke(main, ["verify", str(run.bundle), "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["ok"] and answer["recovery"] == run.manifest["derived"]
    text = CliRunner().invoke(main, ["verify", str(run.bundle)])
    assert (
        text.exit_code == 0 and "HIR, 0.167 s idle:" in text.output and "XSR group 2 (randwrite 8192 B)" in text.output
    )


def test_a_claim_that_the_logs_do_not_support_is_named(run):
    manifest = copy.deepcopy(run.manifest)
    manifest["derived"]["xsr"]["groups"][1]["recover_s"] = 12345.0
    full, differences = pts_verify.rederive(dataclasses.replace(run.verified, manifest=manifest))
    assert full["hir"]["wait_states"][0]["baseline_series"]
    assert differences == ["xsr.groups[1].recover_s: the manifest claims 12345.0, the raw data gives "
                           f"{run.manifest['derived']['xsr']['groups'][1]['recover_s']!r}"]  # fmt: skip


def test_a_log_a_run_names_but_the_manifest_does_not_declare_is_refused(run):
    manifest = copy.deepcopy(run.manifest)
    manifest["files"] = [f for f in manifest["files"] if f["path"] != "logs/xsr-g2_bw.1.log"]
    full, differences = pts_verify.rederive(dataclasses.replace(run.verified, manifest=manifest))
    assert full == {} and "not declared in the manifest's files" in differences[0]


def test_a_log_declared_larger_than_the_limit_is_refused_before_it_is_read(run):
    from nvmedb_client.pts.interval_log import MAX_LOG_BYTES

    manifest = copy.deepcopy(run.manifest)
    entry = next(f for f in manifest["files"] if f["path"] == "logs/xsr-g1_bw.1.log")
    entry["size"] = MAX_LOG_BYTES + 1
    full, differences = pts_verify.rederive(dataclasses.replace(run.verified, manifest=manifest))
    assert full == {} and f"more than the {MAX_LOG_BYTES} bytes a log may have" in differences[0]
