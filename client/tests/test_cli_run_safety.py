"""`nvmedb-client run` refuses before it writes anything: unsafe devices, a wrong serial, bad targets.

Mounts, swap and holders are simulated with a fake /proc and /sys tree (passed through the hidden --system-root);
the NVMe identify commands, which need a real drive and root, answer with real captured nvme-cli output.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fake_system import FakeSystem
from nvmedb_client import runner, safety
from nvmedb_client.cli import exit_codes, main
from nvmedb_client.cli import run as run_cli
from nvmedb_client.system import commands

ID_CTRL_SAMPLE = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
SAMPLE_SERIAL = "S43ANA0M405593"
# nvme-cli 2.x `id-ns -o json` shape (no captured sample exists in ../shared/samples): 960 GB in 512-byte LBAs.
ID_NS = {"nsze": 1875385008, "ncap": 1875385008, "nuse": 0, "flbas": 0, "nlbaf": 1,
         "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 0}]}  # fmt: skip


@pytest.fixture
def calls(monkeypatch):
    """Every program the client would start: run_command calls and fio runs (none may be fio)."""
    seen = []

    def fake_run_command(args, *, timeout=None, check=False):
        seen.append(list(args))
        raise AssertionError(f"no command may run here, got {args}")

    def fake_fio(self, args):
        seen.append(list(args))
        raise AssertionError("fio must never start")

    monkeypatch.setattr(commands, "run_command", fake_run_command)
    monkeypatch.setattr(runner.FioProcess, "run", fake_fio)
    return seen


@pytest.fixture
def system(tmp_path):
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("nvme0n1", devnum="259:0", partitions={"nvme0n1p1": "259:1"})
    return fake


def invoke(args, tmp_path, monkeypatch):
    monkeypatch.setenv("NVMEDB_CONFIG_DIR", str(tmp_path / "config"))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", *args, "--out", str(out)])
    return result, out


def run_on_device(system, tmp_path, monkeypatch, *extra):
    args = ["--device", "/dev/nvme0n1", "--system-root", str(system.root), "--yes-destroy-data", SAMPLE_SERIAL]
    return invoke([*args, *extra], tmp_path, monkeypatch)


def assert_nothing_written(out, calls):
    assert not out.exists() or not any(out.iterdir())
    assert not any("fio" in arg for call in calls for arg in call)


def test_a_device_with_a_mounted_partition_is_refused(system, tmp_path, monkeypatch, calls):
    system.mount("/dev/nvme0n1p1", "/data", devnum="259:1")
    result, out = run_on_device(system, tmp_path, monkeypatch)
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert "/dev/nvme0n1 is mounted: nvme0n1p1 is mounted on /data" in result.output
    assert_nothing_written(out, calls)
    assert calls == []


def test_the_root_filesystem_disk_is_refused(system, tmp_path, monkeypatch, calls):
    system.mount("/dev/nvme0n1p1", "/", devnum="259:1")
    result, out = run_on_device(system, tmp_path, monkeypatch)
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert "holds the root filesystem" in result.output
    assert_nothing_written(out, calls)


def test_a_swap_device_is_refused(system, tmp_path, monkeypatch, calls):
    system.swap("/dev/nvme0n1p1")
    result, out = run_on_device(system, tmp_path, monkeypatch)
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert "swap" in result.output
    assert_nothing_written(out, calls)


def test_an_lvm_member_is_refused(system, tmp_path, monkeypatch, calls):
    system.add_virtual("dm-0", devnum="253:0", dm_name="vg0-data")
    system.hold("nvme0n1p1", "dm-0")
    result, out = run_on_device(system, tmp_path, monkeypatch)
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert "dm-0 (vg0-data)" in result.output
    assert_nothing_written(out, calls)


@pytest.fixture
def identified_drive(monkeypatch, shared_samples, calls):
    """A device that passes the safety checks (they need a real block node and root) and identifies itself with a real
    captured id-ctrl. Every command is recorded; only nvme id-ctrl / id-ns answer."""
    id_ctrl = (shared_samples / ID_CTRL_SAMPLE).read_text()
    checked = []
    monkeypatch.setattr(safety, "check_device_safe", lambda device, root: checked.append(device))
    monkeypatch.setattr(safety, "require_root", lambda: None)
    monkeypatch.setattr(safety, "require_tool", lambda name: f"/usr/bin/{name}")

    def fake_run_command(args, *, timeout=None, check=False):
        calls.append(list(args))
        if args[:2] == ["nvme", "id-ctrl"]:
            return commands.CommandResult(tuple(args), 0, id_ctrl, "", 0.01)
        if args[:2] == ["nvme", "id-ns"]:
            return commands.CommandResult(tuple(args), 0, json.dumps(ID_NS), "", 0.01)
        raise AssertionError(f"nothing else may run before the confirmation, got {args}")

    monkeypatch.setattr(commands, "run_command", fake_run_command)
    return checked


def test_a_wrong_serial_aborts_before_any_write(identified_drive, tmp_path, monkeypatch, calls):
    result, out = invoke(["--device", "/dev/nvme0n1", "--yes-destroy-data", "S43ANA0M405594"], tmp_path, monkeypatch)
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert "does not match the drive's (S43ANA0M405593); nothing was written" in result.output
    assert identified_drive == ["/dev/nvme0n1"]
    assert [call[:2] for call in calls] == [["nvme", "id-ctrl"], ["nvme", "id-ns"]]
    assert_nothing_written(out, calls)


def test_a_wrong_serial_typed_at_the_prompt_aborts_too(identified_drive, tmp_path, monkeypatch, calls):
    monkeypatch.setattr(run_cli, "stdin_is_terminal", lambda: True)
    monkeypatch.setenv("NVMEDB_CONFIG_DIR", str(tmp_path / "config"))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "--device", "/dev/nvme0n1", "--out", str(out)], input="S43ANA\n")
    assert "Type its serial number" in result.output
    assert "MZ1LB960HAJQ" in result.output
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert_nothing_written(out, calls)


def test_without_a_terminal_the_serial_must_be_given_on_the_command_line(
    identified_drive, tmp_path, monkeypatch, calls
):
    result, out = invoke(["--device", "/dev/nvme0n1"], tmp_path, monkeypatch)
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert "--yes-destroy-data=SERIAL" in result.output
    assert_nothing_written(out, calls)


def test_a_file_target_larger_than_the_free_space_is_refused_and_not_created(tmp_path, monkeypatch, calls):
    target = tmp_path / "target.img"
    result, out = invoke(
        ["--target-file", str(target), "--size", "1000TiB", "--profile", "quick"], tmp_path, monkeypatch
    )
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert "Not enough free space" in result.output
    assert not target.exists()
    assert_nothing_written(out, calls)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "Give exactly one target"),
        (["--device", "/dev/nvme0n1", "--target-file", "x.img", "--size", "1GiB"], "Give exactly one target"),
        (["--target-file", "x.img"], "--target-file needs --size"),
        (["--target-file", "x.img", "--size", "lots"], "cannot read the size"),
        (["--target-file", "x.img", "--size", "1GiB", "--tests", "iops,fast"], "unknown test fast"),
    ],
)
def test_bad_options_are_usage_errors_that_write_nothing(args, message, tmp_path, monkeypatch, calls):
    result, out = invoke(args, tmp_path, monkeypatch)
    assert result.exit_code == exit_codes.USAGE, result.output
    assert message in result.output
    assert_nothing_written(out, calls)


def test_resume_of_a_folder_that_is_not_a_run_says_so(tmp_path, monkeypatch, calls):
    (tmp_path / "elsewhere").mkdir()
    result, _ = invoke(["--resume", str(tmp_path / "elsewhere")], tmp_path, monkeypatch)
    assert result.exit_code == exit_codes.FAILURE
    assert "is not a run directory" in result.output


DUAL_CONTROLLER_LIST = (
    Path(__file__).parent / "fixtures" / "nvme-cli" / "nvme-list-2.11-dual-controller.json"
).read_text()


@pytest.fixture
def shared_drive(monkeypatch, shared_samples, calls, tmp_path):
    """A drive whose Format erases the whole controller (FNA bit 0) and that supports Sanitize, with another
    namespace on its controller and one on a second controller of the subsystem (fake sysfs + nvme list 2.11)."""
    doc = json.loads((shared_samples / ID_CTRL_SAMPLE).read_text())
    doc.update(fna=5, sanicap=2)
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("nvme0n1", devnum="259:0", controller="nvme0")
    fake.add_disk("nvme0n2", devnum="259:1", controller="nvme0", partitions={"nvme0n2p1": "259:2"})
    fake.add_disk("nvme1n3", devnum="259:3", controller="nvme1", pci_path=("0000:00:1d.0", "0000:3c:00.0"))
    fake.add_subsystem("nvme-subsys0", ["nvme0", "nvme1"])
    monkeypatch.setattr(safety, "check_device_safe", lambda device, root: None)
    monkeypatch.setattr(safety, "require_root", lambda: None)
    monkeypatch.setattr(safety, "require_tool", lambda name: f"/usr/bin/{name}")
    started = []
    monkeypatch.setattr(
        runner, "execute_run", lambda **kwargs: started.append(kwargs["run_dir"]) or tmp_path / "b.nvmedb.tar.gz"
    )

    def fake_run_command(args, *, timeout=None, check=False):
        calls.append(list(args))
        answers = {"id-ctrl": json.dumps(doc), "id-ns": json.dumps(ID_NS), "list": DUAL_CONTROLLER_LIST}
        return commands.CommandResult(tuple(args), 0, answers[args[1]], "", 0.01)

    monkeypatch.setattr(commands, "run_command", fake_run_command)
    return fake, started


def shared_run(shared_drive, tmp_path, monkeypatch, typed):
    fake, started = shared_drive
    monkeypatch.setattr(run_cli, "stdin_is_terminal", lambda: True)
    monkeypatch.setenv("NVMEDB_CONFIG_DIR", str(tmp_path / "config"))
    args = ["run", "--device", "/dev/nvme0n1", "--system-root", str(fake.root), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, args, input=f"{typed}\n")
    config = json.loads((started[0] / "state.json").read_text())["config"] if started else None
    return result, config


def test_the_prompt_names_every_namespace_a_wide_purge_would_erase(shared_drive, tmp_path, monkeypatch):
    result, config = shared_run(shared_drive, tmp_path, monkeypatch, "S43ANA0M405593+2")
    assert "ALSO ERASES /dev/nvme0n2, /dev/nvme1n3" in result.output
    assert "S43ANA0M405593+2" in result.output
    assert result.exit_code == 0, result.output
    assert config["erase_confirmed"] == ["nvme0n2", "nvme1n3"]


def test_the_bare_serial_keeps_the_purge_to_the_target_namespace(shared_drive, tmp_path, monkeypatch):
    result, config = shared_run(shared_drive, tmp_path, monkeypatch, "S43ANA0M405593")
    assert result.exit_code == 0, result.output
    assert config["erase_confirmed"] == []
    assert "Only /dev/nvme0n1 will be erased" in result.output


def test_a_namespace_in_use_is_not_offered_and_the_prompt_says_why(shared_drive, tmp_path, monkeypatch):
    fake, _ = shared_drive
    fake.mount("/dev/nvme0n2p1", "/srv", devnum="259:2")
    result, config = shared_run(shared_drive, tmp_path, monkeypatch, "S43ANA0M405593")
    assert "nvme0n2p1 is mounted on /srv" in result.output
    assert "ALSO ERASES" not in result.output
    assert config["erase_confirmed"] == []


def test_a_wrong_count_confirms_nothing(shared_drive, tmp_path, monkeypatch, calls):
    result, config = shared_run(shared_drive, tmp_path, monkeypatch, "S43ANA0M405593+1")
    assert result.exit_code == exit_codes.UNSAFE_TARGET
    assert config is None
    assert not any(call[1] in ("format", "sanitize") for call in calls)
