"""Compliance means the plan ran (issue 21, item 5): a device bundle that declares itself PTS-compliant is stored
compliant only when the server finds every cell of the PTS plan in every round, and steady state or the round limit;
a held submission's runs are never compliant, and staff approval gives them back the server's verdict.

Built from the real SSSPT IOPS run in the shared samples (56 cells, rounds 1-5 of each; 2 threads × QD 16, as the
client edition plans them). Its 64 KiB 65/35 tracking cell is not steady over rounds 1-5 (it steadies over 3-7), so
the full plan as recorded is the "5 rounds without steady state" case, and the steady fixture takes that cell's
rounds 3-7 as rounds 1-5.
"""

import io

import pytest
from django.core.management import call_command

from analysis import compliance
from analysis.ingest import ingest_submission
from analysis.models import TestRun
from analysis.tests.bundles import full_iops_plan_samples
from analysis.tests.test_plausibility_ingest import _device, _pts_claim
from analysis.tests.test_pts_surface_separation import export
from nvmedb_client.steady_state import DEFAULT_MAX_ROUNDS


def _claimed_device(shared_samples):
    def mutate(run_dir, manifest, files):
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples)

    return mutate


def _published_pts_runs(client, submission) -> list[dict]:
    submission.status = "published"
    submission.save()
    return [
        row for row in export(client, "runs", "csv", compliance="pts") if row["submission_id"] == str(submission.pk)
    ]


@pytest.fixture
def full_plan(shared_samples, tmp_path):
    return lambda steady: full_iops_plan_samples(shared_samples, tmp_path / f"samples-{steady}", steady=steady)


def test_three_of_the_plans_56_cells_are_not_compliant_and_not_listed_as_pts(
    client, submission, make_verified, shared_samples
):
    """The attack: a device bundle with the tracking cells only (3 of 56), 5 rounds, declaring itself compliant."""
    bundle = make_verified(mutate=_claimed_device(shared_samples))
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission)
    assert (run.compliant, run.derived_compliant) == (False, False)
    assert "iops: 3 of the plan's 56 cells ran" in run.compliance_reasons, run.compliance_reasons
    assert submission.flags.filter(kind="non_compliant", reason__contains="3 of the plan's 56 cells ran").exists()
    assert _published_pts_runs(client, submission) == []


def test_the_full_plan_without_steady_state_after_5_rounds_is_not_compliant(
    client, submission, make_verified, shared_samples, full_plan
):
    bundle = make_verified(samples=full_plan(False), mutate=_claimed_device(shared_samples))
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission)
    expected = (
        "iops: steady state not reached after 5 rounds (the PTS allows stopping only at steady state or after "
        f"{DEFAULT_MAX_ROUNDS})"
    )
    assert run.compliant is False and run.compliance_reasons == [expected]
    assert _published_pts_runs(client, submission) == []


def test_the_full_plan_at_steady_state_is_compliant_and_listed_as_pts(
    client, submission, make_verified, shared_samples, full_plan
):
    bundle = make_verified(samples=full_plan(True), mutate=_claimed_device(shared_samples))
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission)
    assert (run.compliant, run.derived_compliant, run.compliance_reasons) == (True, True, [])
    assert run.steady is True and run.steady_round == 5
    assert [row["test"] for row in _published_pts_runs(client, submission)] == ["iops"]


def test_a_missing_cell_in_one_round_is_not_compliant(submission, make_verified, shared_samples, full_plan):
    samples = [s for s in full_plan(True) if s.name != "wdpc_bs8KB_read50_round3.json"]
    bundle = make_verified(samples=samples, mutate=_claimed_device(shared_samples))
    ingest_submission(submission=submission, bundle=bundle)
    run = TestRun.objects.get(submission=submission)
    assert run.compliant is False
    assert "iops: 1 of its 5 rounds lack cells of the plan (round 3: 55 of 56 cells)" in run.compliance_reasons


def test_a_full_plan_without_its_preconditioning_is_not_compliant(submission, make_verified, shared_samples, full_plan):
    samples = [s for s in full_plan(True) if not s.name.startswith("wipc_")]
    ingest_submission(
        submission=submission, bundle=make_verified(samples=samples, mutate=_claimed_device(shared_samples))
    )
    run = TestRun.objects.get(submission=submission)
    assert run.compliant is False and "iops: its preconditioning (WIPC) did not run" in run.compliance_reasons


