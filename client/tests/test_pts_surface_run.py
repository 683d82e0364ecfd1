"""A real quick surface run with the real fio on a 256 MiB file: its raw files, its figures, `verify` agreeing."""

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from nvmedb_client import signing
from nvmedb_client.bundle import verify_bundle, write_bundle
from nvmedb_client.cli import main
from nvmedb_client.pts import surface_figures

pytestmark = pytest.mark.fio

CLIENT = [sys.executable, "-c", "from nvmedb_client.cli import main; main()"]


@pytest.fixture(scope="module")
def surface_run(tmp_path_factory):
    import os

    base = tmp_path_factory.mktemp("surface")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config")}
    env.pop("NVMEDB_QUICK_CELL_S", None)  # the quick surface's own default: 24 cells of 0.5 s, 3 repetitions
    result = subprocess.run(
        CLIENT + ["run", "--target-file", str(base / "target.img"), "--size", "256MiB", "--profile", "quick",
                  "--tests", "surface", "--out", str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout)
    verified = verify_bundle(Path(answer["bundle"]), extract_to=base / "extracted")
    return base, env, Path(answer["bundle"]), verified


def test_a_quick_surface_run_writes_every_repetition_s_raw_fio_output_and_job_file(surface_run):
    _, _, _, verified = surface_run
    manifest = verified.manifest
    planned = manifest["plan"]["extensions"]["surface"]["cells"]
    assert len(planned) == 24 and manifest["plan"]["extensions"]["surface"]["cell_runtime_s"] == 0.5
    assert manifest["plan"]["extensions"]["surface"]["repetitions"] == 3
    runs = {r["id"]: r for r in manifest["runs"] if r["phase"] == "surface"}
    assert len(runs) == 24 * 3
    paths = {entry["path"] for entry in manifest["files"]}
    for cell, rep in [(cell, rep) for cell in planned for rep in (1, 2, 3)]:
        run = runs[f"surface-{cell['pattern']}-bs{cell['block_size_bytes']}-qd{cell['iodepth']}-rep{rep}"]
        assert (run["threads"], run["iodepth"], run["round"]) == (1, cell["iodepth"], rep)
        assert run["output_file"] in paths and run["job_file"] in paths
        job = verified.read_bytes(run["job_file"]).decode()
        assert f"rw={cell['pattern']}\n" in job and f"iodepth={cell['iodepth']}\n" in job
        assert "ioengine=libaio" in job
    assert {"surface-wipc", "surface-randwrite-pc"} <= {r["id"] for r in manifest["runs"]}


def test_the_repetitions_run_interleaved_and_every_cell_gives_its_median_and_spread(surface_run):
    manifest = surface_run[3].manifest
    order = [(r["pattern"], r["round"]) for r in manifest["runs"] if r["phase"] == "surface"]
    for pattern in ("read", "randread", "write", "randwrite"):
        reps = [rep for pat, rep in order if pat == pattern]
        # repetition 1 of all 6 cells of the pattern, then repetition 2 of all, then 3: never one cell back to back
        assert reps == [1] * 6 + [2] * 6 + [3] * 6, (pattern, reps)
    for cell in manifest["surface"]["cells"]:
        bws = sorted(r["bw_bytes_per_s"] for r in cell["repetitions"])
        assert cell["n_repetitions"] == 3 and len(bws) == 3
        assert (cell["bw_min_bytes_per_s"], cell["bw_bytes_per_s"], cell["bw_max_bytes_per_s"]) == tuple(bws)
        assert cell["bw_cv"] is not None and cell["noisy"] == (cell["bw_cv"] > 0.10)
    for pattern in manifest["surface"]["patterns"]:
        assert pattern["repetitions"] == 3 and 0 <= pattern["knee_agreeing_repetitions"] <= 3
        assert [k["repetition"] for k in pattern["knee_by_repetition"]] == [1, 2, 3]


def test_the_client_s_figures_name_the_engine_the_file_path_and_a_knee_per_pattern(surface_run):
    manifest = surface_run[3].manifest
    surface = manifest["surface"]
    assert surface["label"] == "nvmedb extension, not part of the SNIA PTS"
    assert surface["ioengine"] == "libaio" and surface["queue_depth_real"] is True
    assert "file system path" in surface["target_note"]
    assert [p["pattern"] for p in surface["patterns"]] == ["read", "randread", "write", "randwrite"]
    for pattern in surface["patterns"]:
        assert pattern["peak_bw_bytes_per_s"] > 0 and pattern["knee"] is not None
    assert all(c["speedup"] is not None for c in surface["cells"])
    assert surface["missing"] == []
    assert manifest["compliance"]["compliant"] is False  # quick profile on a file, for the PTS tests' sake


def test_verify_re_derives_the_same_figures_and_passes(surface_run):
    _, env, bundle, verified = surface_run
    assert surface_figures.rederive(verified)["patterns"] == verified.manifest["surface"]["patterns"]
    result = CliRunner(env=env).invoke(main, ["verify", str(bundle), "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["ok"] and answer["differences"] == []
    assert answer["surface"]["cells"] == verified.manifest["surface"]["cells"]


def test_verify_fails_a_signed_bundle_whose_claimed_knee_differs_from_its_raw_data(surface_run, tmp_path):
    base, env, bundle, verified = surface_run
    manifest = json.loads(json.dumps(verified.manifest))
    knee = manifest["surface"]["patterns"][0]["knee"]
    knee["iodepth"] = 1 if knee["iodepth"] != 1 else 16
    with tarfile.open(bundle) as archive:
        archive.extractall(tmp_path, filter="data")
    files_dir = tmp_path / "files"
    forged = write_bundle(
        run_dir=files_dir,
        manifest={k: v for k, v in manifest.items() if k != "files"},
        files=[entry["path"] for entry in manifest["files"]],
        signing_key=signing.load_or_create_signing_key(base / "config"),
        out_path=tmp_path / "forged.nvmedb.tar.gz",
    )
    result = CliRunner(env=env).invoke(main, ["verify", str(forged)])
    assert result.exit_code == 3, result.output
    assert "surface figures differ from its raw data" in result.output and "90% knee" in result.output
