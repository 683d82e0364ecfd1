"""Importing a py-sss-pts result tree (its run.py layout), built here from real fio, nvme-cli and lspci outputs."""

import json
import shutil

import pytest
from django.core.management import call_command

from analysis.models import Flag, Measurement, SteadyStateWindow, TestRun
from importers.py_sss_pts import tool_rule, tool_value
from nvmedb_client.fio_output import parse_fio_output, summarize
from nvmedb_client.system.lshw import parse_lshw

CELLS = ((0, "4KB", "4k"), (65, "64KB", "64k"), (100, "1024KB", "1024k"))
ID_CTRL = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
SMART = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"
LSPCI = "lspci/local__lspci-3.9.0__rendered_from_pciutils_tests_cap-phy32.txt"


@pytest.fixture
def result_tree(tmp_path, shared_samples):
    root = tmp_path / "py-sss-pts-run"
    for round_number in range(1, 6):
        for read, ssspt_bs, bs in CELLS:
            cell = root / f"round-{round_number}/rr-{read}/bs-{bs}/wdpc"
            cell.mkdir(parents=True)
            source = shared_samples / f"ssspt-hp-iops-1/wdpc_bs{ssspt_bs}_read{read}_round{round_number}.json"
            shutil.copyfile(source, cell / "output.json")
    for relative, sample in (
        ("device/nvme-id-ctrl", ID_CTRL),
        ("device/nvme-smart-log", SMART),
        ("platform/lspci", LSPCI),
    ):
        (root / relative).mkdir(parents=True)
        shutil.copyfile(shared_samples / sample, root / relative / "stdout.log")
    (root / "settings/queue").mkdir(parents=True)
    (root / "settings/queue/data.json").write_text(
        json.dumps({"scheduler": "[none] mq-deadline", "nr_requests": "1023"})
    )
    return root


def test_the_tree_is_imported_with_the_pts_verdict_and_the_tools_claim(db, result_tree, capsys):
    call_command("import_results", str(result_tree), "--format", "py-sss-pts", "--json")
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["status"] == "published", outcome

    run = TestRun.objects.get()
    assert (run.source, run.source_license, run.signed) == ("py-sss-pts", "GPL-3.0-or-later", False)
    assert run.drive_model.vendor.name == "Samsung" and run.firmware.revision == "EDA76F2Q"
    assert run.scheduler == "none" and run.edition == "client"
    assert run.percentage_used == 2 and run.power_on_hours == 4974
    assert run.pcie_link.generation == 4 and run.pcie_link.below_capability is True
    assert Flag.objects.filter(kind="link_below_capability").exists() and Flag.objects.filter(kind="imported").exists()
    assert run.missing["purge_method"] and run.missing["nvme_list"]

    assert Measurement.objects.count() == 15
    m = Measurement.objects.get(raw_file="round-3/rr-65/bs-64k/wdpc/output.json")
    assert (m.block_size_bytes, m.read_pct, m.round.number) == (65536, 65, 3)

    windows = list(SteadyStateWindow.objects.all())
    assert {w.variable for w in windows} == {
        "iops.total_iops.rw000.bs4096",
        "iops.total_iops.rw065.bs65536",
        "iops.total_iops.rw100.bs1048576",
    }
    for window in windows:
        assert window.claimed["tool"] == "py-sss-pts" and window.claimed["last_round_run"] == 5
        assert window.claim_differs == (window.claimed_steady != window.steady)
        assert len(window.rounds) == 5


def test_the_tool_tracks_a_weighted_iops_not_the_total(shared_samples):
    summary = summarize(
        parse_fio_output((shared_samples / "ssspt-hp-iops-1/wdpc_bs64KB_read65_round1.json").read_bytes())
    )
    assert tool_value(summary, 65) == pytest.approx(0.65 * summary.read_iops + 0.35 * summary.write_iops)
    assert tool_value(summary, 65) < summary.total_iops


