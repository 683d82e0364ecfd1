"""A device run end to end with real fio on a file that stands in for the namespace; only nvme-cli (which needs a
drive and root) answers from captured outputs, through the one subprocess boundary. The fake drive keeps its write
cache state the way a controller does: set-feature changes it, and a controller reset puts back its default."""

import json
import tempfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nvmedb_client import runner
from nvmedb_client.bundle import verify_bundle
from nvmedb_client.system import commands

ID_CTRL_SAMPLE = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
SMART_SAMPLE = "nvme-cli/netdata__netdata__src__go__plugin__go.d__collector__nvme__testdata__v2.11__nvme-smart-log.json"
MIB = 1024**2


class CachingDrive:
    """nvme-cli on a drive with a volatile write cache that is enabled by default; `reset_at_smart_log` makes the
    controller reset (cache back to enabled) at that smart-log read, `format_resets` at every Format."""

    def __init__(self, shared_samples, size_bytes, *, reset_at_smart_log=None, format_resets=False, fna=4):
        doc = json.loads((shared_samples / ID_CTRL_SAMPLE).read_text())
        doc["vwc"] = 1
        doc["fna"] = fna
        self.id_ctrl = json.dumps(doc)
        lba = 4096
        self.id_ns = json.dumps(
            {"nsze": size_bytes // lba, "ncap": size_bytes // lba, "nuse": 0, "flbas": 1, "dps": 0, "nlbaf": 1,
             "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 0}]}
        )  # fmt: skip
        self.smart = (shared_samples / SMART_SAMPLE).read_text()
        self.cache = 1
        self.smart_reads = 0
        self.reset_at_smart_log = reset_at_smart_log
        self.format_resets = format_resets
        self.calls = []

    def __call__(self, args, *, timeout=None, check=False):
        args = [str(a) for a in args]
        self.calls.append(args)
        if args[0] == "blkdiscard":
            return commands.CommandResult(tuple(args), 0, "", "", 0.01)
        if args[0] != "nvme":
            return commands.CommandResult(
                tuple(args), None, "", "", 0.0, error=f"{args[0]} is not installed", tool_absent=True
            )
        out, code = "", 0
        sub = args[1]
        if sub == "id-ctrl":
            out = self.id_ctrl
        elif sub == "id-ns":
            out = self.id_ns
        elif sub == "version":
            out = "nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)\n"
        elif sub == "format":
            if self.format_resets:
                self.cache = 1
        elif sub == "get-feature":
            out = f"get-feature:0x06 (Volatile Write Cache), Current value:{self.cache:#010x}\n"
        elif sub == "set-feature":
            self.cache = int(args[-1].split("=")[1])
        elif sub == "smart-log":
            self.smart_reads += 1
            if self.smart_reads == self.reset_at_smart_log:
                self.cache = 1
            out = self.smart
        else:
            code = 1
        return commands.CommandResult(tuple(args), code, out, "" if code == 0 else "not simulated", 0.01)


def device_run(tmp_path, monkeypatch, drive, tests):
    monkeypatch.setattr(commands, "run_command", drive)
    target = tmp_path / "namespace.img"
    with open(target, "wb") as handle:
        handle.truncate(64 * MIB)
    config = runner.RunConfig(
        target_kind="device", target_path=str(target), size_bytes=64 * MIB, tests=tests, edition="enterprise",
        profile="quick", cell_runtime_s=0.3, max_rounds=2,
    )  # fmt: skip
    run_dir = runner.create_run_dir(config=config, out_dir=tmp_path / "out")
    bundle = runner.execute_run(run_dir=run_dir, out_dir=tmp_path / "out", signing_key=Ed25519PrivateKey.generate())
    verified = verify_bundle(bundle, extract_to=Path(tempfile.mkdtemp(dir=tmp_path)))
    return verified, json.loads(verified.read_bytes("run.json"))


@pytest.fixture
def size():
    return 64 * MIB


def test_the_cache_is_read_back_after_purge_and_at_each_tests_start_and_end(
    shared_samples, tmp_path, monkeypatch, size
):
    drive = CachingDrive(shared_samples, size, format_resets=True)
    verified, facts = device_run(tmp_path, monkeypatch, drive, ["tp", "lat"])
    checks = facts["write_cache_checks"]
    blocks = [b["label"] for b in verified.manifest["plan"]["blocks"]]
    for label in blocks:
        whens = [c["when"] for c in checks if c["block"] == label]
        # the Format reset the controller: the cache came back enabled, was set again before any I/O of the test
        assert whens == ["after purge", "after purge, set again", "test start", "test end"], label
        assert [c["enabled"] for c in checks if c["block"] == label] == [True, False, False, False]
    assert facts["write_cache"]["original"] == 1 and facts["write_cache"]["observed"] == 0
    assert "tests" not in verified.manifest["compliance"]
    assert verified.manifest["write_cache_checks"] == checks


def test_a_cache_that_drifts_during_a_test_makes_that_test_non_compliant(shared_samples, tmp_path, monkeypatch, size):
    drive = CachingDrive(shared_samples, size, reset_at_smart_log=3)  # during the first test's WIPC and rounds
    verified, facts = device_run(tmp_path, monkeypatch, drive, ["tp", "lat"])
    compliance = verified.manifest["compliance"]
    first = verified.manifest["plan"]["blocks"][0]["label"]
    assert list(compliance["tests"]) == [first]
    reason = compliance["tests"][first][0]
    assert (
        reason
        == "write cache at test end: the drive reports its write cache enabled where the edition asks for it disabled"
    )
    assert f"{first}: {reason}" in compliance["reasons"]
    # the next test found it still enabled after its purge, set it again before its I/O and stayed compliant
    following = verified.manifest["plan"]["blocks"][1]["label"]
    second = [(c["when"], c["enabled"]) for c in facts["write_cache_checks"] if c["block"] == following]
    assert second == [
        ("after purge", True),
        ("after purge, set again", False),
        ("test start", False),
        ("test end", False),
    ]


def test_a_format_that_would_erase_the_whole_controller_is_not_used_without_confirmation(
    shared_samples, tmp_path, monkeypatch, size
):
    drive = CachingDrive(shared_samples, size, fna=5)  # FNA bit 0: a Format erases every namespace of the controller
    verified, facts = device_run(tmp_path, monkeypatch, drive, ["lat"])
    assert not any(call[:2] == ["nvme", "format"] for call in drive.calls)
    (purge,) = facts["purges"]
    assert purge["method"].startswith("blkdiscard") and purge["scope"] == "namespace"
    assert purge["per_namespace_fallback"] is True
    assert "nvme format --ses=2" in purge["skipped_attempts"][0]
    reasons = verified.manifest["compliance"]["reasons"]
    assert any(r.startswith("purged with blkdiscard") and "not confirmed" in r for r in reasons)
