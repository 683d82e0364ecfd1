"""Purge on every nvme-cli in use: sanitize-log and version outputs of nvme-cli 1.9, 1.16, 2.3 and 2.11 (written
from their source into fixtures/nvme-cli, see its README), Format arguments, and the purge sequence driven by those
outputs through the one subprocess boundary."""

import json
from pathlib import Path

import pytest

from nvmedb_client import device
from nvmedb_client.run_state import RunError
from nvmedb_client.system import commands, nvme

FIXTURES = Path(__file__).parent / "fixtures" / "nvme-cli"
ID_CTRL_SAMPLE = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
PI_NS = FIXTURES / "id-ns-2.3-pi-type1-extended-metadata.json"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.fixture
def id_ctrl(shared_samples):
    return nvme.parse_id_ctrl((shared_samples / ID_CTRL_SAMPLE).read_text())


@pytest.fixture
def id_ns():
    return nvme.parse_id_ns(PI_NS.read_text())


@pytest.mark.parametrize(
    ("name", "status", "state"),
    [
        ("sanitize-log-1.9-in-progress.json", 2, "in_progress"),
        ("sanitize-log-1.16-succeeded.json", 1, "succeeded"),
        ("sanitize-log-2.3-failed.json", 3, "failed"),
        ("sanitize-log-2.11-never.json", 0, "never"),
        ("sanitize-log-2.11-no-dealloc-succeeded.json", 4, "succeeded"),
    ],
)
def test_every_nvme_cli_sanitize_log_is_read_from_its_status_text(name, status, state):
    parsed = nvme.parse_sanitize_log(fixture(name))
    assert (parsed["status"], parsed["state"]) == (status, state)
    assert parsed["status_text"].startswith(f"({status}) ")


def test_a_sanitize_in_progress_reports_its_progress():
    assert nvme.parse_sanitize_log(fixture("sanitize-log-1.9-in-progress.json"))["progress"] == pytest.approx(
        1 / 3, 1e-3
    )


def test_a_raw_integer_sstat_is_read_too():
    assert nvme.parse_sanitize_log({"sprog": 65535, "sstat": 0x102})["state"] == "in_progress"
    assert nvme.parse_sanitize_log({"nvme0": {"sprog": 65535, "sstat": {"status": 1}}})["state"] == "succeeded"


def test_a_sanitize_log_without_sstat_is_an_error():
    with pytest.raises(nvme.NvmeParseError, match="sstat"):
        nvme.parse_sanitize_log('{"nvme0n1": {"sprog": 65535}}')


@pytest.mark.parametrize(
    ("name", "cli", "libnvme", "force"),
    [
        ("version-1.9.txt", "1.9", None, False),
        ("version-1.16.txt", "1.16", None, True),
        ("version-2.3.txt", "2.3", "1.3", True),
        ("version-2.11.txt", "2.11", "1.11", True),
    ],
)
def test_format_gets_force_only_from_nvme_cli_1_10_on(name, cli, libnvme, force, id_ctrl, id_ns):
    version = nvme.parse_version(fixture(name))
    assert version == {"nvme-cli": cli, "libnvme": libnvme}
    argv = device.purge_attempts("/dev/nvme0n1", id_ctrl, id_ns, nvme_version=version["nvme-cli"])[0].argv
    assert argv[1] == "format"
    assert ("--force" in argv) is force


def test_version_numbers_compare_as_numbers():
    assert nvme.version_tuple("1.16") > nvme.version_tuple("1.9")
    assert nvme.version_tuple("2.3-rc1") == (2, 3)
    assert nvme.version_tuple("unknown") is None


def test_format_keeps_the_lba_format_its_metadata_and_protection_information(id_ctrl, id_ns):
    assert (id_ns["lba_format_index"], id_ns["pi_type"], id_ns["pi_first"], id_ns["metadata_extended"]) == (
        3,
        1,
        False,
        True,
    )
    method = device.purge_attempts("/dev/nvme0n1", id_ctrl, id_ns, nvme_version="2.3")[0]
    assert method.argv[:6] == ["nvme", "format", "/dev/nvme0n1", "--ses=2", "--lbaf=3", "--pi=1"]
    assert "--pil=0" in method.argv and "--ms=1" in method.argv


def test_format_waits_long_enough_for_a_user_data_erase_of_a_large_drive(id_ctrl, id_ns):
    method = device.purge_attempts("/dev/nvme0n1", id_ctrl, id_ns, nvme_version="2.3")[0]
    size = id_ns["size_bytes"]
    assert size == 937684566 * 4096
    timeout_ms = int(next(arg for arg in method.argv if arg.startswith("--timeout=")).split("=")[1])
    assert timeout_ms == size // device.FORMAT_ERASE_BYTES_PER_S * 1000  # about 21 hours, not nvme-cli's 10 minutes
    assert method.timeout_s > timeout_ms / 1000  # the process is not killed before nvme-cli gives up


