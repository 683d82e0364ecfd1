"""ECW and DIRTH on the server: a real quick run ingested end to end, the server's own derivation of the
demand-intensity curve, operating points and histograms from the raw fio outputs, compared with the client's claim."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from analysis.ingest import ingest_submission
from analysis.models import DemandIntensityCurve, Flag, Measurement, TestRun
from nvmedb_client.bundle import verify_bundle, write_bundle

pytestmark = pytest.mark.fio


@pytest.fixture(scope="module")
def real_bundle(tmp_path_factory):
    base = tmp_path_factory.mktemp("ecw-dirth")
    env = {**os.environ, "NVMEDB_CONFIG_DIR": str(base / "config"), "NVMEDB_QUICK_CELL_S": "0.5"}
    result = subprocess.run(
        [sys.executable, "-c", "from nvmedb_client.cli import main; main()", "run", "--target-file",
         str(base / "target.img"), "--size", "64MiB", "--profile", "quick", "--tests", "ecw,dirth",
         "--out", str(base / "out"), "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return verify_bundle(Path(json.loads(result.stdout)["bundle"]), extract_to=base / "extracted")


def test_a_real_quick_ecw_and_dirth_run_is_published(submission, real_bundle):
    outcome = ingest_submission(submission=submission, bundle=real_bundle)
    assert outcome.status == "published", "\n".join(outcome.reasons)


def test_the_server_derives_the_curve_operating_points_and_histograms_and_they_match_the_claim(submission, real_bundle):
    ingest_submission(submission=submission, bundle=real_bundle)
    claims = {c["test"]: c for c in real_bundle.manifest["demand_intensity"]}
    for test in ("ecw", "dirth"):
        run = TestRun.objects.get(submission=submission, test=test)
        curve = DemandIntensityCurve.objects.get(test_run=run)
        assert not curve.claim_differs and curve.claimed == claims[test]
        assert curve.round_number == claims[test]["round"] == 2  # 2 quick rounds, never steady
        points = list(curve.points.all())
        assert [(p.threads, p.iodepth) for p in points] == [(2, 4), (2, 1), (1, 4), (1, 1)]
        by_cell = {(p["threads"], p["iodepth"]): p for p in claims[test]["points"]}
        for p in points:
            claimed = by_cell[(p.threads, p.iodepth)]
            assert (p.total_iops, p.lat_mean_ns, p.lat_p99999_ns) == (
                claimed["iops"], claimed["lat_mean_ns"], claimed["lat_p99_999_ns"]
            )  # fmt: skip
            assert p.outstanding_ios == p.threads * p.iodepth and p.run_key == claimed["run_id"]
            # the Measurement of the same cell carries its TC and QD
            m = Measurement.objects.get(test_run=run, run_key=p.run_key)
            assert (m.threads, m.iodepth) == (p.threads, p.iodepth)
    dirth = DemandIntensityCurve.objects.get(test_run__submission=submission, test_run__test="dirth")
    ops = {op.name: op for op in dirth.operating_points.all()}
    assert set(ops) == {"max", "mid", "min"}
    assert (ops["min"].threads, ops["min"].iodepth) == (1, 1)
    assert ops["max"].total_iops == max(p.total_iops for p in dirth.points.all())
    for op in ops.values():
        assert op.latency_kind == "lat" and sum(b.io_count for b in op.buckets.all()) == op.total_ios > 0
        # each histogram is read from the point's own capture run after the sweep
        assert (op.histogram_source, op.histogram_run_key) == ("capture", f"dirth-capture-{op.name}")
    assert not Flag.objects.filter(submission=submission, kind__startswith="dirth_capture").exists()
    # the pre-writes are stored as ordinary measurements of their phase, and are no point of the curve
    prewrites = Measurement.objects.filter(test_run__submission=submission, round__phase="prewrite")
    assert sorted(m.run_key for m in prewrites) == [
        "dirth-prewrite-max", "dirth-prewrite-mid", "dirth-prewrite-min", "dirth-r01-prewrite", "dirth-r02-prewrite"
    ]  # fmt: skip
    assert all((m.pattern, m.read_pct, m.block_size_bytes) == ("randwrite", 0, 8192) for m in prewrites)
    assert all(m.write_iops > 0 and m.test_run.test == "dirth" for m in prewrites)
    for m in prewrites.filter(run_key__startswith="dirth-prewrite-"):
        op = ops[m.run_key.removeprefix("dirth-prewrite-")]
        assert (m.threads, m.iodepth) == (op.threads, op.iodepth)
    assert not {p.run_key for p in dirth.points.all()} & {m.run_key for m in prewrites}
    assert not DemandIntensityCurve.objects.filter(test_run__submission=submission, test_run__test="ecw")[
        0
    ].operating_points.exists()


def test_a_claim_that_differs_from_the_raw_data_is_kept_flagged_and_the_servers_derivation_stands(
    submission, real_bundle, tmp_path
):
    manifest = {k: v for k, v in real_bundle.manifest.items() if k != "files"}
    claim = next(e for e in manifest["demand_intensity"] if e["test"] == "dirth")
    truth = json.loads(json.dumps(claim))
    claim["operating_points"][0]["threads"], claim["operating_points"][0]["iodepth"] = 1, 1
    manifest["demand_intensity"].append({"test": "hir", "points": []})
    forged = write_bundle(
        run_dir=Path(real_bundle.root) / "files", manifest=manifest, signing_key=Ed25519PrivateKey.generate(),
        out_path=tmp_path / "forged.nvmedb.tar.gz", files=[f["path"] for f in real_bundle.manifest["files"]],
    )  # fmt: skip
    outcome = ingest_submission(submission=submission, bundle=verify_bundle(forged, extract_to=tmp_path / "x"))
    assert outcome.status == "published", outcome.reasons
    curve = DemandIntensityCurve.objects.get(test_run__submission=submission, test_run__test="dirth")
    assert curve.claim_differs and curve.claimed["operating_points"][0]["threads"] == 1
    assert "operating points differ from the raw data" in curve.note
    stored = {op.name: (op.threads, op.iodepth) for op in curve.operating_points.all()}
    assert stored["max"] == (truth["operating_points"][0]["threads"], truth["operating_points"][0]["iodepth"])
    reasons = list(
        Flag.objects.filter(submission=submission, kind="demand_claim_differs").values_list("reason", flat=True)
    )
    assert len(reasons) == 2 and any("'hir'" in r for r in reasons)


def test_a_missing_tc_qd_cell_is_stored_missing_with_its_reason_and_never_interpolated(
    submission, real_bundle, tmp_path
):
    manifest = {k: v for k, v in real_bundle.manifest.items() if k != "files"}
    dropped = "dirth-r02-tc01-qd01"  # MinIOPS of the curve's round
    manifest["runs"] = [r for r in manifest["runs"] if r["id"] != dropped]
    claim = next(e for e in manifest["demand_intensity"] if e["test"] == "dirth")
    files = [f["path"] for f in real_bundle.manifest["files"] if dropped not in f["path"]]
    forged = write_bundle(
        run_dir=Path(real_bundle.root) / "files", manifest=manifest, signing_key=Ed25519PrivateKey.generate(),
        out_path=tmp_path / "forged.nvmedb.tar.gz", files=files,
    )  # fmt: skip
    outcome = ingest_submission(submission=submission, bundle=verify_bundle(forged, extract_to=tmp_path / "x"))
    assert outcome.status != "rejected", outcome.reasons
    curve = DemandIntensityCurve.objects.get(test_run__submission=submission, test_run__test="dirth")
    point = curve.points.get(threads=1, iodepth=1)
    assert point.total_iops is None and point.missing == {"total_iops": "round 2 has no run of TC 1/QD 1"}
    ops = {op.name: op for op in curve.operating_points.all()}
    assert ops["min"].threads is None and "TC 1/QD 1" in ops["min"].missing["point"]
    assert ops["max"].threads is not None and ops["max"].buckets.exists()
    # the client's claim (made with the cell) no longer matches what the bundle holds
    assert curve.claim_differs and curve.claimed == claim


@pytest.mark.parametrize("claim", ["not a list", [["x"]], [{"test": ["dirth"]}], [{"test": "dirth", "points": "x"}]])
def test_a_claim_of_any_shape_is_flagged_never_a_crash(submission, real_bundle, tmp_path, claim):
    manifest = {k: v for k, v in real_bundle.manifest.items() if k != "files"}
    manifest["demand_intensity"] = claim
    forged = write_bundle(
        run_dir=Path(real_bundle.root) / "files", manifest=manifest, signing_key=Ed25519PrivateKey.generate(),
        out_path=tmp_path / "forged.nvmedb.tar.gz", files=[f["path"] for f in real_bundle.manifest["files"]],
    )  # fmt: skip
    outcome = ingest_submission(submission=submission, bundle=verify_bundle(forged, extract_to=tmp_path / "x"))
    assert outcome.status == "published", outcome.reasons
    curves = DemandIntensityCurve.objects.filter(test_run__submission=submission)
    assert curves.count() == 2 and all(c.claim_differs for c in curves)
    assert Flag.objects.filter(submission=submission, kind="demand_claim_differs").count() >= 2


# -- the captures: each histogram only from a capture at its re-derived point -------------------------------------


def _forge(real_bundle, tmp_path, edit):
    """The real bundle with its manifest edited by `edit(manifest)` (returns the run ids to leave out), re-signed."""
    manifest = json.loads(json.dumps({k: v for k, v in real_bundle.manifest.items() if k != "files"}))
    dropped = edit(manifest) or set()
    manifest["runs"] = [r for r in manifest["runs"] if r["id"] not in dropped]
    files = [f["path"] for f in real_bundle.manifest["files"] if not any(d in f["path"] for d in dropped)]
    forged = write_bundle(
        run_dir=Path(real_bundle.root) / "files", manifest=manifest, signing_key=Ed25519PrivateKey.generate(),
        out_path=tmp_path / "forged.nvmedb.tar.gz", files=files,
    )  # fmt: skip
    return verify_bundle(forged, extract_to=tmp_path / "x")


def _dirth_points(submission):
    curve = DemandIntensityCurve.objects.get(test_run__submission=submission, test_run__test="dirth")
    return {op.name: op for op in curve.operating_points.all()}


def test_a_capture_that_claims_another_tc_qd_is_not_published_for_its_point(submission, real_bundle, tmp_path):
    def edit(manifest):  # mid's entry names another point's capture, whose fio output agrees with the entry
        runs = {r["id"]: r for r in manifest["runs"]}
        mid = runs["dirth-capture-mid"]
        other = next(r for r in (runs["dirth-capture-max"], runs["dirth-capture-min"])
                     if (r["threads"], r["iodepth"]) != (mid["threads"], mid["iodepth"]))  # fmt: skip
        mid.update({k: other[k] for k in ("threads", "iodepth", "job_file", "output_file")})
        # a pre-write runs before each capture: the forger leaves out the one between the two and moves mid's
        # window onto the other's fio clock, so only the TC/QD check can catch the swap
        if other["id"] == "dirth-capture-max":
            mid["started_at"] = other["finished_at"]
            return {"dirth-prewrite-mid"}
        mid["finished_at"] = other["started_at"] = other["finished_at"]
        return {"dirth-prewrite-min"}

    outcome = ingest_submission(submission=submission, bundle=_forge(real_bundle, tmp_path, edit))
    assert outcome.status == "published", outcome.reasons
    ops = _dirth_points(submission)
    assert not ops["mid"].buckets.exists() and ops["mid"].total_ios is None
    assert ops["mid"].histogram_source == "capture" and "the sweep gives mid" in ops["mid"].missing["histogram"]
    assert ops["max"].buckets.exists() and ops["min"].buckets.exists()
    (flag,) = Flag.objects.filter(submission=submission, kind="dirth_capture_mismatch")
    assert flag.reason.startswith("mid: the capture dirth-capture-mid ran at TC ")


def test_a_missing_capture_is_flagged_and_its_point_has_no_histogram(submission, real_bundle, tmp_path):
    ingest_submission(submission=submission, bundle=_forge(real_bundle, tmp_path, lambda m: {"dirth-capture-max"}))
    ops = _dirth_points(submission)
    assert not ops["max"].buckets.exists() and "no capture run of max" in ops["max"].missing["histogram"]
    assert Flag.objects.filter(submission=submission, kind="dirth_capture_missing").count() == 1


def test_a_bundle_without_captures_keeps_the_sweep_cells_histograms_labelled_so(submission, real_bundle, tmp_path):
    def edit(manifest):
        claim = next(e for e in manifest["demand_intensity"] if e["test"] == "dirth")
        for histogram in claim["histograms"]:  # what a client without captures claimed: the sweep cell's
            histogram.pop("source")
        return {r["id"] for r in manifest["runs"] if r["phase"] == "capture"}

    ingest_submission(submission=submission, bundle=_forge(real_bundle, tmp_path, edit))
    ops = _dirth_points(submission)
    for op in ops.values():
        assert (op.histogram_source, op.histogram_run_key) == ("sweep cell", op.run_key) and op.buckets.exists()
    assert not Flag.objects.filter(submission=submission, kind__startswith="dirth_capture").exists()


def test_a_capture_run_must_be_one_the_plan_declares_at_a_cell_of_its_sweep():
    from analysis.crosscheck import check_run_against_plan
    from nvmedb_client.plan import build_plan, plan_to_dict, quick_profile

    plan = plan_to_dict(build_plan(tests=["dirth"], capacity_bytes=2**28, target_kind="file", profile=quick_profile(1)))
    stimulus = {k: plan["blocks"][0]["series"][0]["cells"][0][k] for k in ("pattern", "block_size_bytes", "read_pct")}
    run = {"id": "dirth-capture-mid", "test": "dirth", "phase": "capture", "round": 1, **stimulus,
           "threads": 2, "iodepth": 1, "runtime_s": 3}  # fmt: skip
    assert check_run_against_plan(run=run, plan=plan) == []
    for other in ({"threads": 8}, {"read_pct": 100}, {"pattern": "randwrite"}):
        (failure,) = check_run_against_plan(run={**run, **other, "runtime_s": 60}, plan=plan)
        assert "is no cell of the plan's sweep" in failure.reason and "runtime 60 s" in failure.reason
    (failure,) = check_run_against_plan(run={**run, "id": "dirth-capture-extra"}, plan=plan)
    assert "not in the plan's capture series" in failure.reason
    for hostile in (5, "dirth-capture-mid", [5, None], {"run_id": "dirth-capture-mid"}):
        blocks = [{**plan["blocks"][0], "captures": hostile, "series": hostile}]
        (failure,) = check_run_against_plan(run=run, plan={**plan, "blocks": blocks})
        assert failure.reason.startswith("run dirth-capture-mid: ")


def test_a_pre_write_run_must_be_one_the_plan_declares():
    from analysis.crosscheck import check_run_against_plan
    from nvmedb_client.plan import build_plan, plan_to_dict, quick_profile

    plan = plan_to_dict(build_plan(tests=["dirth"], capacity_bytes=2**28, target_kind="file", profile=quick_profile(1)))
    write = {"test": "dirth", "phase": "prewrite", "round": 2, "pattern": "randwrite", "block_size_bytes": 8192,
             "read_pct": 0}  # fmt: skip
    before_round = {**write, "id": "dirth-r02-prewrite", "threads": 2, "iodepth": 4, "runtime_s": 1}
    before_mid = {**write, "id": "dirth-prewrite-mid", "round": 1, "threads": 2, "iodepth": 1, "runtime_s": 2}
    assert check_run_against_plan(run=before_round, plan=plan) == []
    assert check_run_against_plan(run=before_mid, plan=plan) == []  # TC/QD decided after the sweep: a sweep cell
    wrong = [
        ({"threads": 1}, "TC 1/QD 4 where the plan says TC 2/QD 4"),
        ({"read_pct": 65, "pattern": "randrw"}, "read_pct 65 where the plan says 0"),
        ({"runtime_s": 60}, "runtime 60 s where the plan says 1 s"),
        ({"phase": "wdpc"}, "phase wdpc is no pre-write"),
    ]
    for change, reason in wrong:
        (failure,) = check_run_against_plan(run={**before_round, **change}, plan=plan)
        assert failure.reason.startswith("run dirth-r02-prewrite: ") and reason in failure.reason
    (failure,) = check_run_against_plan(run={**before_mid, "threads": 8}, plan=plan)
    assert "TC 8/QD 1 is no cell of the plan's sweep" in failure.reason
    # a pre-write the plan does not declare is rejected like any run outside its plan: beyond its rounds, or in a
    # plan without pre-writes (an older client's)
    (failure,) = check_run_against_plan(run={**before_round, "id": "dirth-r03-prewrite", "round": 3}, plan=plan)
    assert (
        failure.reason == "run dirth-r03-prewrite: cell randwrite 8192 B 0% reads is not in the plan's prewrite series"
    )
    older = {**plan, "blocks": [{k: v for k, v in plan["blocks"][0].items() if k != "prewrites"}]}
    for run in (before_round, before_mid):
        (failure,) = check_run_against_plan(run=run, plan=older)
        assert "is not in the plan's prewrite series" in failure.reason
    for hostile in (5, "dirth-r02-prewrite", [5, None], {"run_id": "dirth-r02-prewrite"}, [{"run_id": [1]}]):
        blocks = [{**plan["blocks"][0], "prewrites": hostile}]
        (failure,) = check_run_against_plan(run=before_round, plan={**plan, "blocks": blocks})
        assert failure.reason.startswith("run dirth-r02-prewrite: ")
