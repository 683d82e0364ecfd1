"""The surface (nvmedb extension) end to end: a real quick run with the real fio, ingested; the server re-derives the
figures from the raw fio outputs, keeps the client's as its claim, and never counts the surface as PTS compliance."""

import json
import os
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from analysis.ingest import ingest_submission
from analysis.models import Flag, Measurement, SurfaceCell, SurfacePattern, TestRun
from nvmedb_client import signing
from nvmedb_client.bundle import verify_bundle, write_bundle
from nvmedb_client.fio_output import parse_fio_output, summarize

pytestmark = pytest.mark.fio


@pytest.fixture(scope="module")
def surface_bundle_file(tmp_path_factory):
    base = tmp_path_factory.mktemp("surface-run")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config")}
    result = subprocess.run(
        [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
         str(base / "target.img"), "--size", "64MiB", "--profile", "quick", "--tests", "wsat,surface",
         "--surface-cell-s", "0.5", "--surface-max-bs", "64KiB", "--surface-max-qd", "4", "--surface-qd-step", "4", "--out", str(base / "out"),
         "--json"],
        env={**env, "NVMEDB_QUICK_CELL_S": "0.5"}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return Path(json.loads(result.stdout)["bundle"])


@pytest.fixture(scope="module")
def surface_bundle(surface_bundle_file, tmp_path_factory):
    return verify_bundle(surface_bundle_file, extract_to=tmp_path_factory.mktemp("extracted"))


def forged(bundle_file: Path, tmp_path: Path, change) -> object:
    """The same bundle, its manifest changed by `change(manifest)` and signed again."""
    with tarfile.open(bundle_file) as archive:
        archive.extractall(tmp_path / "x", filter="data")
    manifest = json.loads((tmp_path / "x" / "manifest.json").read_text())
    change(manifest)
    out = write_bundle(
        run_dir=tmp_path / "x" / "files",
        manifest={k: v for k, v in manifest.items() if k != "files"},
        files=[entry["path"] for entry in manifest["files"]],
        signing_key=signing.create_signing_key(tmp_path / "key"),
        out_path=tmp_path / "forged.nvmedb.tar.gz",
    )
    return verify_bundle(out, extract_to=tmp_path / "verified")


def test_the_server_re_derives_every_cell_from_the_raw_fio_outputs_and_agrees_with_the_client(
    submission, surface_bundle
):
    outcome = ingest_submission(submission=submission, bundle=surface_bundle)
    assert outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission, test="surface")
    claimed = surface_bundle.manifest["surface"]
    cells = {(c.pattern, c.block_size_bytes, c.iodepth): c for c in SurfaceCell.objects.filter(test_run=run)}
    assert len(cells) == len(claimed["cells"]) == 4 * 2 * 2
    for claim in claimed["cells"]:
        cell = cells[(claim["pattern"], claim["block_size_bytes"], claim["iodepth"])]
        assert cell.measurement.run_key == claim["run_id"] and cell.measurement.pattern == claim["pattern"]
        direction = "read" if claim["pattern"] in ("read", "randread") else "write"
        bws, iops = [], []
        for repetition in (1, 2, 3):  # each repetition its own fio run, parsed by the server
            run_key = f"surface-{claim['pattern']}-bs{claim['block_size_bytes']}-qd{claim['iodepth']}-rep{repetition}"
            measurement = Measurement.objects.get(test_run=run, run_key=run_key)
            summary = summarize(parse_fio_output(surface_bundle.read_bytes(measurement.raw_file)))
            bws.append(getattr(summary, f"{direction}_bw_bytes_per_s"))
            iops.append(getattr(summary, f"{direction}_iops"))
        assert cell.n_repetitions == 3 and [r["bw_bytes_per_s"] for r in cell.repetitions] == bws
        assert cell.bw_bytes_per_s == statistics.median(bws) == claim["bw_bytes_per_s"]
        assert (cell.bw_min_bytes_per_s, cell.bw_max_bytes_per_s) == (min(bws), max(bws))
        assert cell.bw_cv == pytest.approx(statistics.stdev(bws) / statistics.fmean(bws)) == claim["bw_cv"]
        assert cell.noisy is (cell.bw_cv > 0.10)
        assert cell.iops == statistics.median(iops) == claim["iops"]
        assert cell.speedup == claim["speedup"] and cell.knee == claim["knee"]
        assert cell.access == ("random" if claim["pattern"].startswith("rand") else "sequential")
    patterns = SurfacePattern.objects.filter(test_run=run)
    assert sorted(p.pattern for p in patterns) == ["randread", "randwrite", "read", "write"]
    for pattern in patterns:
        assert not pattern.claim_differs and pattern.claimed["pattern"] == pattern.pattern
        assert (pattern.knee_block_size_bytes, pattern.knee_iodepth) == (
            pattern.claimed["knee"]["block_size_bytes"],
            pattern.claimed["knee"]["iodepth"],
        )
        assert pattern.queue_depth_real is True and "file system path" in pattern.target_note
        assert (pattern.repetitions, pattern.repeatable) == (3, True)
        assert [k["repetition"] for k in pattern.knee_by_repetition] == [1, 2, 3]
        agreeing = [k for k in pattern.knee_by_repetition if (k["block_size_bytes"], k["iodepth"]) == (
            pattern.knee_block_size_bytes, pattern.knee_iodepth)]  # fmt: skip
        assert pattern.knee_agreeing_repetitions == len(agreeing) == pattern.claimed["knee_agreeing_repetitions"]
        assert pattern.knee_moves is (len(agreeing) < 3)
        assert pattern.noisy_cells == sum(1 for c in cells.values() if c.pattern == pattern.pattern and c.noisy)
    assert not Flag.objects.filter(submission=submission, kind="surface_claim_differs").exists()


