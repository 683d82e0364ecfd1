"""Hostile but self-consistent bundles built from real fio outputs: each class ends rejected or held with the rule
that caught it, and never published; an honest device run with its smart-logs still publishes as PTS-compliant."""

import json
import math
from datetime import datetime

import pytest

from analysis.filters import DriveFilter
from analysis.ingest import ingest_submission
from analysis.models import DriveModel, Measurement, TestRun
from analysis.tests.bundles import full_iops_plan_samples
from nvmedb_client.fio_output import parse_fio_output, summarize
from nvmedb_client.plan import build_plan, plan_to_dict
from nvmedb_client.pts.surface import SurfaceOptions

SMART = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"
CAPACITY = 1_000_204_886_016


def _when(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _scale_direction(data, factor):
    """Every figure fio derives from the I/O count, scaled together, so the arithmetic cross-checks still agree."""
    for key in ("iops", "bw", "bw_bytes", "io_bytes", "io_kbytes", "total_ios"):
        if key in data:
            data[key] = data[key] * factor if isinstance(data[key], float) else int(data[key] * factor)


def _edit_fio(run_dir, run, change):
    path = run_dir / run["output_file"]
    doc = json.loads(path.read_text())
    for job in doc["jobs"]:
        change(job)
    path.write_text(json.dumps(doc))


def _device(run_dir, manifest, files, shared_samples, *, smart=True, smart_scale=1.0):
    """The run as a client on a device writes it: a device target, and a smart-log before and after every run whose
    counters moved with fio's bytes (× smart_scale) and whose power-on hours follow the runs' clock."""
    manifest["target"]["kind"] = "device"
    reasons = manifest["compliance"]["reasons"]
    reasons[:] = [r for r in reasons if not r.startswith("file target")]  # a device is no file target
    if not smart:
        return
    (run_dir / "smart").mkdir(exist_ok=True)
    base = json.loads((shared_samples / SMART).read_text())
    first = _when(manifest["runs"][0]["started_at"])
    state = dict(base)
    for run in manifest["runs"]:
        summary = summarize(parse_fio_output((run_dir / run["output_file"]).read_bytes()))
        for side, moment in (("before", run["started_at"]), ("after", run["finished_at"])):
            if side == "after":
                state["data_units_read"] += math.ceil((summary.read_bytes or 0) * smart_scale / 512_000)
                state["data_units_written"] += math.ceil((summary.write_bytes or 0) * smart_scale / 512_000)
            state["power_on_hours"] = base["power_on_hours"] + int((_when(moment) - first).total_seconds() // 3600)
            path = f"smart/{run['id']}.{side}.json"
            (run_dir / path).write_text(json.dumps(state))
            run[f"smart_{side}"] = path
            files.append(path)


def _pts_claim(run_dir, manifest, files):
    """What a compliant client run declares: pts profile, client edition (2 threads × QD 16, as the samples ran),
    the PTS plan for the IOPS test, and a purge by NVMe Format."""
    manifest["profile"], manifest["edition"] = "pts", "client"
    manifest["compliance"] = {"compliant": True, "reasons": []}
    manifest["target"]["size_bytes"] = CAPACITY
    manifest["plan"] = plan_to_dict(
        build_plan(tests=["iops"], edition="client", profile="pts", capacity_bytes=CAPACITY, target_kind="device")
    )
    manifest["target"]["active_range_bytes"] = manifest["plan"]["active_range_bytes"]
    (run_dir / "run.json").write_text(json.dumps({"purges": [{"block": "iops", "method": "format-ses1"}]}))
    files.append("run.json")


def _assert_not_published(submission, outcome, status, rule):
    assert outcome.status == status, outcome.reasons
    assert any(reason.startswith(f"{rule}: ") for reason in outcome.reasons), outcome.reasons
    if status == "rejected":
        assert not TestRun.objects.filter(submission=submission).exists()
    else:
        assert not TestRun.objects.filter(submission=submission, compliant=True).exists()


def test_an_honest_device_run_with_its_smart_logs_publishes_as_pts_compliant(
    submission, make_verified, shared_samples, tmp_path
):
    """Every cell of the PTS IOPS plan, 5 rounds to steady state (analysis.compliance counts them)."""

    def mutate(run_dir, manifest, files):
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples)

    samples = full_iops_plan_samples(shared_samples, tmp_path / "samples")
    outcome = ingest_submission(submission=submission, bundle=make_verified(samples=samples, mutate=mutate))
    assert outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission)
    assert run.compliant is True and run.target_kind == "device"
    assert Measurement.objects.filter(test_run=run, temperature_before_k__isnull=False).count() == 56 * 5 + 1
    submission.status = "published"
    submission.save()
    listed = DriveFilter({"compliance": "pts"}, queryset=DriveModel.objects.all()).qs
    assert run.drive_model in listed


def test_a_pts_device_run_with_a_custom_surface_grid_in_its_plan_publishes_and_is_not_held(
    submission, make_verified, shared_samples, tmp_path
):
    """The surface is an nvmedb extension: a plan with any surface grid (options changed) beside the PTS tests is
    no "plan that is not the PTS plan"; the PTS tests stay compliant, the surface is never."""
    grid = SurfaceOptions(min_bs=8192, max_bs=1 << 20, bs_step=4, max_qd=64, qd_step=4, cell_s=3.0)

    def mutate(run_dir, manifest, files):
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples)
        built = build_plan(tests=["iops", "surface"], edition="client", profile="pts", capacity_bytes=CAPACITY,
                           target_kind="device", surface=grid)  # fmt: skip
        manifest["plan"] = plan_to_dict(built)
        manifest["extensions"] = {"surface": built.surface.to_dict(target_kind="device")}

    samples = full_iops_plan_samples(shared_samples, tmp_path / "samples")
    outcome = ingest_submission(submission=submission, bundle=make_verified(samples=samples, mutate=mutate))
    assert outcome.status == "published", outcome.reasons
    assert not any("compliance_evidence" in reason for reason in outcome.reasons)
    assert TestRun.objects.get(submission=submission, test="iops").compliant is True


