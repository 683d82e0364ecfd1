"""A real quick surface run with the real fio, killed in the middle of its repetitions, resumes into a bundle with
every repetition of every cell exactly once (the interrupted block starts again, its earlier runs kept as
superseded)."""

import json
import os
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_run_quick import CLIENT, client_env, resume, wait_for_fio_mid_run, wait_until_gone

from nvmedb_client.bundle import verify_bundle
from nvmedb_client.cli import main

pytestmark = pytest.mark.fio


def test_a_surface_run_killed_mid_repetition_resumes_with_every_repetition_of_every_cell_once(tmp_path):
    env = client_env(tmp_path / "config", "0.5")
    out = tmp_path / "out"
    with open(tmp_path / "client.out", "w") as log:
        proc = subprocess.Popen(
            CLIENT + ["run", "--target-file", str(tmp_path / "target.img"), "--size", "64MiB", "--profile", "quick",
                      "--tests", "surface", "--surface-patterns", "randread", "--surface-max-bs", "64KiB",
                      "--surface-max-qd", "4", "--surface-qd-step", "4", "--surface-cell-s", "0.5", "--out", str(out)],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        # the WIPC, repetition 1 of the 4 cells and one cell of repetition 2 done, fio running the next
        run_dir, fio_pid = wait_for_fio_mid_run(proc, out, min_runs=6)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert wait_until_gone(fio_pid), "fio outlived the killed client"
    before = json.loads((run_dir / "state.json").read_text())
    assert any(run["round"] == 2 for run in before["runs"])

    bundle = resume(run_dir, env)
    verified = verify_bundle(bundle, extract_to=Path(tempfile.mkdtemp(dir=tmp_path)))
    surface_ids = [run["id"] for run in verified.manifest["runs"] if run["phase"] == "surface"]
    expected = {
        f"surface-randread-bs{bs}-qd{qd}-rep{rep}" for bs in (4096, 65536) for qd in (1, 4) for rep in (1, 2, 3)
    }
    assert sorted(surface_ids) == sorted(expected)  # each once
    order = [run["round"] for run in verified.manifest["runs"] if run["phase"] == "surface"]
    assert order == [1] * 4 + [2] * 4 + [3] * 4  # still interleaved after the restart
    assert {cell["n_repetitions"] for cell in verified.manifest["surface"]["cells"]} == {3}
    facts = json.loads(verified.read_bytes("run.json"))
    assert facts["superseded_runs"] and {r["id"] for r in facts["superseded_runs"]} <= expected | {"surface-wipc"}
    assert CliRunner().invoke(main, ["verify", str(bundle)], env=env).exit_code == 0