def test_the_surface_run_is_never_pts_compliant_and_the_pts_tests_are_not_mixed_with_it(submission, surface_bundle):
    ingest_submission(submission=submission, bundle=surface_bundle)
    surface_run = TestRun.objects.get(submission=submission, test="surface")
    assert surface_run.compliant is False
    assert any("nvmedb extension" in reason for reason in surface_run.compliance_reasons)
    assert surface_run.headline == {}
    assert surface_run.iodepth is None and "varies the queue depth" in surface_run.missing["iodepth"]
    wsat = TestRun.objects.get(submission=submission, test="wsat")
    assert not any("nvmedb extension" in reason for reason in wsat.compliance_reasons)
    assert not Measurement.objects.filter(test_run=wsat, run_key__startswith="surface").exists()
    assert not SurfaceCell.objects.filter(test_run=wsat).exists()


def test_a_claimed_knee_the_raw_data_does_not_give_is_flagged_and_the_server_s_figure_stands(
    submission, surface_bundle_file, tmp_path
):
    def change(manifest):
        read = next(p for p in manifest["surface"]["patterns"] if p["pattern"] == "read")
        read["knee"]["iodepth"] = 4 if read["knee"]["iodepth"] == 1 else 1
        read["peak_bw_bytes_per_s"] *= 2

    bundle = forged(surface_bundle_file, tmp_path, change)
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published", outcome.reasons
    read = SurfacePattern.objects.get(test_run__submission=submission, pattern="read")
    assert read.claim_differs and "90% knee" in read.note and "peak" in read.note
    cells = SurfaceCell.objects.filter(test_run__submission=submission, pattern="read")
    knee = cells.get(knee=True)
    assert (knee.block_size_bytes, knee.iodepth) == (read.knee_block_size_bytes, read.knee_iodepth)
    assert read.peak_bw_bytes_per_s == max(c.bw_bytes_per_s for c in cells)
    assert (
        not SurfacePattern.objects.filter(test_run__submission=submission, claim_differs=True)
        .exclude(pattern="read")
        .exists()
    )
    flags = Flag.objects.filter(submission=submission, kind="surface_claim_differs")
    assert flags.count() == 2 and all("the server's figure stands" in f.reason for f in flags)


def test_a_bundle_without_the_client_s_surface_figures_is_flagged_and_still_derived(
    submission, surface_bundle_file, tmp_path
):
    bundle = forged(surface_bundle_file, tmp_path, lambda manifest: manifest.pop("surface"))
    ingest_submission(submission=submission, bundle=bundle)
    patterns = SurfacePattern.objects.filter(test_run__submission=submission)
    assert [p.claimed for p in patterns] == [None] * 4 and all(p.knee_iodepth for p in patterns)
    (flag,) = Flag.objects.filter(submission=submission, kind="surface_claim_differs")
    assert "no surface figures" in flag.reason


