"""A real quick ws-oltp run made by fio, ingested, read by the drive page's section: its samples, stimulus, level
and bytes written are those of the stored measurements, and the stop the section reads from them is the one the
client recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.utils import timezone

from analysis.browse import charts_wsat_workloads as section
from analysis.ingest import ingest_submission
from analysis.models import Measurement, TestRun
from analysis.selectors import public_test_runs
from nvmedb_client.bundle import verify_bundle

pytestmark = pytest.mark.fio


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("ws-oltp")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config"), "NVMEDB_QUICK_CELL_S": "0.5"}
    result = subprocess.run(
        [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
         str(base / "target.img"), "--size", "64MiB", "--profile", "quick", "--tests", "ws-oltp",
         "--out", str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return Path(json.loads(result.stdout)["bundle"])


def test_a_real_ws_oltp_run_is_read_as_the_client_ran_it(submission, real_run, tmp_path):
    bundle = verify_bundle(real_run, extract_to=tmp_path / "extracted")
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published", outcome.reasons
    submission.status, submission.published_at = "published", timezone.now()  # as the intake's service then does
    submission.save()
    run = TestRun.objects.get(submission=submission, test="ws-oltp")
    assert section.load(run.drive_model) is None  # a quick run on a file is a trial: never on the public page

    found = section.load(run.drive_model, visible=public_test_runs(trials_of=submission.uploader_id))
    (oltp,) = found.workloads
    samples = list(Measurement.objects.filter(test_run=run).order_by("round__number"))
    assert oltp.samples == len(samples) >= 1
    assert oltp.stimuli == [("randrw", 8192, 65)]
    assert oltp.written_bytes == sum(m.write_bytes for m in samples) > 0
    last = [m.total_iops for m in samples[-5:]]
    assert oltp.level == pytest.approx(sum(last) / len(last))
    assert [p.iops for p in oltp.points] == [m.total_iops for m in samples]

    claimed = json.loads((bundle.root / "files" / "run.json").read_text())["wsat_workloads"]["ws-oltp"]
    assert claimed["target_bytes"] == section.WSAT_CAPACITY_MULTIPLE * oltp.capacity_bytes
    assert claimed["bytes_written"] == oltp.written_bytes
    if claimed["stop_reason"].startswith("time limit"):
        assert oltp.stop == section.STOP_SAMPLES and oltp.samples == 5  # the quick profile's 5 samples
    else:
        assert oltp.stop == section.STOP_CAPACITY
    chart = found.charts[0]
    assert chart.figure["data"][0]["y"] == [round(m.total_iops) for m in samples]
