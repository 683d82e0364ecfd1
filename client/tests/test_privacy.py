"""The client records targets without serials or user names and collects no host name, IP or MAC address."""

import json
import re
from pathlib import Path

import pytest

from nvmedb_client import privacy, runner
from nvmedb_client.fio_process import FioResult
from nvmedb_client.run_state import RunConfig, create_run_dir
from nvmedb_client.system import commands
from nvmedb_client.system.commands import CommandResult
from nvmedb_client.system.lshw import parse_lshw

BY_ID = "nvme-Samsung_SSD_970_EVO_Plus_1TB_S4EWNX0R123456"
IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
MAC = re.compile(r"(?<![0-9a-fA-F:])(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}(?![0-9a-fA-F:])")


@pytest.fixture
def by_id_device(tmp_path):
    dev = tmp_path / "dev"
    (dev / "disk" / "by-id").mkdir(parents=True)
    (dev / "nvme0n1").write_bytes(b"")
    link = dev / "disk" / "by-id" / BY_ID
    link.symlink_to("../../nvme0n1")
    return link


def test_a_by_id_device_is_recorded_by_its_kernel_name(by_id_device):
    assert privacy.recorded_target("device", str(by_id_device)) == str(by_id_device.parent.parent.parent / "nvme0n1")
    assert privacy.kernel_device("/dev/nvme0n1") == "/dev/nvme0n1"  # not a link: kept as given


def test_a_file_target_is_recorded_by_its_bare_name():
    assert privacy.recorded_target("file", "/home/alice/runs/try.img") == "try.img"


def make_runner(tmp_path, kind, path):
    config = RunConfig(target_kind=kind, target_path=str(path), size_bytes=256 * 1024**2, tests=["iops"],
                       edition="enterprise", profile="quick", cell_runtime_s=1.0)  # fmt: skip
    return runner.Runner(run_dir=create_run_dir(config=config, out_dir=tmp_path / "runs"))


def test_the_runner_gives_fio_and_the_records_the_kernel_name_of_a_by_id_device(tmp_path, by_id_device):
    run = make_runner(tmp_path, "device", by_id_device)
    assert run.device == run.recorded_target == str(by_id_device.resolve())
    assert "Samsung" not in run.recorded_target and "S4EWNX0R123456" not in run.recorded_target
    assert run.fio_cwd is None
    # the state keeps the stable by-id name, so a resume after a reboot that renumbers drives finds the same one
    assert json.loads((run.run_dir / "state.json").read_text())["config"]["target_path"] == str(by_id_device)


def test_the_runner_runs_fio_on_a_file_from_its_directory_and_records_only_its_name(tmp_path):
    target = tmp_path / "home" / "alice" / "try.img"
    run = make_runner(tmp_path, "file", target)
    assert run.recorded_target == "try.img" and run.fio_cwd == str(target.parent)


@pytest.mark.parametrize("name", ["hydropero", "keithCollins", "local__lshw", "sonnix", "Manouchehri"])
def test_lshw_output_keeps_its_facts_and_loses_host_name_ip_and_mac(shared_samples, name):
    sample = next(p for p in (shared_samples / "lshw").iterdir() if p.name.startswith(name))
    raw = sample.read_text()
    clean = privacy.sanitize_lshw(raw)
    assert parse_lshw(clean) == parse_lshw(raw)
    addresses = set(re.findall(r'"ip" : "([^"]+)"', raw)) | set(MAC.findall(raw)) | set(IPV4.findall(raw))
    addresses -= {"[REMOVED]", "18.168.6.1"}  # a wifi card's firmware version, which only looks like an address
    assert addresses or name in ("keithCollins", "Manouchehri")  # the others do hold addresses to remove
    for address in addresses:
        assert address not in clean
    document = json.loads(clean)
    roots = document if isinstance(document, list) else [document]
    assert {root["id"] for root in roots if root.get("class") == "system"} <= {"computer"}
    for host in ("ip-172-31-35-167", "keithcollins-hp-probook-6450b", "wuffinotebook"):
        assert host not in clean


def test_lshw_output_that_is_not_json_is_left_for_the_parser_to_reject():
    assert privacy.sanitize_lshw("lshw: not json") == "lshw: not json"


def run_one_cell(run, shared_samples, monkeypatch):
    """One measurement cell through the runner, with fio and nvme-cli replaced at their boundaries."""
    fio_calls, commands_run = [], []

    def fake_fio(args, *, cwd=None, env=None):
        fio_calls.append((list(args), cwd))
        output = next(a for a in args if a.startswith("--output="))[len("--output=") :]
        Path(output).write_bytes((shared_samples / "fio" / "local__fio-3.33__single_randread_json.json").read_bytes())
        return FioResult(tuple(args), 0, "", "", 1.0)

    def fake_command(args, *, timeout=None, check=False):
        commands_run.append(list(args))
        return CommandResult(tuple(args), None, "", "", 0.0, error="nvme is not installed", tool_absent=True)

    monkeypatch.setattr(run.fio_process, "run", fake_fio)
    monkeypatch.setattr(commands, "run_command", fake_command)
    for sub in ("jobs", "fio", "smart"):
        (run.files / sub).mkdir(exist_ok=True)
    run.state["ioengine"] = {"engine": "libaio", "note": None}
    series = run.plan.blocks[0].series[0]
    cell = series.cells[0]
    run._run_series_cell(series, 1, cell, series.run_id(1, cell))
    job = (run.files / run.state["runs"][-1]["job_file"]).read_text()
    return job, fio_calls, commands_run


def test_a_device_cell_names_the_kernel_device_in_its_job_file_and_commands(
    tmp_path, by_id_device, shared_samples, monkeypatch
):
    run = make_runner(tmp_path, "device", by_id_device)
    job, fio_calls, commands_run = run_one_cell(run, shared_samples, monkeypatch)
    kernel = str(by_id_device.resolve())
    assert f"filename={kernel}" in job.splitlines() and "by-id" not in job
    assert fio_calls[0][1] is None  # fio is given the job file naming the kernel device: the same drive
    assert commands_run and all(kernel in args and str(by_id_device) not in args for args in commands_run)


def test_a_file_cell_runs_fio_in_the_files_directory_and_names_only_the_file(tmp_path, shared_samples, monkeypatch):
    target = tmp_path / "home" / "mariadelgado" / "try.img"
    target.parent.mkdir(parents=True)
    run = make_runner(tmp_path, "file", target)
    job, fio_calls, commands_run = run_one_cell(run, shared_samples, monkeypatch)
    assert "filename=try.img" in job.splitlines() and "mariadelgado" not in job
    args, cwd = fio_calls[0]
    assert cwd == str(target.parent) and all(Path(a.removeprefix("--output=")).is_absolute() for a in args[2:3])
    assert commands_run == []  # no device: nothing to ask nvme-cli
