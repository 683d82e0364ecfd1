"""The client refuses every target whose destruction would surprise someone, naming the reason.

Mounts, swap and holders are simulated through the files the client reads (/proc/self/mounts, mountinfo, /proc/swaps,
/sys/class/block), built under tmp_path.
"""

import os
import stat
from pathlib import Path

import pytest

from fake_system import FakeSystem
from nvmedb_client import safety
from nvmedb_client.safety import (
    ConfirmationError,
    MissingToolError,
    NotRootError,
    UnsafeTargetError,
    check_device_safe,
    check_file_target,
    confirm_destruction,
    require_root,
    require_tool,
)


@pytest.fixture
def system(tmp_path):
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("vda", devnum="254:0", pci_path=("0000:00:02.0",), controller="virtio1")
    fake.add_disk("nvme0n1", devnum="259:0", partitions={"nvme0n1p1": "259:1", "nvme0n1p2": "259:2"})
    fake.mount("/dev/vda", "/", devnum="254:0")
    return fake


def _refusal(device, system):
    with pytest.raises(UnsafeTargetError) as caught:
        check_device_safe(device, root=system.root)
    return str(caught.value)


def test_an_unused_namespace_passes_every_check_until_the_device_node(system):
    # The fake /dev entry is a regular file, so the last check (a real block device) is the one that refuses.
    assert _refusal("/dev/nvme0n1", system) == "/dev/nvme0n1 is not a block device."


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a block device node needs root")
def test_an_unused_namespace_with_a_real_device_node_is_accepted(system):
    node = system.root / "dev" / "nvme0n1"
    node.unlink()
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(259, 0))
    check_device_safe("/dev/nvme0n1", root=system.root)


def test_a_mounted_partition_is_refused(system):
    system.mount("/dev/nvme0n1p1", "/data")
    assert "is mounted: nvme0n1p1 is mounted on /data" in _refusal("/dev/nvme0n1", system)


def test_a_mount_is_found_by_major_minor_when_the_source_name_differs(system):
    system.mount("/dev/disk/by-label/scratch", "/scratch", devnum="259:2")
    assert "nvme0n1p2 is mounted on /scratch" in _refusal("/dev/nvme0n1", system)


def test_a_mount_is_found_through_a_symlink_to_the_device(system):
    by_id = system.root / "dev/disk/by-id"
    by_id.mkdir(parents=True)
    (by_id / "nvme-Samsung_SSD-part1").symlink_to("../../nvme0n1p1")
    system.mount("/dev/disk/by-id/nvme-Samsung_SSD-part1", "/mnt/x")
    assert "nvme0n1p1 is mounted on /mnt/x" in _refusal("/dev/nvme0n1", system)


def test_the_root_filesystem_disk_is_refused_without_override(system):
    system.mount("/dev/nvme0n1p2", "/", devnum="259:2")
    message = _refusal("/dev/nvme0n1", system)
    assert "holds the root filesystem" in message and "never" in message


def test_the_root_filesystem_is_found_under_lvm(system):
    system.add_virtual("dm-0", devnum="253:0", dm_name="vg0-root")
    system.hold("nvme0n1p2", "dm-0")
    system.mount("/dev/mapper/vg0-root", "/", devnum="253:0")
    assert "holds the root filesystem (through dm-0)" in _refusal("/dev/nvme0n1", system)


def test_active_swap_is_refused(system):
    system.swap("/dev/nvme0n1p2")
    assert "is in use as swap (/dev/nvme0n1p2)" in _refusal("/dev/nvme0n1", system)


def test_a_raid_or_lvm_member_is_refused_and_its_holder_named(system):
    system.add_virtual("md0", devnum="9:0")
    system.hold("nvme0n1", "md0")
    assert "member of a RAID, LVM or device-mapper device: nvme0n1 is held by md0" in _refusal("/dev/nvme0n1", system)


def test_a_device_mapper_holder_is_named_by_its_dm_name(system):
    system.add_virtual("dm-3", devnum="253:3", dm_name="crypt-data")
    system.hold("nvme0n1p1", "dm-3")
    assert "nvme0n1p1 is held by dm-3 (crypt-data)" in _refusal("/dev/nvme0n1", system)


def test_a_partition_is_refused(system):
    assert "is a partition" in _refusal("/dev/nvme0n1p1", system)