@pytest.mark.parametrize("fmt", ["csv", "json"])  # PostgreSQL's COPY and the ORM rendering
def test_the_real_surface_run_is_in_surface_runs_and_its_cells_in_no_measurements_row(
    client, submission, surface_bundle, fmt
):
    import csv
    import io

    from django.utils import timezone

    assert ingest_submission(submission=submission, bundle=surface_bundle).status == "published"
    submission.status, submission.published_at = "published", timezone.now()  # as the intake service does
    submission.save(update_fields=["status", "published_at"])
    client.force_login(submission.uploader)  # a file-target quick run is a trial: its owner's include=trial export

    def rows(table: str) -> list[dict]:
        response = client.get(f"/datasets/{table}.{fmt}", {"include": "trial"})
        content = b"".join(response.streaming_content).decode()
        return json.loads(content) if fmt == "json" else list(csv.DictReader(io.StringIO(content, newline="")))

    surface_run, wsat = (TestRun.objects.get(submission=submission, test=test) for test in ("surface", "wsat"))
    assert {int(row["run_id"]) for row in rows("runs")} == {wsat.id}
    measured = [int(row["run_id"]) for row in rows("measurements")]
    assert measured and set(measured) == {wsat.id}
    (row,) = rows("surface_runs")
    assert int(row["run_id"]) == surface_run.id and row["submission_id"] == str(submission.pk)
    assert row["compliance_reasons"] == "; ".join(surface_run.compliance_reasons)
    assert "nvmedb extension" in row["compliance_reasons"] and row["target_kind"] == "file"
    cells = rows("surface")
    assert len(cells) == SurfaceCell.objects.filter(test_run=surface_run).count() == 16
    assert {int(c["run_id"]) for c in cells} == {surface_run.id}
    for row in cells:  # the median and the spread, through PostgreSQL's COPY (csv) and the ORM rendering (json)
        cell = SurfaceCell.objects.get(pk=int(row["surface_cell_id"]))
        assert int(row["n_repetitions"]) == 3 and float(row["bw_bytes_per_s"]) == cell.bw_bytes_per_s
        assert float(row["bw_min_bytes_per_s"]) == cell.bw_min_bytes_per_s <= cell.bw_bytes_per_s
        assert float(row["bw_max_bytes_per_s"]) == cell.bw_max_bytes_per_s >= cell.bw_bytes_per_s
        assert float(row["bw_cv"]) == pytest.approx(cell.bw_cv)


def test_the_owner_sees_the_trial_surface_with_every_plot_and_nobody_else_does(
    client, django_user_model, submission, surface_bundle
):
    import re

    from django.utils import timezone

    from reports.tests.test_surface_pages import CHART_KEYS, figure

    assert ingest_submission(submission=submission, bundle=surface_bundle).status == "published"
    submission.status, submission.published_at = "published", timezone.now()  # as the intake service does
    submission.save(update_fields=["status", "published_at"])
    url = f"/submissions/{submission.pk}/surface/"
    assert client.get(url).status_code == 404  # a trial is its owner's alone
    client.force_login(django_user_model.objects.create_user("someone-else", password="x" * 12))
    assert client.get(url).status_code == 404
    assert url not in client.get(f"/submissions/{submission.pk}/").content.decode()

    client.force_login(submission.uploader)
    assert f'href="{url}"' in client.get(f"/submissions/{submission.pk}/").content.decode()  # linked from it
    html = client.get(url).content.decode()
    assert "a file on the host&#x27;s file system" in html and "Only you see this page" in html
    answers = re.findall(r'<li class="surface-answer" data-pattern="(\w+)">(.*?)</li>', html)
    assert [pattern for pattern, _ in answers] == ["read", "randread", "write", "randwrite"]
    assert all("peaks at" in sentence and "QD 1 → peak" in sentence for _, sentence in answers)
    for key in CHART_KEYS:
        traces = figure(html, key)["data"]
        values = [v for t in traces for v in (sum(t["z"], []) if "z" in t else t["y"]) if v is not None]
        assert values, key
    latency = figure(html, "surface-latency")  # the fio runs' own latency (lat_percentiles=1: p99 is stored)
    assert any(t["name"] == "99th percentile, QD 1" and any(t["y"]) for t in latency["data"])
    assert "the drive&#x27;s page" not in html.lower()  # a file target is no drive: no link to a drive page


def test_an_old_bundle_with_one_pass_per_cell_ingests_with_one_repetition_and_its_spread_missing_with_the_reason(
    submission, surface_bundle_file, tmp_path
):
    def one_pass(manifest):
        later = [r for r in manifest["runs"] if r["phase"] == "surface" and r["round"] > 1]
        dropped = {r[k] for r in later for k in ("job_file", "output_file", "smart_before", "smart_after") if r[k]}
        manifest["runs"] = [r for r in manifest["runs"] if r not in later]
        manifest["files"] = [f for f in manifest["files"] if f["path"] not in dropped]
        del manifest["plan"]["extensions"]["surface"]["repetitions"]
        manifest.pop("surface")  # the old client's claim had no spread; the figures are re-derived either way

    bundle = forged(surface_bundle_file, tmp_path, one_pass)
    assert ingest_submission(submission=submission, bundle=bundle).status == "published"
    cells = SurfaceCell.objects.filter(test_run__submission=submission)
    assert cells.count() == 16
    assert set(cells.values_list("n_repetitions", "bw_min_bytes_per_s", "bw_max_bytes_per_s", "bw_cv", "noisy")) == {
        (1, None, None, None, None)
    }
    assert all("one repetition" in c.spread_reason for c in cells)
    patterns = SurfacePattern.objects.filter(test_run__submission=submission)
    assert {(p.repetitions, p.repeatable, p.knee_moves) for p in patterns} == {(1, False, False)}
