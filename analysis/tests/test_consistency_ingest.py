"""Signed bundles of the real SSSPT fio outputs whose parts contradict each other: each class of contradiction is
held for review with the rule that caught it, never published and never compliant; the same bundle with its parts in
agreement publishes."""

import json
from pathlib import Path

import pytest

from analysis.ingest import ingest_submission
from analysis.models import TestRun
from analysis.tests.test_plausibility_ingest import _device

ID_NS_4KN = Path(__file__).resolve().parents[2] / "client" / "tests" / "fixtures" / "id-ns-4kn.json"
NAMESPACE_BYTES = 234423126 * 4096


def _id_ns(run_dir, files, *, lba_shift=12):
    doc = json.loads(ID_NS_4KN.read_text())
    doc["lbafs"][doc["flbas"]]["ds"] = lba_shift
    (run_dir / "system" / "nvme-id-ns.json").write_text(json.dumps(doc))
    files.append("system/nvme-id-ns.json")


def _on_a_device(shared_samples, *extra):
    """The run as a client writes it on a 960 GB namespace of 4096-byte LBAs, smart-logs around every run, then
    each of `extra` applied."""

    def mutate(run_dir, manifest, files):
        _device(run_dir, manifest, files, shared_samples)
        _id_ns(run_dir, files)
        for change in extra:
            change(run_dir, manifest, files)

    return mutate


def _ingest(submission, make_verified, mutate):
    return ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))


def _assert_held(submission, outcome, rule):
    assert outcome.status == "held", outcome.reasons
    assert any(reason.startswith(f"{rule}: ") for reason in outcome.reasons), outcome.reasons
    runs = TestRun.objects.filter(submission=submission)
    assert runs.exists() and not runs.filter(compliant=True).exists()
    assert all(any(r.startswith(f"{rule}: ") for r in run.compliance_reasons) for run in runs)
    assert submission.flags.filter(kind="crosscheck", reason__startswith=f"{rule}: ").exists()


@pytest.mark.django_db
def test_a_device_bundle_whose_parts_agree_is_published(submission, make_verified, shared_samples):
    outcome = _ingest(submission, make_verified, _on_a_device(shared_samples))
    assert outcome.status == "published", outcome.reasons
    assert not submission.flags.filter(kind="crosscheck").exists()
    assert TestRun.objects.get(submission=submission).namespace_size_bytes == NAMESPACE_BYTES  # id-ns was read


@pytest.mark.django_db
def test_a_bundle_without_a_plan_is_held(submission, make_verified):
    outcome = _ingest(submission, make_verified, lambda run_dir, manifest, files: manifest.update(plan={}))
    _assert_held(submission, outcome, "plan_missing")


@pytest.mark.django_db
def test_a_plan_made_for_another_profile_is_held(submission, make_verified):
    outcome = _ingest(submission, make_verified, lambda run_dir, manifest, files: manifest.update(profile="pts"))
    _assert_held(submission, outcome, "plan_agrees")


@pytest.mark.django_db
def test_a_device_target_whose_reasons_say_file_target_is_held(submission, make_verified, shared_samples):
    def file_reason(run_dir, manifest, files):
        manifest["compliance"]["reasons"].append("file target: a file on a filesystem is measured, not a drive")

    outcome = _ingest(submission, make_verified, _on_a_device(shared_samples, file_reason))
    _assert_held(submission, outcome, "target_kind")


@pytest.mark.django_db
def test_an_active_range_larger_than_the_namespace_is_held(submission, make_verified, shared_samples):
    def oversized(run_dir, manifest, files):
        manifest["target"].update(size_bytes=2 * NAMESPACE_BYTES, active_range_bytes=2 * NAMESPACE_BYTES)

    outcome = _ingest(submission, make_verified, _on_a_device(shared_samples, oversized))
    _assert_held(submission, outcome, "namespace_size")


@pytest.mark.django_db
def test_blocks_smaller_than_the_namespaces_lba_with_direct_io_are_held(submission, make_verified, shared_samples):
    def eight_k_lbas(run_dir, manifest, files):  # the SSSPT 4 KiB rounds ran with direct=1
        _id_ns(run_dir, files[:], lba_shift=13)

    outcome = _ingest(submission, make_verified, _on_a_device(shared_samples, eight_k_lbas))
    _assert_held(submission, outcome, "lba_block_size")
    assert any("a 4096-byte block with direct I/O on a namespace of 8192-byte LBAs" in r for r in outcome.reasons)


@pytest.mark.django_db
def test_a_bundle_created_before_its_runs_finished_is_held(submission, make_verified):
    def early(run_dir, manifest, files):
        manifest["created_at"] = manifest["timing"]["started_at"]

    outcome = _ingest(submission, make_verified, early)
    _assert_held(submission, outcome, "timestamps_present")


@pytest.mark.django_db
def test_a_smart_log_without_data_units_on_a_device_is_held(submission, make_verified, shared_samples):
    def no_units(run_dir, manifest, files):
        path = run_dir / manifest["runs"][2]["smart_after"]
        smart = json.loads(path.read_text())
        del smart["data_units_written"]
        path.write_text(json.dumps(smart))

    outcome = _ingest(submission, make_verified, _on_a_device(shared_samples, no_units))
    _assert_held(submission, outcome, "smart_counters_present")