def test_a_disk_that_is_not_nvme_is_refused(system):
    system.add_disk("sdb", devnum="8:16", pci_path=("0000:00:17.0",), controller="ata1")
    assert "(sdb) is not an NVMe namespace" in _refusal("/dev/sdb", system)


def test_a_missing_device_and_an_unknown_one_are_refused(system):
    assert _refusal("/dev/nvme9n1", system) == "/dev/nvme9n1 does not exist."
    (system.root / "dev" / "random-file").write_text("")
    assert "not a block device known to the kernel" in _refusal("/dev/random-file", system)


def test_paths_in_proc_are_unescaped(system):
    system.mount("/dev/nvme0n1p1", "/mnt/my\\040disk")
    assert "mounted on /mnt/my disk" in _refusal("/dev/nvme0n1", system)


def test_the_real_machine_refuses_its_root_disk():
    # On the machine running the tests, whatever holds / must be refused (or is not a block device at all).
    mounts = Path("/proc/self/mounts").read_text().splitlines()
    root_source = next((line.split()[0] for line in mounts if line.split()[1:2] == ["/"]), None)
    if root_source is None or not root_source.startswith("/dev/") or not os.path.exists(root_source):
        pytest.skip(f"the root filesystem is not on a /dev device here ({root_source})")
    name = os.path.basename(os.path.realpath(root_source))
    sys_entry = os.path.realpath(f"/sys/class/block/{name}")
    disk = os.path.basename(os.path.dirname(sys_entry)) if os.path.exists(f"{sys_entry}/partition") else name
    with pytest.raises(UnsafeTargetError, match="holds the root filesystem"):
        check_device_safe(f"/dev/{disk}")


# file targets


def test_a_file_target_with_room_passes(tmp_path):
    check_file_target(tmp_path / "target.img", 32 * 1024**2)


def test_a_file_target_below_the_minimum_is_refused(tmp_path):
    with pytest.raises(UnsafeTargetError, match="below the minimum"):
        check_file_target(tmp_path / "target.img", 1024)


def test_a_file_target_larger_than_the_free_space_is_refused(tmp_path):
    free = safety.shutil.disk_usage(tmp_path).free
    with pytest.raises(UnsafeTargetError, match="Not enough free space.*needs .* but the filesystem of"):
        check_file_target(tmp_path / "target.img", free + 1024**3)


def test_a_file_target_in_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(UnsafeTargetError, match="does not exist; create it first"):
        check_file_target(tmp_path / "nowhere" / "target.img", 32 * 1024**2)


def test_a_device_or_a_symlink_to_one_is_refused_as_a_file_target(tmp_path):
    with pytest.raises(UnsafeTargetError, match="is a device"):
        check_file_target("/dev/null", 32 * 1024**2)
    link = tmp_path / "looks-like-a-file.img"
    link.symlink_to("/dev/null")
    with pytest.raises(UnsafeTargetError, match="is a symlink to a device"):
        check_file_target(link, 32 * 1024**2)


def test_a_directory_is_refused_as_a_file_target(tmp_path):
    (tmp_path / "folder").mkdir()
    with pytest.raises(UnsafeTargetError, match="not a regular file"):
        check_file_target(tmp_path / "folder", 32 * 1024**2)


# privileges, tools, confirmation


def test_require_root_explains_itself(monkeypatch):
    monkeypatch.setattr(safety.os, "geteuid", lambda: 1000)
    with pytest.raises(NotRootError, match="needs root"):
        require_root()
    monkeypatch.setattr(safety.os, "geteuid", lambda: 0)
    require_root()


def test_require_tool_finds_a_real_program_and_names_the_package_of_a_missing_one(monkeypatch):
    assert require_tool("sh").endswith("/sh")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(MissingToolError, match="nvme is not installed.*nvme-cli package"):
        require_tool("nvme")


def test_destruction_needs_the_exact_serial():
    confirm_destruction("S43ANA0M405593", "  S43ANA0M405593\n")
    with pytest.raises(ConfirmationError, match=r"typed \(S43ANA0M405594\) does not match"):
        confirm_destruction("S43ANA0M405593", "S43ANA0M405594")
    with pytest.raises(ConfirmationError, match="typed \\(nothing\\)"):
        confirm_destruction("S43ANA0M405593", "")
    with pytest.raises(ConfirmationError, match="no serial number"):
        confirm_destruction("   ", "   ")
