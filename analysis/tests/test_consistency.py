"""Each consistency rule passes a bundle whose parts agree and holds, naming the rule, one where two parts contradict
each other; the manifests are the factory's, built from the real SSSPT fio outputs."""

import copy
import inspect
import json
from pathlib import Path

import pytest

from analysis import consistency
from analysis.crosscheck import CLOCK_SLACK_S, job_options
from analysis.identity import DriveIdentity
from analysis.plausibility import HOLD
from analysis.records import MeasurementRecord, SubmissionRecord, TestRunRecord
from analysis.tests import bundles
from nvmedb_client.fio_output import parse_fio_output
from nvmedb_client.plan import build_plan, plan_to_dict
from nvmedb_client.system import nvme

FIXTURES = Path(__file__).resolve().parents[2] / "client" / "tests" / "fixtures"
ID_NS_4KN = FIXTURES / "id-ns-4kn.json"  # 960 GB namespace, 4096-byte LBAs
NAMESPACE_BYTES = 234423126 * 4096
SMART = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"
FILE_REASON = "file target: a file on a filesystem is measured, not a drive"


@pytest.fixture(scope="module")
def sample(tmp_path_factory, shared_samples):
    """The factory's manifest of 15 real SSSPT IOPS rounds, each run's fio options and fio documents."""
    work = tmp_path_factory.mktemp("consistency")
    run_dir, manifest, _ = bundles.consistent_run_dir(work, shared_samples)
    documents = {run["id"]: parse_fio_output((run_dir / run["output_file"]).read_bytes()) for run in manifest["runs"]}
    options = {run_id: job_options(doc) for run_id, doc in documents.items()}
    return manifest, options, documents


@pytest.fixture
def manifest(sample):
    return copy.deepcopy(sample[0])


@pytest.fixture(scope="module")
def id_ns():
    return nvme.parse_id_ns(ID_NS_4KN.read_bytes())


def _record(manifest, **fields) -> SubmissionRecord:
    identity = DriveIdentity("Acme", None, "Acme 1", "A1", 10**12, "FW", "SN")
    target = manifest["target"]
    values = {
        "target_kind": target["kind"],
        "target_size_bytes": target["size_bytes"],
        "active_range_bytes": target["active_range_bytes"],
    }
    return SubmissionRecord(source="client", identity=identity, **(values | fields))


def _rules(failures):
    assert all(f.severity == HOLD for f in failures)
    return consistency.rule_names(failures)


def _as_device(manifest, *, size=NAMESPACE_BYTES, active=NAMESPACE_BYTES):
    manifest["target"].update(kind="device", size_bytes=size, active_range_bytes=active)
    manifest["compliance"]["reasons"].remove(FILE_REASON)
    return manifest


# --- plan_missing -----------------------------------------------------------------------------------------------


def test_the_factory_bundle_is_consistent_by_every_rule(sample, manifest):
    _, options, documents = sample
    stamps = {k: d["timestamp"] for k, d in documents.items()}
    failures = consistency.bundle_failures(
        _record(manifest), manifest=manifest, id_ns=None, options=options, fio_timestamps=stamps
    )
    assert failures == []


@pytest.mark.parametrize("plan", [{}, None, {"tests": ["iops"]}, {"blocks": []}, {"blocks": [{"label": "x"}]}])
def test_a_bundle_without_a_usable_plan_is_held(manifest, plan):
    manifest["plan"] = plan
    failures = consistency.check_plan_present(manifest)
    assert _rules(failures) == {"plan_missing"} and "cannot be checked" in failures[0].reason


def test_a_plan_with_one_test_block_is_usable(manifest):
    manifest["plan"]["blocks"] = manifest["plan"]["blocks"][:1]
    assert consistency.check_plan_present(manifest) == []


# --- plan_agrees ------------------------------------------------------------------------------------------------