def test_the_tools_rule_is_strict_where_the_pts_rule_is_inclusive():
    values = [90.0, 110.0, 100.0, 100.0, 100.0]  # range exactly 20 % of the average, flat fitted line
    assert not tool_rule(values)
    from nvmedb_client.steady_state import evaluate_window

    assert evaluate_window([1, 2, 3, 4, 5], values).steady


def test_a_tree_without_fio_outputs_is_rejected_with_the_reason(db, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    call_command("import_results", str(tmp_path / "empty"), "--format", "py-sss-pts", "--json")
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["status"] == "rejected" and "no round-N/rr-R/bs-B/wdpc/output.json" in outcome["reasons"][0]
    assert not TestRun.objects.exists()


def test_preconditioning_and_namespace_size_feed_the_unwritten_data_estimate(db, result_tree, shared_samples, capsys):
    (result_tree / "pre-conditioning/wipc").mkdir(parents=True)
    shutil.copyfile(
        shared_samples / "ssspt-hp-iops-1/wipc_bs128KB.json", result_tree / "pre-conditioning/wipc/output.json"
    )
    (result_tree / "device/nvme-list").mkdir(parents=True)
    namespace = {
        "Devices": [
            {
                "NameSpace": "nvme0n1",
                "DevicePath": "/dev/nvme0n1",
                "ModelNumber": "MZ1LB960HAJQ",
                "SerialNumber": "S43ANA0M405593",
                "Firmware": "EDA76F2Q",
                "PhysicalSize": 800_000_000_000,
                "SectorSize": 512,
                "MaximumLBA": 1_562_500_000,
                "UsedBytes": 1,
            }
        ]
    }
    (result_tree / "device/nvme-list/stdout.log").write_text(json.dumps(namespace))
    call_command("import_results", str(result_tree), "--format", "py-sss-pts", "--json")
    assert json.loads(capsys.readouterr().out)["status"] == "published"

    run = TestRun.objects.get()
    assert run.namespace_size_bytes == 800_000_000_000
    assert run.overprovisioning == pytest.approx(1 - 800_000_000_000 / 900185481216)
    assert run.active_range_bytes == 600_000_000_000  # PTS-C: 75 % of the namespace
    wipc = Measurement.objects.get(round__phase="wipc")
    assert wipc.raw_file == "pre-conditioning/wipc/output.json" and wipc.write_bytes > 10**12
    assert not Flag.objects.filter(kind="unwritten_data").exists()  # 1 TB of sequential writes covered the range


def test_nvme_list_picks_the_tested_drive_among_several(db, result_tree, shared_samples, capsys):
    several = (
        "lspci/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__lspci_vvv_3"
    )
    shutil.copyfile(shared_samples / several, result_tree / "platform/lspci/stdout.log")
    (result_tree / "device/nvme-list").mkdir(parents=True)
    controllers = [
        {
            "Controller": f"nvme{i}",
            "SerialNumber": serial,
            "ModelNumber": "MZ1LB960HAJQ",
            "Firmware": "EDA76F2Q",
            "Address": address,
            "Transport": "pcie",
            "Namespaces": [
                {
                    "NameSpace": f"nvme{i}n1",
                    "NSID": 1,
                    "PhysicalSize": 900185481216,
                    "SectorSize": 512,
                    "MaximumLBA": 1758174768,
                    "UsedBytes": 1,
                }
            ],
        }
        for i, (serial, address) in enumerate((("OTHER1", "0000:3b:00.0"), ("S43ANA0M405593", "0000:3c:00.0")))
    ]
    listing = {"Devices": [{"HostNQN": "", "Subsystems": [{"Subsystem": "nvme-subsys0", "Controllers": controllers}]}]}
    (result_tree / "device/nvme-list/stdout.log").write_text(json.dumps(listing))
    call_command("import_results", str(result_tree), "--format", "py-sss-pts", "--json")
    capsys.readouterr()
    link = TestRun.objects.get().pcie_link
    assert link.pci_address == "3c:00.0" and (link.generation, link.width) == (3, 4)


def _namespace(result_tree, size: int = 800_000_000_000) -> None:
    (result_tree / "device/nvme-list").mkdir(parents=True, exist_ok=True)
    device = {"NameSpace": "nvme0n1", "DevicePath": "/dev/nvme0n1", "SerialNumber": "S43ANA0M405593"}
    device |= {"ModelNumber": "MZ1LB960HAJQ", "Firmware": "EDA76F2Q", "PhysicalSize": size, "SectorSize": 512}
    (result_tree / "device/nvme-list/stdout.log").write_text(json.dumps({"Devices": [device]}))


def test_without_a_purge_record_no_read_is_judged_unwritten(db, result_tree, capsys):
    _namespace(result_tree)
    call_command("import_results", str(result_tree), "--format", "py-sss-pts", "--json")
    assert json.loads(capsys.readouterr().out)["status"] == "published"
    run = TestRun.objects.get()
    assert run.active_range_bytes == 600_000_000_000  # the fio jobs' size=75% of the namespace
    assert run.purge_method == "" and "not judged for unwritten data" in run.missing["unwritten_data"]
    assert not Flag.objects.filter(kind="unwritten_data").exists()


def test_a_recorded_nvme_format_lets_reads_of_a_mostly_unwritten_range_be_flagged(db, result_tree, capsys):
    _namespace(result_tree)
    (result_tree / "purge/nvme-format").mkdir(parents=True)
    (result_tree / "purge/nvme-format/stdout.log").write_text("Success formatting namespace:1\n")
    call_command("import_results", str(result_tree), "--format", "py-sss-pts", "--json")
    capsys.readouterr()
    run = TestRun.objects.get()
    assert run.purge_method == "nvme format" and "purge_method" not in run.missing
    assert run.evidence["purge_method"].startswith("purge/nvme-format/")
    flagged = Flag.objects.filter(kind="unwritten_data").select_related("measurement")
    # no wipc, and 15 one-minute cells write far less than the 600 GB range: every read met mostly unwritten blocks
    assert {f.measurement.raw_file for f in flagged} == {m.raw_file for m in Measurement.objects.filter(read_pct__gt=0)}


def test_the_write_cache_is_read_from_the_set_feature_reply(db, result_tree, capsys):
    (result_tree / "pre-conditioning/nvme-set-feature").mkdir(parents=True)
    (result_tree / "pre-conditioning/nvme-set-feature/stdout.log").write_text(
        "set-feature:0x06 (Volatile Write Cache), value:0x00000001, cdw12:0x00000000, save:0\n"
    )
    call_command("import_results", str(result_tree), "--format", "py-sss-pts", "--json")
    capsys.readouterr()
    run = TestRun.objects.get()
    assert run.write_cache == "enabled" and "write_cache" not in run.missing
    assert run.evidence["write_cache"].startswith("pre-conditioning/nvme-set-feature/stdout.log: set-feature:0x06")


def test_the_host_is_read_from_the_saved_lshw_output(db, result_tree, shared_samples, capsys):
    (result_tree / "platform/lshw").mkdir(parents=True)
    sample = shared_samples / "lshw/Manouchehri__dl360p__lshw.json"
    shutil.copyfile(sample, result_tree / "platform/lshw/stdout.log")
    call_command("import_results", str(result_tree), "--format", "py-sss-pts", "--json")
    capsys.readouterr()
    run = TestRun.objects.get()
    expected = parse_lshw(sample.read_text())
    assert run.host.cpu_model == expected["cpu_model"] and run.host.cpu_model
    assert run.host.memory_bytes == expected["memory_bytes"] and run.host.cpu_count == expected["cpu_threads"]
    assert run.evidence["host.cpu_model"] == "platform/lshw/stdout.log (lshw -json)"
    assert run.host.kernel == "" and "no kernel release" in run.host.missing["kernel"]


def test_without_lshw_output_the_host_is_unknown_with_the_reason(db, result_tree, capsys):
    call_command("import_results", str(result_tree), "--format", "py-sss-pts", "--json")
    capsys.readouterr()
    host = TestRun.objects.get().host
    assert host.cpu_model == "" and host.missing["cpu_model"] == "platform/lshw/stdout.log is not in the directory"