def test_a_plan_that_is_not_the_pts_plan_is_not_compliant(submission, make_verified, shared_samples):
    """The manifest's plan trimmed to the 3 cells that ran: every cell of that plan ran, but it is not the PTS plan."""

    def mutate(run_dir, manifest, files):
        _claimed_device(shared_samples)(run_dir, manifest, files)
        ran = {(run["block_size_bytes"], run["read_pct"]) for run in manifest["runs"]}
        series = manifest["plan"]["blocks"][0]["series"][0]
        series["cells"] = [c for c in series["cells"] if (c["block_size_bytes"], c["read_pct"]) in ran]

    ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    run = TestRun.objects.get(submission=submission)
    assert run.compliant is False
    assert any(
        r.startswith("the manifest's plan is not the PTS plan for the client edition") for r in run.compliance_reasons
    )


def test_the_clients_claim_only_lowers_compliance(submission, make_verified, shared_samples, full_plan):
    def mutate(run_dir, manifest, files):
        _claimed_device(shared_samples)(run_dir, manifest, files)
        manifest["compliance"]["compliant"] = False

    ingest_submission(submission=submission, bundle=make_verified(samples=full_plan(True), mutate=mutate))
    run = TestRun.objects.get(submission=submission)
    assert run.compliant is False and compliance.NOT_CLAIMED in run.compliance_reasons


def test_a_submission_held_by_the_smart_counters_is_not_compliant_until_approved(
    submission, make_verified, shared_samples, full_plan, django_user_model
):
    from submissions import services as submission_services

    def mutate(run_dir, manifest, files):
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples, smart_scale=0.5)

    outcome = ingest_submission(submission=submission, bundle=make_verified(samples=full_plan(True), mutate=mutate))
    assert outcome.status == "held", outcome.reasons
    assert any("moved by only" in r for r in outcome.reasons), outcome.reasons
    run = TestRun.objects.get(submission=submission)
    assert (run.compliant, run.derived_compliant) == (False, True)
    assert run.compliance_reasons[0].startswith("held: run iops-"), run.compliance_reasons

    submission.status = "held"
    submission.save()
    staff = django_user_model.objects.create_user(username="staff", password="x" * 12, is_staff=True)
    submission_services.submission_approve(submission=submission, by=staff)
    run.refresh_from_db()
    assert (run.compliant, run.compliance_reasons) == (True, [])

    submission_services.submission_reject(submission=submission, reason="a second look", by=staff)
    run.refresh_from_db()
    assert run.compliant is False and run.compliance_reasons == ["rejected: a second look"]


# --- the rules on records, without bundles -------------------------------------------------------------------------

CAPACITY = 1_000_204_886_016


def _record(tests, rounds_by_phase, *, steady=False, edition="enterprise", drop=()):
    """A client record of a PTS device run whose runs are every cell of the PTS plan of `tests` for the given number
    of rounds per series phase (the WIPC too), all read, with one steady-state window per series."""
    from analysis.identity import DriveIdentity
    from analysis.records import MeasurementRecord, SubmissionRecord, TestRunRecord, WindowRecord
    from nvmedb_client.plan import build_plan, plan_to_dict

    plan = build_plan(tests=tests, edition=edition, profile="pts", capacity_bytes=CAPACITY, target_kind="device")
    identity = DriveIdentity("V", None, "D", "M", CAPACITY, "F", "S")
    record = SubmissionRecord(source="client", identity=identity, profile="pts", edition=edition, compliant=True)
    record.target_kind, record.plan = "device", plan_to_dict(plan)
    runs = []
    by_test = {}
    for block in plan.blocks:
        test_run = by_test.setdefault(block.test, TestRunRecord(test=block.test))
        if block.wipc:
            runs.append({"id": block.wipc_run_id, "test": block.test, "phase": "wipc", "round": 1})
        for series in block.series:
            for number in range(1, rounds_by_phase[series.phase] + 1):
                for cell in series.cells:
                    run_id = series.run_id(number, cell)
                    if run_id in drop:
                        continue
                    runs.append(
                        {"id": run_id, "test": block.test, "phase": series.phase, "round": number,
                         "pattern": cell.pattern, "block_size_bytes": cell.block_size_bytes,
                         "read_pct": cell.read_pct, "threads": series.threads, "iodepth": series.iodepth}
                    )  # fmt: skip
            test_run.windows.append(
                WindowRecord(
                    "v", series.phase, "m", series.tp_block_size_bytes or 0, 0, steady, 5 if steady else None, None
                )
            )
    for run in runs:
        by_test[run["test"]].measurements.append(
            MeasurementRecord(run["id"], run["test"], run["phase"], "", run["round"], 0, 0, None, "", "")
        )
    record.test_runs = list(by_test.values())
    return record, runs, by_test


def _apply(record, runs):
    return compliance.apply(record, manifest={"compliance": {"compliant": True, "reasons": []}}, runs=runs)