@pytest.fixture
def client_manifest(manifest):
    """The manifest header of a quick client run on a file, with the plan the client's planner made for it."""
    plan = plan_to_dict(
        build_plan(tests=["iops"], edition="enterprise", profile="quick", capacity_bytes=2**30, target_kind="file")
    )
    manifest["plan"] = plan
    manifest["target"].update(size_bytes=plan["capacity_bytes"], active_range_bytes=plan["active_range_bytes"])
    manifest["compliance"]["reasons"] = list(plan["compliance"]["reasons"])
    return manifest


def test_a_plan_made_for_the_bundle_agrees(client_manifest):
    assert consistency.check_plan_agrees(client_manifest) == []


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda m: m["target"].update(kind="device"), "target kind is 'file', the manifest's 'device'"),
        (lambda m: m["target"].update(size_bytes=m["target"]["size_bytes"] + 1), "capacity"),
        (lambda m: m["target"].update(active_range_bytes=m["target"]["active_range_bytes"] - 4096), "active range"),
        (lambda m: m.update(profile="pts"), "profile is 'quick', the manifest's 'pts'"),
        (lambda m: m.update(edition="client"), "edition"),
        (lambda m: m["compliance"]["reasons"].pop(0), "non-compliance reason"),
    ],
)
def test_a_plan_that_contradicts_the_manifest_is_held(client_manifest, change, words):
    change(client_manifest)
    failures = consistency.check_plan_agrees(client_manifest)
    assert _rules(failures) == {"plan_agrees"} and words in failures[0].reason


# --- target_kind ------------------------------------------------------------------------------------------------


def test_a_file_target_that_says_so_and_a_device_that_does_not_agree(manifest):
    assert consistency.check_target_kind(manifest, _record(manifest)) == []
    _as_device(manifest)
    assert consistency.check_target_kind(manifest, _record(manifest, purge_method="format-ses1")) == []


def test_a_device_target_whose_reasons_say_file_target_is_held(manifest):
    manifest["target"]["kind"] = "device"
    failures = consistency.check_target_kind(manifest, _record(manifest))
    assert _rules(failures) == {"target_kind"} and "a device target whose compliance reasons say" in failures[0].reason


def test_a_device_target_with_a_file_reason_for_one_test_is_held(manifest):
    _as_device(manifest)
    manifest["compliance"]["tests"] = {"iops": ["file target: never purged"]}
    assert _rules(consistency.check_target_kind(manifest, _record(manifest))) == {"target_kind"}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda m, r: m["compliance"]["reasons"].remove(FILE_REASON), "do not say it is a file target"),
        (lambda m, r: m["compliance"]["reasons"].append("purged with blkdiscard (a deallocate)"), "blkdiscard"),
        (lambda m, r: m["compliance"]["reasons"].append("iops: write cache at test start: off"), "write cache"),
        (lambda m, r: setattr(r, "purge_method", "format-ses1"), "run.json says was purged (format-ses1)"),
    ],
)
def test_a_file_target_with_what_only_a_drive_has_is_held(manifest, change, words):
    record = _record(manifest)
    change(manifest, record)
    failures = consistency.check_target_kind(manifest, record)
    assert _rules(failures) == {"target_kind"} and words in failures[0].reason


# --- namespace_size ---------------------------------------------------------------------------------------------


def test_a_device_target_as_large_as_its_namespace_fits(manifest, id_ns):
    assert id_ns["size_bytes"] == NAMESPACE_BYTES
    assert consistency.check_namespace_size(_record(_as_device(manifest)), id_ns) == []


@pytest.mark.parametrize(
    ("size", "active", "what"),
    [(NAMESPACE_BYTES + 1, NAMESPACE_BYTES, "target"), (None, NAMESPACE_BYTES + 1, "active")],
)
def test_a_device_target_larger_than_its_namespace_is_held(manifest, id_ns, size, active, what):
    record = _record(_as_device(manifest, active=active), target_size_bytes=size)
    failures = consistency.check_namespace_size(record, id_ns)
    assert _rules(failures) == {"namespace_size"} and f"the {what}" in failures[0].reason
    assert str(NAMESPACE_BYTES) in failures[0].reason


