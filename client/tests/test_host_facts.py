"""Host facts from /proc, /sys and /etc: a fake tree for the NVMe parts, the real machine for the rest."""

import os
from pathlib import Path

import pytest

from fake_system import FakeSystem
from nvmedb_client.system import host
from nvmedb_client.system.host import is_missing

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
physical id\t: 0
cpu cores\t: 32

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz
physical id\t: 1
cpu cores\t: 32
"""


@pytest.fixture
def system(tmp_path):
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("nvme0n1", devnum="259:0", pci_path=("0000:00:1d.0", "0000:3a:00.0", "0000:3b:00.0"), numa_node=1)
    root = fake.root
    (root / "proc/cpuinfo").write_text(CPUINFO)
    (root / "proc/meminfo").write_text("MemTotal:       263597704 kB\nMemFree:        1000 kB\n")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/ostype").write_text("Linux\n")
    (root / "proc/sys/kernel/osrelease").write_text("6.1.0-18-amd64\n")
    (root / "proc/sys/kernel/version").write_text("#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)\n")
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n')
    for module, params in {
        "nvme": {"poll_queues": "0", "io_queue_depth": "1024"},
        "nvme_core": {"multipath": "Y"},
    }.items():
        folder = root / "sys/module" / module / "parameters"
        folder.mkdir(parents=True)
        for name, value in params.items():
            (folder / name).write_text(value + "\n")
    for cpu, governor in (("cpu0", "performance"), ("cpu1", "performance")):
        (root / "sys/devices/system/cpu" / cpu / "cpufreq").mkdir(parents=True)
        (root / "sys/devices/system/cpu" / cpu / "cpufreq/scaling_governor").write_text(governor + "\n")
    return fake


def test_cpu_memory_kernel_and_distribution(system):
    facts = host.host_facts(root=system.root)
    assert facts["cpu"] == {
        "model": "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
        "logical_cpus": 2,
        "sockets": 2,
        "cores_per_socket": 32,
    }
    assert facts["memory_bytes"] == 263597704 * 1024
    assert facts["kernel"]["release"] == "6.1.0-18-amd64"
    assert is_missing(facts["kernel"]["machine"])  # only known for the live system, not guessed for a fake root
    assert facts["distribution"] == {
        "id": "debian",
        "version_id": "12",
        "pretty_name": "Debian GNU/Linux 12 (bookworm)",
    }
    assert facts["nvme_driver"] == {
        "nvme": {"io_queue_depth": "1024", "poll_queues": "0"},
        "nvme_core": {"multipath": "Y"},
    }
    assert facts["cpufreq_governor"] == "performance"


def test_mixed_governors_are_counted(system):
    (system.root / "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor").write_text("powersave\n")
    assert host.cpufreq_governor(root=system.root) == {"per_cpu_count": {"performance": 1, "powersave": 1}}


def test_the_pcie_path_runs_from_the_root_port_to_the_drive(system):
    assert host.pci_path("/dev/nvme0n1", root=system.root) == ["0000:00:1d.0", "0000:3a:00.0", "0000:3b:00.0"]
    assert host.numa_node("/dev/nvme0n1", root=system.root) == 1


def test_a_multipath_namespace_head_finds_its_controller(tmp_path):
    fake = FakeSystem(tmp_path / "root")
    controller = fake.root / "sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/nvme/nvme0"
    controller.mkdir(parents=True)
    head = fake.root / "sys/devices/virtual/nvme-subsystem/nvme-subsys0"
    head.mkdir(parents=True)
    (head / "nvme0").symlink_to(os.path.relpath(controller, head))
    (controller / "device").symlink_to("../..")  # nvme0/device -> the PCI function, as in sysfs
    (head / "nvme0n1").mkdir()
    (fake.root / "sys/block/nvme0n1").symlink_to(os.path.relpath(head / "nvme0n1", fake.root / "sys/block"))
    assert host.pci_path("/dev/nvme0n1", root=fake.root) == ["0000:00:01.1", "0000:01:00.0"]


def test_block_queue_settings(system):
    queue = host.block_queue("/dev/nvme0n1", root=system.root)
    assert queue["scheduler"] == "none"
    assert queue["schedulers_available"] == ["none", "mq-deadline"]
    assert queue["nr_requests"] == 1023
    assert queue["rotational"] is False
    assert (queue["logical_block_size"], queue["physical_block_size"]) == (512, 4096)


def test_what_the_machine_lacks_is_missing_with_a_reason(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    facts = host.host_facts(root=empty)
    assert "proc/cpuinfo does not exist" in facts["cpu"]["missing"]
    assert is_missing(facts["memory_bytes"])
    assert "os-release" in facts["distribution"]["missing"]
    assert "nvme module is not loaded" in facts["nvme_driver"]["nvme"]["missing"]
    assert "no CPU frequency scaling" in facts["cpufreq_governor"]["missing"]
    assert "does not exist" in host.pci_path("/dev/nvme0n1", root=empty)["missing"]
    assert is_missing(host.block_queue("/dev/nvme0n1", root=empty))


def test_a_disk_outside_pci_has_no_pcie_path(system):
    system.add_virtual("loop0", devnum="7:0")
    assert "not behind a PCI device" in host.pci_path("/dev/loop0", root=system.root)["missing"]


def test_the_real_machine_reports_its_cpu_and_memory():
    facts = host.host_facts()
    with open("/proc/cpuinfo") as handle:
        processors = sum(1 for line in handle if line.startswith("processor"))
    assert facts["cpu"]["logical_cpus"] == processors
    assert facts["memory_bytes"] == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert facts["kernel"]["release"] == os.uname().release
    assert facts["kernel"]["machine"] == os.uname().machine
    assert Path("/etc/os-release").exists() == (not is_missing(facts["distribution"]))
