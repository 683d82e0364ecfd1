"""A real quick run of HIR, XSR and a WSAT optional workload ingested end to end: the server re-derives the HIR and
XSR figures from the per-interval logs, agrees with the client, stores them, and catches a claim, a log or a plan
that does not hold."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from analysis.ingest import ingest_submission
from analysis.models import Flag, HirWaitState, Measurement, RecoveryPoint, TestRun, XsrGroup
from nvmedb_client.bundle import verify_bundle, write_bundle

pytestmark = pytest.mark.fio


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("hirxsr-ingest")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config"), "NVMEDB_QUICK_CELL_S": "0.5"}
    result = subprocess.run(
        [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
         str(base / "target.img"), "--size", "64MiB", "--profile", "quick", "--tests", "hir,xsr,ws-comp",
         "--out", str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout)
    return Path(answer["bundle"]), Path(answer["run_dir"])


@pytest.fixture
def real_bundle(real_run, tmp_path):
    return verify_bundle(real_run[0], extract_to=tmp_path / "extracted")


def resigned(real_bundle, tmp_path, change):
    """The bundle's files with a changed manifest (or a changed file), signed again by another contributor's key."""
    manifest = copy.deepcopy(real_bundle.manifest)
    files_dir = real_bundle.root / "files"
    change(manifest, files_dir)
    paths = [entry["path"] for entry in manifest.pop("files")]
    out = write_bundle(
        run_dir=files_dir,
        manifest=manifest,
        files=paths,
        signing_key=Ed25519PrivateKey.generate(),
        out_path=tmp_path / "x.tar.gz",
    )
    return verify_bundle(out, extract_to=tmp_path / "again")


def test_the_server_re_derives_hir_and_xsr_and_agrees_with_the_client(submission, real_bundle):
    outcome = ingest_submission(submission=submission, bundle=real_bundle)
    assert outcome.status == "published", outcome.reasons
    tests = set(TestRun.objects.filter(submission=submission).values_list("test", flat=True))
    assert tests == {"hir", "xsr", "ws-comp"}

    claim = real_bundle.manifest["derived"]
    states = HirWaitState.objects.filter(test_run__submission=submission).order_by("index")
    assert [s.idle_s for s in states] == [round(idle * 0.5 / 15, 3) for idle in (5, 10, 15, 25, 50)]
    for state, claimed in zip(states, claim["hir"]["wait_states"], strict=True):
        assert not state.claim_differs and state.claimed == claimed
        assert (
            state.recovery_iops == claimed["recovery_iops"] and state.baseline_iops == claim["hir"]["baseline"]["iops"]
        )
        if state.recovery_ratio is not None:  # the bursts of this wait state had whole intervals
            assert state.recovered == (state.recovery_ratio > 1.2)
    groups = XsrGroup.objects.filter(test_run__submission=submission).order_by("index")
    assert [(g.pattern, g.block_size_bytes) for g in groups] == [
        ("write", 1048576),
        ("randwrite", 8192),
        ("write", 1048576),
    ]
    assert all(not g.claim_differs and g.final_bytes_per_s > 0 for g in groups)
    points = RecoveryPoint.objects.filter(test_run__submission=submission)
    assert set(points.values_list("kind", flat=True)) >= {"burst", "baseline", "tp"}
    xsr_times = list(points.filter(kind="tp").values_list("t_s", flat=True))
    assert xsr_times == sorted(xsr_times) and xsr_times[-1] > 3.0  # groups follow one another on one timeline
    assert not Flag.objects.filter(submission=submission, kind="recovery_claim_differs").exists()
    composite = Measurement.objects.filter(test_run__submission=submission, test_run__test="ws-comp")
    assert composite.exists() and set(composite.values_list("block_size_bytes", "round__phase")) == {(0, "wsat")}


def test_a_claim_the_logs_do_not_support_is_flagged_and_the_servers_figure_is_stored(submission, real_bundle, tmp_path):
    def forge(manifest, _files):
        manifest["derived"]["hir"]["wait_states"][2]["recovery_iops"] = 1e9

    forged = resigned(real_bundle, tmp_path, forge)
    outcome = ingest_submission(submission=submission, bundle=forged)
    assert outcome.status == "published", outcome.reasons
    state = HirWaitState.objects.get(test_run__submission=submission, index=3)
    assert state.claim_differs and state.claimed["recovery_iops"] == 1e9 and state.recovery_iops != 1e9
    (flag,) = Flag.objects.filter(submission=submission, kind="recovery_claim_differs")
    assert flag.reason.startswith("hir.wait_states[2].recovery_iops: the manifest claims 1000000000.0")
    assert flag.test_run.test == "hir"


def test_a_malformed_log_line_rejects_the_bundle_naming_the_file_and_line(submission, real_bundle, tmp_path):
    def corrupt(manifest, files):
        path = files / "logs/xsr-g2_bw.1.log"
        path.write_bytes(path.read_bytes() + b"9999999, 12, 1, 0, 0; rm -rf /\n")

    outcome = ingest_submission(submission=submission, bundle=resigned(real_bundle, tmp_path, corrupt))
    assert outcome.status == "rejected"
    assert any("logs/xsr-g2_bw.1.log line" in reason and "not a fio log line" in reason for reason in outcome.reasons)
    assert not TestRun.objects.filter(submission=submission).exists()


def test_a_segment_the_plan_does_not_have_is_rejected(submission, real_bundle, tmp_path):
    def stretch(manifest, _files):
        run = next(r for r in manifest["runs"] if r["id"] == "hir-w1-baseline")
        run["runtime_s"] = 900

    outcome = ingest_submission(submission=submission, bundle=resigned(real_bundle, tmp_path, stretch))
    assert outcome.status == "rejected"
    assert any("hir-w1-baseline: runtime 900 s where the plan says" in reason for reason in outcome.reasons)


def test_a_claim_for_a_test_that_did_not_run_is_flagged_not_believed(submission, real_bundle, tmp_path):
    def drop_xsr(manifest, _files):
        manifest["runs"] = [r for r in manifest["runs"] if r["test"] != "xsr"]
        manifest["plan"]["blocks"] = [b for b in manifest["plan"]["blocks"] if b["test"] != "xsr"]
        manifest["plan"]["tests"] = [t for t in manifest["plan"]["tests"] if t != "xsr"]
        manifest["files"] = [f for f in manifest["files"] if "xsr" not in f["path"]]

    outcome = ingest_submission(submission=submission, bundle=resigned(real_bundle, tmp_path, drop_xsr))
    assert outcome.status != "rejected", outcome.reasons
    assert not XsrGroup.objects.filter(test_run__submission=submission).exists()
    (flag,) = Flag.objects.filter(submission=submission, kind="recovery_claim_differs")
    assert flag.reason.startswith("xsr: the manifest claims {") and flag.test_run is None


def test_an_empty_job_log_is_stored_as_missing_figures_with_the_reason(submission, real_bundle, tmp_path):
    # What fio leaves for a job that ran shorter than one logging interval: the run is kept, never failed whole.
    emptied = "logs/hir-w2-baseline_iops.1.log"

    def empty(_manifest, files):
        (files / emptied).write_bytes(b"")

    outcome = ingest_submission(submission=submission, bundle=resigned(real_bundle, tmp_path, empty))
    assert outcome.status == "published", outcome.reasons
    state = HirWaitState.objects.get(test_run__submission=submission, index=2)
    assert state.missing.startswith(f"{emptied} has no samples")
    assert not RecoveryPoint.objects.filter(test_run=state.test_run, stage=2, kind="baseline").exists()
    assert RecoveryPoint.objects.filter(test_run=state.test_run, stage=1, kind="baseline").exists()
    assert HirWaitState.objects.get(test_run__submission=submission, index=1).missing == ""
