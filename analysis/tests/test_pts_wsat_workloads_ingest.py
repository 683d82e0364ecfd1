"""A real quick ws-oltp run made by fio, ingested, read by the drive page's section: its samples, stimulus, level
and bytes written are those of the stored measurements, and the stop the section reads from them is the one the
client recorded. A real quick ws-vod run (sequential: each job in its own slice, each sample continuing where the
previous one stopped) is accepted, and a job file whose jobs share blocks or restart at their slice's start is not."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.utils import timezone

from analysis.ingest import ingest_submission
from analysis.models import Measurement, TestRun
from analysis.selectors import public_test_runs
from nvmedb_client.bundle import verify_bundle, write_bundle
from reports.wsat_workloads import charts as section
from throttled_run import throttled_quick_run

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


# fio as the client finds it on PATH, throttled for ws-vod's samples (fio reads a copy of the job file with a rate cap)
# so that a half-second sample covers a part of a job's slice and the next one starts further in
@pytest.fixture(scope="module")
def vod_run(tmp_path_factory):
    answer, _ = throttled_quick_run(tmp_path_factory.mktemp("ws-vod"), "ws-vod")
    return Path(answer["bundle"])


def resigned(bundle, tmp_path, change):
    """The bundle's files with `change` made to them, signed again by another contributor's key."""
    manifest = copy.deepcopy(bundle.manifest)
    files_dir = bundle.root / "files"
    change(files_dir)
    paths = [entry["path"] for entry in manifest.pop("files")]
    out = write_bundle(
        run_dir=files_dir, manifest=manifest, files=paths, signing_key=Ed25519PrivateKey.generate(),
        out_path=tmp_path / "x.tar.gz",
    )  # fmt: skip
    return verify_bundle(out, extract_to=tmp_path / "again")


def offsets(job_text: str) -> list[int]:
    return [int(value) for value in re.findall(r"^offset=(\d+)$", job_text, re.MULTILINE)]


def test_a_real_ws_vod_run_with_its_jobs_in_their_own_slices_is_accepted(submission, vod_run, tmp_path):
    bundle = verify_bundle(vod_run, extract_to=tmp_path / "extracted")
    jobs = [bundle.read_bytes(f"jobs/ws-vod-r000{n}.fio").decode() for n in range(1, 6)]
    slice_starts = [i * 16 * 2**20 for i in range(4)]  # 64 MiB, 4 jobs
    assert offsets(jobs[0]) == slice_starts and "numjobs" not in jobs[0]
    assert offsets(jobs[1]) != slice_starts  # the second sample continued where the first stopped
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission, test="ws-vod")
    assert Measurement.objects.filter(test_run=run).count() == 5


def test_a_ws_vod_sample_restarting_at_its_slices_start_is_rejected(submission, vod_run, tmp_path):
    """The lockstep of before issue 22: a sample that starts every job at its slice's start again."""

    def restart(files):
        path = files / "jobs" / "ws-vod-r0002.fio"
        text = path.read_text()
        for offset, start in zip(offsets(text), (i * 16 * 2**20 for i in range(4)), strict=True):
            text = text.replace(f"offset={offset}\n", f"offset={start}\n", 1)
            text = text.replace(f"size={start + 16 * 2**20 - offset}\n", f"size={16 * 2**20}\n", 1)
        path.write_text(text)

    bundle = verify_bundle(vod_run, extract_to=tmp_path / "extracted")
    outcome = ingest_submission(submission=submission, bundle=resigned(bundle, tmp_path, restart))
    assert outcome.status == "rejected"
    assert any(
        r.startswith("run ws-vod-r0002: its jobs start at [0, 0, 0, 0] in their slices") for r in outcome.reasons
    ), outcome.reasons


def test_a_ws_vod_job_file_whose_jobs_share_a_slice_is_rejected(submission, vod_run, tmp_path):
    def overlap(files):
        path = files / "jobs" / "ws-vod-r0001.fio"
        path.write_text(path.read_text().replace(f"offset={16 * 2**20}\n", "offset=0\n", 1))

    bundle = verify_bundle(vod_run, extract_to=tmp_path / "extracted")
    outcome = ingest_submission(submission=submission, bundle=resigned(bundle, tmp_path, overlap))
    assert outcome.status == "rejected"
    assert any(r.startswith("jobs/ws-vod-r0001.fio: job 1 covers offset=0") for r in outcome.reasons), outcome.reasons
