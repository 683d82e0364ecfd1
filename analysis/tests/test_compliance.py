"""Compliance means the plan ran (issue 21, item 5): a device bundle that declares itself PTS-compliant is stored
compliant only when the server finds every cell of the PTS plan in every round, and steady state or the round limit;
a held submission's runs are never compliant, and staff approval gives them back the server's verdict.

Built from the real SSSPT IOPS run in the shared samples (56 cells, rounds 1-5 of each; 2 threads × QD 16, as the
client edition plans them). Its 64 KiB 65/35 tracking cell is not steady over rounds 1-5 (it steadies over 3-7), so
the full plan as recorded is the "5 rounds without steady state" case, and the steady fixture takes that cell's
rounds 3-7 as rounds 1-5.
"""

import pytest

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