def test_a_file_target_is_not_held_to_a_namespace(manifest, id_ns):
    record = _record(manifest, active_range_bytes=NAMESPACE_BYTES * 2, target_size_bytes=NAMESPACE_BYTES * 2)
    assert consistency.check_namespace_size(record, id_ns) == []
    assert consistency.check_namespace_size(_record(_as_device(manifest)), None) == []


# --- lba_block_size ---------------------------------------------------------------------------------------------


def test_blocks_of_whole_lbas_with_direct_io_agree(sample, manifest, id_ns):
    _as_device(manifest)
    assert {run["block_size_bytes"] for run in manifest["runs"]} == {4096, 65536, 1048576}
    assert all(options["direct"] == "1" for options in sample[1].values())  # SSSPT ran with direct=1
    assert consistency.check_lba_block_size(manifest, _record(manifest), id_ns, sample[1]) == []


def test_a_block_smaller_than_the_lba_with_direct_io_is_held(sample, manifest, id_ns):
    _as_device(manifest)
    run = next(r for r in manifest["runs"] if r["block_size_bytes"] == 4096)
    run["block_size_bytes"] = 512
    failures = consistency.check_lba_block_size(manifest, _record(manifest), id_ns, sample[1])
    assert _rules(failures) == {"lba_block_size"}
    assert failures[0].reason == (
        f"run {run['id']}: a 512-byte block with direct I/O on a namespace of 4096-byte LBAs cannot run"
    )
    buffered = {k: v | {"direct": "0"} for k, v in sample[1].items()}  # through the page cache it can
    assert consistency.check_lba_block_size(manifest, _record(manifest), id_ns, buffered) == []


def test_a_plan_made_for_another_lba_size_is_held(sample, manifest, id_ns):
    _as_device(manifest)
    manifest["plan"]["lba_size_bytes"] = 4096
    assert consistency.check_lba_block_size(manifest, _record(manifest), id_ns, sample[1]) == []
    manifest["plan"]["lba_size_bytes"] = 512
    failures = consistency.check_lba_block_size(manifest, _record(manifest), id_ns, sample[1])
    assert _rules(failures) == {"lba_block_size"} and "512-byte LBAs, id-ns says 4096" in failures[0].reason


# --- timestamps_present -----------------------------------------------------------------------------------------


def _stamps(sample):
    return {k: d["timestamp"] for k, d in sample[2].items()}


def test_a_bundle_created_within_the_clock_slack_of_its_last_run_agrees(sample, manifest):
    from datetime import datetime, timedelta

    finished = datetime.fromisoformat(manifest["timing"]["finished_at"].replace("Z", "+00:00"))
    manifest["created_at"] = (finished - timedelta(seconds=CLOCK_SLACK_S)).isoformat()
    assert consistency.check_timestamps_present(manifest, _stamps(sample)) == []
    manifest["created_at"] = (finished - timedelta(seconds=CLOCK_SLACK_S + 1)).isoformat()
    failures = consistency.check_timestamps_present(manifest, _stamps(sample))
    assert _rules(failures) == {"timestamps_present"} and "created" in failures[0].reason


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda m, s: m["runs"][3].pop("finished_at"), "finished_at is None"),
        (lambda m, s: m["runs"][3].update(started_at="2018-08-16T10:00:00"), "not a time with a time zone"),
        (lambda m, s: m["timing"].pop("started_at"), "timing.started_at"),
        (lambda m, s: s.update({m["runs"][3]["id"]: None}), "no timestamp (whole epoch seconds"),
        (lambda m, s: s.update({m["runs"][3]["id"]: 1534415220.5}), "but 1534415220.5"),
    ],
)
def test_a_run_whose_time_cannot_be_checked_is_held(sample, manifest, change, words):
    stamps = _stamps(sample)
    change(manifest, stamps)
    failures = consistency.check_timestamps_present(manifest, stamps)
    assert _rules(failures) == {"timestamps_present"} and words in failures[0].reason