def test_a_namespace_whose_protection_settings_are_unknown_is_never_formatted(id_ctrl, id_ns):
    for key in ("lba_format_index", "pi_type", "metadata_extended"):
        methods = device.purge_attempts("/dev/nvme0n1", id_ctrl, {**id_ns, key: None}, nvme_version="2.3")
        assert all(m.kind != "format" for m in methods), key


def test_what_each_method_erases_follows_fna_and_sanitize(id_ctrl, id_ns):
    assert id_ctrl["format_applies_to_all_namespaces"] is False  # the sample: FNA 0x4
    methods = device.purge_attempts("/dev/nvme0n1", id_ctrl, id_ns, nvme_version="2.3")
    assert [(m.kind, m.scope) for m in methods] == [("format", "namespace"), ("blkdiscard", "namespace")]
    wide = {**id_ctrl, "format_applies_to_all_namespaces": True, "sanitize_block_erase_supported": True}
    methods = device.purge_attempts("/dev/nvme0n1", wide, id_ns, nvme_version="2.3")
    assert [(m.kind, m.scope) for m in methods] == [
        ("format", "controller"),
        ("sanitize", "subsystem"),
        ("blkdiscard", "namespace"),
    ]
    assert methods[1].argv[-1] == "--sanact=2"


class Drive:
    """Answers nvme-cli commands with fixture outputs; `sanitize_logs` are returned in turn, the last one repeats."""

    def __init__(self, shared_samples, *, id_ctrl_changes=None, sanitize_logs=(), sanitize_ok=True, format_ok=True):
        doc = json.loads((shared_samples / ID_CTRL_SAMPLE).read_text())
        doc.update(id_ctrl_changes or {})
        self.id_ctrl = json.dumps(doc)
        self.sanitize_logs = list(sanitize_logs)
        self.sanitize_ok = sanitize_ok
        self.format_ok = format_ok
        self.calls: list[list[str]] = []

    def __call__(self, args, *, timeout=None, check=False):
        args = list(args)
        self.calls.append(args)
        out, code = "", 0
        if args[:2] == ["nvme", "id-ctrl"]:
            out = self.id_ctrl
        elif args[:2] == ["nvme", "id-ns"]:
            out = PI_NS.read_text()
        elif args[:2] == ["nvme", "version"]:
            out = fixture("version-1.9.txt")
        elif args[:2] == ["nvme", "sanitize-log"]:
            out = fixture(self.sanitize_logs.pop(0) if len(self.sanitize_logs) > 1 else self.sanitize_logs[0])
        elif args[:2] == ["nvme", "sanitize"]:
            code = 0 if self.sanitize_ok else 1
        elif args[:2] == ["nvme", "format"]:
            code = 0 if self.format_ok else 1
        return commands.CommandResult(tuple(args), code, out, "" if code == 0 else "NVMe status: error", 0.01)

    def programs(self):
        return [call[1] if call[0] == "nvme" else call[0] for call in self.calls]


@pytest.fixture
def no_sleep(monkeypatch):
    monkeypatch.setattr(device.time, "sleep", lambda seconds: None)


def purge(monkeypatch, drive, **kwargs):
    monkeypatch.setattr(commands, "run_command", drive)
    return device.purge("/dev/nvme0n1", label="iops", interrupted=lambda: None, **kwargs)


WIDE = {"fna": 5, "sanicap": 2}  # FNA bit 0: a Format erases the whole controller; SANICAP: block erase


def test_on_nvme_cli_1_9_the_format_has_no_force_and_keeps_the_protection_settings(shared_samples, monkeypatch):
    drive = Drive(shared_samples, sanitize_logs=["sanitize-log-2.11-never.json"])
    record = purge(monkeypatch, drive)
    formats = [call for call in drive.calls if call[:2] == ["nvme", "format"]]
    assert len(formats) == 1 and "--force" not in formats[0] and "--pi=1" in formats[0]
    assert record["scope"] == "namespace" and record["erased_namespaces"] == ["nvme0n1"]
    assert record["nvme_cli_version"] == "1.9"