def test_the_round_limit_without_steady_state_is_compliant_one_round_less_is_not():
    record, runs, by_test = _record(["lat"], {"wdpc": DEFAULT_MAX_ROUNDS})
    assert _apply(record, runs) == [] and record.compliant and by_test["lat"].compliance_reasons == []

    record, runs, by_test = _record(["lat"], {"wdpc": DEFAULT_MAX_ROUNDS - 1})
    _apply(record, runs)
    assert by_test["lat"].compliance_reasons == [
        "lat: steady state not reached after 24 rounds (the PTS allows stopping only at steady state or after 25)"
    ]


def test_each_test_is_judged_on_its_own_cells():
    """Throughput's two blocks each need both series; a latency test cut short leaves the throughput test compliant."""
    rounds = {"tp-write": 5, "tp-read": 5, "wdpc": 3}
    record, runs, by_test = _record(["tp", "lat"], rounds, steady=True, drop=("tp-read-r05-bs131072",))
    by_test["lat"].windows[0].steady, by_test["lat"].windows[0].steady_round = False, None
    _apply(record, runs)
    assert record.compliant is True
    assert by_test["lat"].compliance_reasons == [
        "lat: steady state not reached after 3 rounds (the PTS allows stopping only at steady state or after 25)"
    ]
    assert by_test["tp"].compliance_reasons == [
        "tp-bs131072 tp-read: 1 of its 5 rounds lack cells of the plan (round 5: 0 of 1 cells)"
    ]


def test_the_quick_profile_or_a_file_target_is_never_compliant():
    record, runs, _ = _record(["lat"], {"wdpc": 5}, steady=True)
    record.profile = "quick"
    assert _apply(record, runs) == ["the quick profile is not the PTS: only the pts profile runs its plan"]
    assert record.compliant is False

    record, runs, _ = _record(["lat"], {"wdpc": 5}, steady=True)
    record.target_kind = "file"
    _apply(record, runs)
    assert record.compliant is False and record.compliance_reasons == [
        "a file target is not a drive: the PTS measures a device"
    ]


def test_wsat_stops_only_after_4x_the_capacity_or_its_time_limit():
    record, runs, by_test = _record(["wsat"], {"wsat": 10})
    _apply(record, runs)
    (reason,) = by_test["wsat"].compliance_reasons
    assert reason.startswith("wsat: stopped after 10 samples and 0 bytes written (the PTS runs WSAT until 4x")

    record, runs, by_test = _record(["wsat"], {"wsat": 24 * 60})  # 24 hours of 60-second samples
    _apply(record, runs)
    assert by_test["wsat"].compliance_reasons == [] and record.compliant is True


def test_runs_stored_compliant_before_the_rule_are_lowered_from_their_stored_bundle(
    submission, make_verified, shared_samples, tmp_path
):
    """manage.py rederive_compliance: a 3-of-56-cells run stored compliant by the old rule, read again."""
    from django.core.files.base import ContentFile
    from django.core.files.storage import FileSystemStorage

    from analysis.management.commands.rederive_compliance import rederive

    bundle = make_verified(mutate=_claimed_device(shared_samples))
    ingest_submission(submission=submission, bundle=bundle)
    storage = FileSystemStorage(location=tmp_path / "storage")
    path = next((tmp_path).glob("b*/b.nvmedb.tar.gz"))
    submission.storage_name = storage.save("bundles/old.nvmedb.tar.gz", ContentFile(path.read_bytes()))
    submission.status = "published"
    submission.save()
    TestRun.objects.filter(submission=submission).update(compliant=True, derived_compliant=True, compliance_reasons=[])

    assert rederive(submission, storage=storage) == 1
    run = TestRun.objects.get(submission=submission)
    assert (run.compliant, run.derived_compliant) == (False, False)
    assert "iops: 3 of the plan's 56 cells ran" in run.compliance_reasons
    assert rederive(submission, storage=storage) == 0, "it only lowers, once"
    out = io.StringIO()
    call_command("rederive_compliance", stdout=out)  # nothing left to lower
    assert out.getvalue().strip() == "0 runs are no longer PTS-compliant; 0 bundles could not be read"


def test_a_hostile_run_entry_is_counted_as_no_cell():
    record, runs, by_test = _record(["lat"], {"wdpc": DEFAULT_MAX_ROUNDS})
    runs.append({"id": "x", "test": "lat", "phase": "wdpc", "round": 1, "pattern": "randrw", "block_size_bytes": [1]})
    by_test["lat"].measurements.append(
        by_test["lat"].measurements[0].__class__("x", "lat", "wdpc", "", 1, 0, 0, None, "", "")
    )
    assert _apply(record, runs) == [] and record.compliant is True
