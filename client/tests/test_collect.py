"""collect_system with the subprocess boundary swapped for real captured outputs, and once for real on this machine."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fake_system import FakeSystem
from nvmedb_client.cli import main
from nvmedb_client.privacy import sanitize_lshw
from nvmedb_client.system import collect as collect_module
from nvmedb_client.system import commands
from nvmedb_client.system.collect import collect_system, smart_snapshot
from nvmedb_client.system.commands import CommandResult

READ_ONLY_NVME_SUBCOMMANDS = {"list", "id-ctrl", "id-ns", "smart-log", "get-feature", "version"}
# The laptop sample's NVMe drive (02:00.0) sits behind root port 00:02.4 ("Bus: ... secondary=02").
LAPTOP_PCI_PATH = ("0000:00:02.4", "0000:02:00.0")


def _nvme_sample(shared_samples, needle):
    [path] = [p for p in (shared_samples / "nvme-cli").iterdir() if needle in p.name]
    return path.read_text()


def _lspci_block(text, address):
    """The report of one device from a full lspci dump, as `lspci -s ADDR` prints it."""
    slot = address.split(":", 1)[1]
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(slot + " "))
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(r"^[0-9a-f]{2}:[0-9a-f]{2}\.\d ", lines[i])), len(lines)
    )
    return "\n".join(lines[start:end]).strip() + "\n"


class FakeCommands:
    """Stands in for run_command: answers with the real outputs captured in ../shared/samples/."""

    def __init__(self, shared_samples, *, absent=()):
        laptop = next(p for p in (shared_samples / "lspci").iterdir() if "linuxhw__LsPCI" in p.name)
        self.lspci_text = laptop.read_text()
        self.outputs = {
            ("nvme", "list"): _nvme_sample(shared_samples, "v2.11__nvme-list"),
            ("nvme", "id-ctrl"): _nvme_sample(shared_samples, "id_ctrl"),
            ("nvme", "smart-log"): _nvme_sample(shared_samples, "v2.11__nvme-smart-log"),
            ("nvme", "get-feature"): "get-feature:0x06 (Volatile Write Cache), Current value:0x00000001\n",
            ("nvme", "version"): "nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)\n",
            ("lshw", "-json"): (shared_samples / "lshw" / "local__lshw-02.19__kvm_vm.json").read_text(),
            ("fio", "--version"): "fio-3.33\n",
            ("lspci", "--version"): "lspci version 3.9.0\n",
        }
        self.absent = set(absent)
        self.calls = []

    def __call__(self, args, *, timeout=None, check=False):
        args = tuple(args)
        self.calls.append(args)
        if args[0] in self.absent:
            return CommandResult(
                args, None, "", "", 0.0, error=f"{args[0]} is not installed (not found on PATH)", tool_absent=True
            )
        if args[:2] == ("nvme", "id-ns"):
            return CommandResult(args, 1, "", "NVMe status: Invalid Namespace or Format(0x400b)\n", 0.01)
        if args[0] == "lspci" and "-s" in args:
            return CommandResult(args, 0, _lspci_block(self.lspci_text, args[args.index("-s") + 1]), "", 0.01)
        return CommandResult(args, 0, self.outputs[args[:2]], "", 0.01)


@pytest.fixture
def machine(tmp_path):
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("nvme0n1", devnum="259:0", pci_path=LAPTOP_PCI_PATH)
    return fake


@pytest.fixture
def fake_commands(shared_samples, monkeypatch):
    fake = FakeCommands(shared_samples)
    monkeypatch.setattr(commands, "run_command", fake)
    return fake


def test_collect_with_captured_outputs_parses_and_keeps_every_raw_file(
    shared_samples, machine, fake_commands, tmp_path
):
    out = tmp_path / "out"
    facts = collect_system(device="/dev/nvme0n1", out_dir=out, root=machine.root)

    id_ctrl = json.loads(_nvme_sample(shared_samples, "id_ctrl"))
    assert facts["id_ctrl"]["serial"] == id_ctrl["sn"].strip()
    assert facts["id_ctrl"]["wctemp_c"] == id_ctrl["wctemp"] - 273
    smart = json.loads(_nvme_sample(shared_samples, "v2.11__nvme-smart-log"))
    assert facts["smart_log"]["temperature_c"] == smart["temperature"] - 273
    assert facts["smart_log"]["data_written_bytes"] == smart["data_units_written"] * 512_000
    assert facts["volatile_write_cache"] == {"value": 1, "enabled": True}
    assert [entry["serial"] for entry in facts["nvme_list"]][:1] == ["XXX02YYY"]
    assert facts["tools"]["nvme-cli"] == "2.3" and facts["tools"]["fio"] == "fio-3.33"
    assert facts["lshw"]["memory_bytes"] == 25769803776
    assert facts["lshw"]["system_vendor"] == {"missing": "lshw reports no system vendor"}

    # id-ns failed: recorded with the command's own stderr line, nothing invented.
    assert facts["id_ns"] == {
        "missing": "`nvme id-ns /dev/nvme0n1 -o json` failed with exit status 1: "
        "NVMe status: Invalid Namespace or Format(0x400b)"
    }
    assert not (out / "nvme-id-ns.json").exists()

    assert facts["block_device"]["pci_path"] == list(LAPTOP_PCI_PATH)
    drive, root_port = facts["pcie"]["devices"][-1], facts["pcie"]["devices"][0]
    assert drive["is_nvme"] and drive["vendor_id"] == "144d"
    assert (drive["link_speed_gts"], drive["link_width"]) == (8.0, 4)
    assert (root_port["express_type"], root_port["link_cap_speed_gts"]) == ("Root Port", 16.0)

    assert (out / "nvme-id-ctrl.json").read_text() == _nvme_sample(shared_samples, "id_ctrl")
    assert (out / "nvme-smart-log.json").read_text() == _nvme_sample(shared_samples, "v2.11__nvme-smart-log")
    assert (out / "lshw.json").read_text() == sanitize_lshw(fake_commands.outputs[("lshw", "-json")])
    assert "192.0.2.2" not in (out / "lshw.json").read_text()  # the VM's address is never collected
    assert "02:00.0 Non-Volatile memory controller" in (out / "lspci.txt").read_text()
    assert json.loads((out / "facts.json").read_text()) == facts
    logged = json.loads((out / "commands.json").read_text())
    assert [tuple(entry["args"]) for entry in logged] == fake_commands.calls


def test_collect_only_runs_read_only_commands(machine, fake_commands, tmp_path):
    collect_system(device="/dev/nvme0n1", out_dir=tmp_path / "out", root=machine.root)
    nvme_calls = [call for call in fake_commands.calls if call[0] == "nvme"]
    assert {call[1] for call in nvme_calls} <= READ_ONLY_NVME_SUBCOMMANDS
    lspci_targets = [call[call.index("-s") + 1] for call in fake_commands.calls if call[0] == "lspci" and "-s" in call]
    assert lspci_targets == list(LAPTOP_PCI_PATH)  # the drive and every bridge on its path, root port first


def test_absent_tools_are_recorded_as_missing(shared_samples, machine, monkeypatch, tmp_path):
    fake = FakeCommands(shared_samples, absent={"lshw", "nvme"})
    monkeypatch.setattr(commands, "run_command", fake)
    facts = collect_system(device="/dev/nvme0n1", out_dir=tmp_path / "out", root=machine.root)
    assert facts["lshw"] == {"missing": "lshw is not installed (not found on PATH)"}
    for key in ("nvme_list", "id_ctrl", "smart_log", "volatile_write_cache"):
        assert facts[key] == {"missing": "nvme is not installed (not found on PATH)"}
    assert facts["tools"]["nvme-cli"] == {"missing": "nvme is not installed (not found on PATH)"}
    assert facts["pcie"]["devices"][-1]["link_width"] == 4  # lspci still answered


def test_without_root_a_failure_says_so_and_lshw_is_flagged_partial(machine, fake_commands, monkeypatch, tmp_path):
    monkeypatch.setattr(collect_module.host, "is_root", lambda: False)
    facts = collect_system(device="/dev/nvme0n1", out_dir=tmp_path / "out", root=machine.root)
    assert facts["privileges"] == {"root": False}
    assert facts["id_ns"]["missing"].endswith("(not running as root, which this command may need)")
    assert "without root" in facts["lshw"]["note"]


def test_without_a_device_only_host_facts_are_collected(fake_commands, tmp_path):
    facts = collect_system(device=None, out_dir=tmp_path / "out")
    assert facts["id_ctrl"] == {"missing": "no device was given (--device)"}
    assert not any(call[0] == "nvme" and call[1] != "list" and call[1] != "version" for call in fake_commands.calls)


def test_smart_snapshot_writes_the_raw_log_and_returns_it_parsed(shared_samples, fake_commands, tmp_path):
    out = tmp_path / "smart" / "run1.before.json"
    parsed = smart_snapshot("/dev/nvme0n1", out)
    assert out.read_text() == _nvme_sample(shared_samples, "v2.11__nvme-smart-log")
    assert parsed["percent_used"] == json.loads(out.read_text())["percent_used"]
    assert fake_commands.calls == [("nvme", "smart-log", "/dev/nvme0n1", "-o", "json")]


def test_smart_snapshot_is_none_for_a_file_target_or_a_failure(shared_samples, monkeypatch, tmp_path, caplog):
    fake = FakeCommands(shared_samples, absent={"nvme"})
    monkeypatch.setattr(commands, "run_command", fake)
    assert smart_snapshot(None, tmp_path / "a.json") is None
    assert fake.calls == []
    assert smart_snapshot("/dev/nvme0n1", tmp_path / "b.json") is None
    assert not (tmp_path / "b.json").exists()
    assert "nvme is not installed" in caplog.text


def _has_nvme_hardware():
    folder = Path("/sys/class/nvme")
    return folder.is_dir() and any(folder.iterdir())


@pytest.mark.skipif(_has_nvme_hardware(), reason="this machine has NVMe controllers; the test expects none")
def test_a_real_collection_on_a_machine_without_nvme_invents_nothing(tmp_path):
    facts = collect_system(device="/dev/nvme0n1", out_dir=tmp_path / "out")
    for key in ("id_ctrl", "id_ns", "smart_log", "volatile_write_cache", "block_device", "pcie"):
        assert facts[key] == {"missing": "/dev/nvme0n1 does not exist (no NVMe device here)"}
    assert facts["nvme_list"] == [] or "missing" in facts["nvme_list"]
    for tool in ("fio", "nvme-cli", "lspci"):
        value = facts["tools"][tool]
        assert isinstance(value, str) or value["missing"], tool
    with open("/proc/cpuinfo") as handle:
        assert facts["host"]["cpu"]["logical_cpus"] == sum(1 for line in handle if line.startswith("processor"))
    assert json.loads((tmp_path / "out" / "facts.json").read_text()) == facts
    logged = json.loads((tmp_path / "out" / "commands.json").read_text())
    assert all(entry["args"][0] in {"fio", "nvme", "lspci", "lshw"} for entry in logged)
    assert not any(entry["args"][:2] == ["nvme", "id-ctrl"] for entry in logged)  # no device, no device commands


def test_the_collect_command_prints_a_table_with_missing_reasons(fake_commands, tmp_path):
    out = tmp_path / "facts"
    result = CliRunner().invoke(main, ["collect", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "System facts" in result.output
    assert "missing: no device was given" in result.output
    assert (out / "facts.json").is_file()


def test_the_collect_command_prints_json_and_refuses_a_folder_in_use(fake_commands, tmp_path):
    out = tmp_path / "facts"
    result = CliRunner().invoke(main, ["collect", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == json.loads((out / "facts.json").read_text())
    again = CliRunner().invoke(main, ["collect", "--out", str(out)])
    assert again.exit_code == 1
    assert "is not empty" in again.output


def test_the_default_output_folder_is_new_and_timestamped(fake_commands, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["collect", "--json"])
    assert result.exit_code == 0, result.output
    [folder] = [p for p in tmp_path.iterdir() if p.name.startswith("nvmedb-collect-")]
    assert re.fullmatch(r"nvmedb-collect-\d{8}T\d{6}Z", folder.name)
    assert (folder / "facts.json").is_file()


def test_the_module_calls_the_boundary_through_the_commands_module():
    # Tests swap commands.run_command; a direct import in collect.py would bypass the swap.
    assert not hasattr(collect_module, "run_command")


# the boundary itself, with real programs


def test_run_command_captures_output_and_status():
    result = commands.run_command(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.ok
    assert result.failure_reason() == "`sh -c 'echo out; echo err >&2; exit 3'` failed with exit status 3: err"
    assert commands.run_command(["true"]).ok


def test_a_missing_program_is_a_result_not_a_crash_unless_checked():
    result = commands.run_command(["nvmedb-no-such-tool", "--version"])
    assert result.tool_absent and result.returncode is None
    assert result.failure_reason() == "nvmedb-no-such-tool is not installed (not found on PATH)"
    with pytest.raises(commands.ToolAbsentError, match="not installed"):
        commands.run_command(["nvmedb-no-such-tool"], check=True)
    with pytest.raises(commands.CommandError, match="exit status 1"):
        commands.run_command(["false"], check=True)


def test_a_command_that_hangs_is_stopped_at_its_timeout():
    result = commands.run_command(["sleep", "5"], timeout=0.2)
    assert result.returncode is None and not result.tool_absent
    assert "was stopped after 0.2 s" in result.failure_reason()


def test_run_command_logs_the_command_line(caplog):
    caplog.set_level("INFO", logger="nvmedb_client.system.commands")
    commands.run_command(["echo", "hello world"])
    assert "running: echo 'hello world'" in caplog.text


def test_every_figure_in_the_summary_carries_its_unit():
    from nvmedb_client.cli.collect import summary_rows

    facts = {
        "host": {"memory_bytes": 25769803776, "cpu": {"logical_cpus": 8}},
        "id_ns": {"size_bytes": 960197124096, "lba_data_size_bytes": 4096},
        "smart_log": {"temperature_c": 35, "percent_used": 2},
    }
    rows = {label: shown for label, shown, _ in summary_rows(facts)}
    assert rows["Memory"] == "25.8 GB (24.0 GiB, 25769803776 bytes)"
    assert rows["Namespace size"] == "960 GB (894 GiB, 960197124096 bytes)"
    assert rows["LBA size"] == "4 KiB (4096 bytes)"
    assert rows["Temperature"] == "35 °C" and rows["Percentage used"] == "2 %"
    assert rows["Logical CPUs"] == "8"  # a count


def test_the_collect_table_shows_memory_with_a_unit(fake_commands, tmp_path):
    result = CliRunner().invoke(main, ["collect", "--out", str(tmp_path / "facts")])
    facts = json.loads((tmp_path / "facts" / "facts.json").read_text())
    memory = facts["host"]["memory_bytes"]
    assert isinstance(memory, int)
    assert f"{memory} bytes)" in result.output and "GiB" in result.output


def test_the_declaration_gives_every_collected_file_its_kind_and_the_drive_its_pci_path(
    machine, fake_commands, tmp_path
):
    import jsonschema

    from nvmedb_client.bundle import manifest_schema
    from nvmedb_client.system.collect import system_declaration

    out = tmp_path / "system"
    facts = collect_system(device="/dev/nvme0n1", out_dir=out, root=machine.root)
    declaration = system_declaration(out)

    kinds = {entry["path"]: entry["kind"] for entry in declaration["files"]}
    assert set(kinds) == {f"system/{path.name}" for path in out.iterdir()}
    assert kinds["system/nvme-id-ctrl.json"] == "nvme-id-ctrl"
    assert kinds["system/lspci.txt"] == "lspci-vvv"
    assert kinds["system/facts.json"] == "facts"
    assert "other" not in kinds.values()  # the collection writes nothing whose role is not named
    assert declaration["pci_path"] == list(LAPTOP_PCI_PATH)
    # facts.json as the client writes it is what the schema documents
    schema = manifest_schema()
    jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/facts"}).validate(facts)


def test_without_a_device_the_declaration_says_why_there_is_no_pci_path(fake_commands, tmp_path):
    from nvmedb_client.system.collect import system_declaration

    out = tmp_path / "system"
    collect_system(device=None, out_dir=out)
    declaration = system_declaration(out)
    assert declaration["pci_path"] is None
    assert declaration["pci_path_missing"] == "no device was given (--device)"