# --- smart_counters_present -------------------------------------------------------------------------------------


def _measured(shared_samples, **changes):
    smart = nvme.parse_smart_log((shared_samples / SMART).read_bytes())
    m = MeasurementRecord("r1", "iops", "wdpc", "", 1, 4096, 65, None, "fio/r1.json", "$.jobs[*]")
    m.smart_before, m.smart_after = dict(smart), dict(smart) | changes
    return m


def test_smart_logs_with_their_data_units_agree(manifest, shared_samples):
    record = _record(_as_device(manifest))
    record.test_runs = [TestRunRecord(test="iops", measurements=[_measured(shared_samples)])]
    assert consistency.check_smart_counters_present(record) == []


def test_a_smart_log_without_its_data_units_is_held_on_a_device_only(manifest, shared_samples):
    record = _record(manifest)
    record.test_runs = [TestRunRecord(test="iops", measurements=[_measured(shared_samples, data_units_written=None)])]
    assert consistency.check_smart_counters_present(record) == []
    record.target_kind = "device"
    failures = consistency.check_smart_counters_present(record)
    assert _rules(failures) == {"smart_counters_present"}
    assert failures[0].reason == "run r1: its smart-log after has no data_units_written to compare with fio's bytes"


# --- reporting --------------------------------------------------------------------------------------------------


def test_a_contradiction_holds_the_record_with_its_rule_and_makes_it_not_compliant(sample, manifest):
    manifest["plan"] = {}
    record = _record(manifest, compliant=True)
    failures = consistency.apply(record, manifest=manifest, id_ns=None, options=sample[1], documents=sample[2])
    assert consistency.rule_names(failures) == {"plan_missing"}
    assert record.hold_reasons == [f"plan_missing: {failures[0].reason}"] and not record.reject_reasons
    assert [f.kind for f in record.flags] == ["crosscheck"]
    assert record.compliant is False and record.compliance_reasons == record.hold_reasons


def test_every_rule_is_listed_for_the_methodology_page(client, db):
    checks = [name for name, _ in inspect.getmembers(consistency, inspect.isfunction) if name.startswith("check_")]
    assert len(consistency.RULES) == len(checks)
    html = client.get("/methodology/").content.decode()
    for rule in consistency.RULES:
        assert f"<code>{rule}</code>" in html


def test_the_methodology_explains_every_rule():
    document = Path(__file__).resolve().parents[2] / "docs" / "methodology.md"
    text = document.read_text(encoding="utf-8")
    for rule in consistency.RULES:
        assert f"`{rule}`" in text, rule


def test_id_ns_fixture_is_what_the_tests_say():
    doc = json.loads(ID_NS_4KN.read_text())
    assert doc["nsze"] * 2 ** doc["lbafs"][doc["flbas"]]["ds"] == NAMESPACE_BYTES


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.update(runs=5),
        lambda m: m.update(runs=[1, "x", None]),
        lambda m: m.update(plan=[1, 2]),
        lambda m: m.update(compliance={"reasons": 7, "tests": {"iops": "x"}}),
        lambda m: m.update(target=[], timing=None, created_at=10**400),
        lambda m: m["plan"].update(profile=[], edition={"name": {}}, compliance={"reasons": [None, 3]}),
    ],
)
def test_a_manifest_of_unexpected_shapes_is_judged_without_an_error(sample, manifest, id_ns, change):
    change(manifest)
    record = _record(sample[0], target_kind="device")
    failures = consistency.bundle_failures(
        record, manifest=manifest, id_ns=id_ns, options=sample[1], fio_timestamps=_stamps(sample)
    )
    assert all(f.severity == HOLD and f.rule in consistency.RULES for f in failures)