def test_a_sanitize_is_polled_until_it_finishes(shared_samples, monkeypatch, no_sleep):
    drive = Drive(
        shared_samples,
        id_ctrl_changes=WIDE,
        format_ok=False,
        sanitize_logs=["sanitize-log-2.11-never.json"]
        + ["sanitize-log-1.9-in-progress.json"] * 3
        + ["sanitize-log-1.16-succeeded.json"],
    )
    record = purge(monkeypatch, drive, check_scope=lambda scope: (["nvme0n1"], None))
    assert record["method"].startswith("nvme sanitize --sanact=2")
    assert record["scope"] == "subsystem"
    after = drive.programs()[drive.programs().index("sanitize") :]
    assert after == ["sanitize"] + ["sanitize-log"] * 4
    assert "blkdiscard" not in drive.programs()


def test_a_failed_sanitize_is_a_failure_not_a_success(shared_samples, monkeypatch, no_sleep):
    drive = Drive(
        shared_samples,
        id_ctrl_changes=WIDE,
        format_ok=False,
        sanitize_logs=[
            "sanitize-log-2.11-never.json",
            "sanitize-log-1.9-in-progress.json",
            "sanitize-log-2.3-failed.json",
        ],
    )
    record = purge(monkeypatch, drive, check_scope=lambda scope: (["nvme0n1"], None))
    assert record["method"].startswith("blkdiscard")
    assert any("Most Recent Sanitize Command Failed" in failure for failure in record["failed_attempts"])


def test_no_fallback_starts_while_a_sanitize_runs_even_when_its_command_reported_an_error(
    shared_samples, monkeypatch, no_sleep
):
    drive = Drive(
        shared_samples,
        id_ctrl_changes=WIDE,
        format_ok=False,
        sanitize_ok=False,  # e.g. nvme-cli timed out waiting for the command while the drive started it
        sanitize_logs=["sanitize-log-2.11-never.json"]
        + ["sanitize-log-1.9-in-progress.json"] * 2
        + ["sanitize-log-2.11-no-dealloc-succeeded.json"],
    )
    record = purge(monkeypatch, drive, check_scope=lambda scope: (["nvme0n1"], None))
    assert record["method"].startswith("nvme sanitize")
    assert "blkdiscard" not in drive.programs()


def test_a_sanitize_left_running_is_waited_for_before_anything_starts(shared_samples, monkeypatch, no_sleep):
    drive = Drive(
        shared_samples,
        sanitize_logs=["sanitize-log-1.9-in-progress.json", "sanitize-log-1.16-succeeded.json"],
        id_ctrl_changes={"sanicap": 2},
    )
    purge(monkeypatch, drive)
    programs = drive.programs()
    assert programs.index("format") > programs.index("sanitize-log") + 1


def test_a_sanitize_that_cannot_be_followed_stops_the_run_instead_of_starting_a_fallback(
    shared_samples, monkeypatch, no_sleep
):
    drive = Drive(shared_samples, id_ctrl_changes={"sanicap": 2}, sanitize_logs=["sanitize-log-1.9-in-progress.json"])
    drive.sanitize_logs = ["sanitize-log-1.9-in-progress.json"]
    original = drive.__call__

    def unreadable_after_first(args, **kwargs):
        if args[:2] == ["nvme", "sanitize-log"] and any(c[:2] == ["nvme", "sanitize-log"] for c in drive.calls):
            drive.calls.append(list(args))
            return commands.CommandResult(tuple(args), 1, "", "NVMe status: Invalid Log Page", 0.01)
        return original(args, **kwargs)

    monkeypatch.setattr(commands, "run_command", unreadable_after_first)
    with pytest.raises(RunError, match="cannot be followed"):
        device.purge("/dev/nvme0n1", label="iops", interrupted=lambda: None)
    assert "format" not in drive.programs() and "blkdiscard" not in drive.programs()


def test_a_wide_method_nobody_confirmed_is_skipped_for_a_per_namespace_one(shared_samples, monkeypatch):
    drive = Drive(shared_samples, id_ctrl_changes=WIDE, sanitize_logs=["sanitize-log-2.11-never.json"])
    record = purge(
        monkeypatch,
        drive,
        check_scope=lambda scope: (["nvme0n1", "nvme0n2"], "the confirmation did not cover /dev/nvme0n2"),
    )
    assert record["method"].startswith("blkdiscard") and record["scope"] == "namespace"
    assert "format" not in drive.programs() and "sanitize" not in drive.programs()
    assert len(record["skipped_attempts"]) == 2
    assert all("/dev/nvme0n2" in skipped for skipped in record["skipped_attempts"])


def test_the_format_timeout_fits_nvme_clis_32_bit_milliseconds():
    assert device.format_timeout_s(10**9) == device.FORMAT_MIN_TIMEOUT_S
    assert device.format_timeout_s(500 * 10**12) * 1000 < 2**32