def test_impossible_iops_are_rejected(submission, make_verified):
    """The reported case: ~2.5e10 IOPS, every fio figure scaled consistently, on a Gen3 x4 link."""

    def mutate(run_dir, manifest, files):
        run = next(r for r in manifest["runs"] if r["block_size_bytes"] == 4096)
        iops = summarize(parse_fio_output((run_dir / run["output_file"]).read_bytes())).total_iops
        _edit_fio(run_dir, run, lambda job: [_scale_direction(job[d], 2.5e10 / iops) for d in ("read", "write")])

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "rejected", "link_iops")
    assert any(reason.startswith("link_bandwidth: ") for reason in outcome.reasons)


def test_negative_iops_and_bandwidth_are_rejected(submission, make_verified):
    def mutate(run_dir, manifest, files):
        run = next(r for r in manifest["runs"] if r["read_pct"] == 0)
        _edit_fio(run_dir, run, lambda job: _scale_direction(job["write"], -1))

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "rejected", "finite_non_negative")


def test_zero_nanosecond_latency_is_rejected(submission, make_verified):
    def zero(job):
        for direction in ("read", "write"):
            for key in ("clat_ns", "lat_ns"):
                job[direction][key].update(min=0, max=0, mean=0.0, stddev=0.0)

    def mutate(run_dir, manifest, files):
        _edit_fio(run_dir, manifest["runs"][0], zero)

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "rejected", "latency_floor")


def test_smart_counters_scaled_with_fios_bytes_are_rejected(submission, make_verified, shared_samples):
    """fio's figures and the drive's counters scaled by the same factor agree with each other, but not with the
    wall clock and the link between the snapshots."""

    def mutate(run_dir, manifest, files):
        for run in manifest["runs"]:
            _edit_fio(run_dir, run, lambda job: [_scale_direction(job[d], 1000) for d in ("read", "write")])
        _device(run_dir, manifest, files, shared_samples)

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "rejected", "smart_progress")
    assert not any("moved by only" in reason or "far more" in reason for reason in outcome.reasons)


def test_smart_counters_that_moved_faster_than_the_link_are_rejected(submission, make_verified, shared_samples):
    def mutate(run_dir, manifest, files):
        _device(run_dir, manifest, files, shared_samples, smart_scale=1000)

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "rejected", "smart_progress")


def test_a_nan_runtime_is_rejected(submission, make_verified):
    bundle = make_verified()
    bundle.manifest["runs"][0]["runtime_s"] = float("nan")  # as a lenient JSON parser would have let it through
    outcome = ingest_submission(submission=submission, bundle=bundle)
    _assert_not_published(submission, outcome, "rejected", "finite_non_negative")
    assert any("runtime_s is nan" in reason for reason in outcome.reasons)


def test_cells_shorter_than_the_plan_are_rejected_even_without_runtime_s(submission, make_verified):
    def mutate(run_dir, manifest, files):
        for run in manifest["runs"]:
            del run["runtime_s"]
        manifest["plan"]["blocks"][0]["series"][0]["runtime_s"] = 120  # fio ran the samples' 60 s

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "rejected", "cell_runtime")


def test_a_device_run_without_smart_logs_is_held(submission, make_verified, shared_samples):
    def mutate(run_dir, manifest, files):
        _device(run_dir, manifest, files, shared_samples, smart=False)

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "held", "smart_logs_missing")


@pytest.mark.parametrize("profile", ["quick", "pts"])
def test_a_file_target_declaring_itself_compliant_is_held_and_not_compliant(submission, make_verified, profile):
    def mutate(run_dir, manifest, files):
        manifest["profile"] = profile
        manifest["compliance"] = {"compliant": True, "reasons": []}

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "held", "compliance_evidence")
    run = TestRun.objects.get(submission=submission)
    assert run.compliant is False and any("compliance_evidence" in r for r in run.compliance_reasons)


def test_a_pts_claim_with_five_second_cells_is_held(submission, make_verified, shared_samples):
    def mutate(run_dir, manifest, files):
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples)
        manifest["plan"]["blocks"][0]["series"][0]["runtime_s"] = 5
        for run in manifest["runs"]:
            del run["runtime_s"]

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    _assert_not_published(submission, outcome, "held", "compliance_evidence")


def test_a_file_target_row_marked_compliant_is_not_listed_as_pts(client, db):
    """Rows stored before these gates may say compliant for a file target; neither PTS filter believes them."""
    from analysis.tests.factories import iops_run
    from analysis.tests.test_datasets_exports import ids

    shape = {"rounds": 1, "mixes": (0,), "block_sizes": (4096,), "profile": "pts", "compliant": True}
    device, file = iops_run(**shape), iops_run(**shape, target_kind="file")
    listed = DriveFilter({"compliance": "pts"}, queryset=DriveModel.objects.all()).qs
    assert device.drive_model in listed and file.drive_model not in listed
    assert ids(client, "runs", compliance="pts") == [device.id]
