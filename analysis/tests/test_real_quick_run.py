"""A real `nvmedb-client run` (quick profile, real fio against a temp file) ingested end to end."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.ingest import ingest_submission
from analysis.models import Flag, Measurement, SteadyStateWindow, TestRun
from nvmedb_client.bundle import verify_bundle
from nvmedb_client.fio_output import parse_fio_output, summarize

pytestmark = pytest.mark.fio


@pytest.fixture(scope="module")
def real_bundle(tmp_path_factory):
    base = tmp_path_factory.mktemp("real-quick")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config"), "NVMEDB_QUICK_CELL_S": "0.5"}
    result = subprocess.run(
        [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
         str(base / "target.img"), "--size", "64MiB", "--profile", "quick", "--edition", "client", "--tests",
         "tp,lat", "--out", str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return verify_bundle(Path(json.loads(result.stdout)["bundle"]), extract_to=base / "extracted")


def test_a_real_quick_run_is_published_with_every_run_traceable(submission, real_bundle):
    outcome = ingest_submission(submission=submission, bundle=real_bundle)
    assert outcome.status == "published", outcome.reasons  # every cross-check, the plan check included, passed

    runs = real_bundle.manifest["runs"]
    measurements = Measurement.objects.filter(test_run__submission=submission)
    assert measurements.count() == len(runs)
    by_id = {run["id"]: run for run in runs}
    for m in measurements.select_related("round"):
        run = by_id[m.run_key]
        assert (m.raw_file, m.block_size_bytes, m.read_pct, m.round.phase) == (
            run["output_file"],
            run["block_size_bytes"],
            run["read_pct"],
            run["phase"],
        )
        summary = summarize(parse_fio_output(real_bundle.read_bytes(m.raw_file)))
        assert m.total_iops == pytest.approx(summary.total_iops)
        if run["phase"] != "wipc":  # preconditioning writes a size, not for a time
            assert m.runtime_s == pytest.approx(0.5, abs=0.25)  # wall clock, not fio's job_runtime sum

    assert set(TestRun.objects.filter(submission=submission).values_list("test", flat=True)) == {"tp", "lat"}
    claims = {c["variable"]: c for c in real_bundle.manifest["steady_state"]}
    windows = SteadyStateWindow.objects.filter(test_run__submission=submission)
    assert not windows.filter(claim_differs=True).exists()  # the client's verdicts match the server's
    for w in windows:
        assert w.claimed == claims[w.variable]
    # claims on variables no measured run belongs to are recorded, not believed (the client counts the 128 KiB
    # preconditioning of the throughput block as a throughput block size)
    extra = set(claims) - {w.variable for w in windows}
    flagged = Flag.objects.filter(submission=submission, kind="steady_state_claim_differs")
    assert {v for v in extra if any(v in f.reason for f in flagged)} == extra and flagged.count() == len(extra)
    tp = TestRun.objects.get(submission=submission, test="tp")
    assert tp.headline["bw_1m_read"] > 0 and tp.headline["bw_1m_write"] > 0
    assert tp.missing["purge_method"] == "file target: never purged"
