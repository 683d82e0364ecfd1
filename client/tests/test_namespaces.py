"""A purge never erases a namespace nobody pointed at: which namespaces a Format (FNA bit 0) or a Sanitize erases,
from a fake sysfs laid out like the kernel's and from `nvme list` outputs with several namespaces, and the refusals
applied to each of them."""

import os
from pathlib import Path

import pytest

from fake_system import FakeSystem
from nvmedb_client import namespaces, safety

FIXTURES = Path(__file__).parent / "fixtures" / "nvme-cli"
TWO_NAMESPACES = (FIXTURES / "nvme-list-1.16-two-namespaces.json").read_text()
DUAL_CONTROLLER = (FIXTURES / "nvme-list-2.11-dual-controller.json").read_text()
SINGLE_2_11 = "nvme-cli/netdata__netdata__src__go__plugin__go.d__collector__nvme__testdata__v2.11__nvme-list.json"
SINGLE_1_X = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-list.json"


@pytest.fixture
def system(tmp_path):
    """A dual-port drive: controller nvme0 with namespaces 1 and 2, controller nvme1 with namespace 3, one subsystem;
    and a second drive nvme2 on its own."""
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("nvme0n1", devnum="259:0", controller="nvme0")
    fake.add_disk("nvme0n2", devnum="259:1", controller="nvme0", partitions={"nvme0n2p1": "259:2"})
    fake.add_disk("nvme1n3", devnum="259:3", controller="nvme1", pci_path=("0000:00:1d.0", "0000:3c:00.0"))
    fake.add_disk("nvme2n1", devnum="259:4", controller="nvme2", pci_path=("0000:00:1c.0", "0000:5e:00.0"))
    fake.add_subsystem("nvme-subsys0", ["nvme0", "nvme1"])
    fake.add_subsystem("nvme-subsys2", ["nvme2"])
    return fake


def test_sysfs_shows_what_each_scope_erases(system):
    root = system.root
    assert safety.namespaces_erased_with("/dev/nvme0n1", "namespace", root=root) == ["nvme0n1"]
    assert safety.namespaces_erased_with("/dev/nvme0n1", "controller", root=root) == ["nvme0n1", "nvme0n2"]
    assert safety.namespaces_erased_with("/dev/nvme0n1", "subsystem", root=root) == ["nvme0n1", "nvme0n2", "nvme1n3"]
    assert safety.namespaces_erased_with("/dev/nvme2n1", "subsystem", root=root) == ["nvme2n1"]


def test_without_the_subsystem_class_a_sanitize_scope_is_unknown(tmp_path):
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("nvme0n1", devnum="259:0")
    assert safety.namespaces_erased_with("/dev/nvme0n1", "subsystem", root=fake.root) is None
    assert safety.namespaces_erased_with("/dev/nvme0n1", "controller", root=fake.root) == ["nvme0n1"]


def test_nvme_list_adds_namespaces_with_the_same_serial():
    assert namespaces.listed_namespaces(TWO_NAMESPACES, "nvme0n1", "subsystem") == {"nvme0n1", "nvme0n2"}
    # the 1.x flat list does not say which controller: every namespace of the subsystem counts
    assert namespaces.listed_namespaces(TWO_NAMESPACES, "nvme0n1", "controller") == {"nvme0n1", "nvme0n2"}
    assert namespaces.listed_namespaces(DUAL_CONTROLLER, "nvme0n1", "subsystem") == {"nvme0n1", "nvme0n2", "nvme1n3"}
    assert namespaces.listed_namespaces(DUAL_CONTROLLER, "nvme0n1", "controller") == {"nvme0n1", "nvme0n2"}


def test_real_single_namespace_lists_add_nothing(shared_samples):
    for sample in (SINGLE_2_11, SINGLE_1_X):
        text = (shared_samples / sample).read_text()
        assert namespaces.listed_namespaces(text, "nvme1n1", "subsystem") == {"nvme1n1"}


def test_a_namespace_only_nvme_list_shows_is_still_counted(tmp_path):
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("nvme0n1", devnum="259:0")
    names = namespaces.erased_namespaces("/dev/nvme0n1", "controller", root=fake.root, list_text=TWO_NAMESPACES)
    assert names == ["nvme0n1", "nvme0n2"]


def test_a_wide_purge_needs_every_other_namespace_confirmed(system):
    names, refusal = namespaces.erase_scope_check(
        "/dev/nvme0n1", "subsystem", confirmed=["nvme0n2"], root=system.root, list_text=DUAL_CONTROLLER
    )
    assert names == ["nvme0n1", "nvme0n2", "nvme1n3"]
    assert "a Sanitize erases every namespace" in refusal and "/dev/nvme1n3" in refusal
    _, refusal = namespaces.erase_scope_check(
        "/dev/nvme0n1", "subsystem", confirmed=["nvme0n2", "nvme1n3"], root=system.root, list_text=DUAL_CONTROLLER
    )
    assert refusal is None


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda s: s.mount("/dev/nvme0n2p1", "/data", devnum="259:2"), "nvme0n2p1 is mounted on /data"),
        (lambda s: s.mount("/dev/nvme0n2p1", "/", devnum="259:2"), "holds the root filesystem"),
        (lambda s: s.swap("/dev/nvme0n2p1"), "in use as swap"),
        (
            lambda s: (s.add_virtual("dm-0", devnum="253:0", dm_name="vg0-home"), s.hold("nvme0n2p1", "dm-0")),
            "dm-0 (vg0-home)",
        ),
        (lambda s: (s.add_virtual("md0", devnum="9:0"), s.hold("nvme0n2", "md0")), "held by md0"),
    ],
)
def test_every_refusal_applies_to_the_other_namespaces_a_purge_erases(system, setup, reason):
    setup(system)
    everyone = ["nvme0n2", "nvme1n3"]
    for scope in ("controller", "subsystem"):
        _, refusal = namespaces.erase_scope_check(
            "/dev/nvme0n1", scope, confirmed=everyone, root=system.root, list_text=""
        )
        assert refusal is not None and reason in refusal and "/dev/nvme0n2" in refusal
    # the target itself is untouched by the other namespace's use: a per-namespace purge stays possible
    assert namespaces.erase_scope_check("/dev/nvme0n1", "namespace", confirmed=[], root=system.root) == (
        ["nvme0n1"],
        None,
    )


def test_the_bare_serial_confirms_only_the_target_and_serial_plus_count_confirms_the_others():
    others = ["nvme0n2", "nvme1n3"]
    assert safety.confirm_destruction("S4YNNE0N800123", "S4YNNE0N800123", others=others) == []
    assert safety.confirm_destruction("S4YNNE0N800123", " S4YNNE0N800123+2 ", others=others) == others
    with pytest.raises(safety.ConfirmationError, match="type S4YNNE0N800123\\+2"):
        safety.confirm_destruction("S4YNNE0N800123", "S4YNNE0N800123+1", others=others)
    with pytest.raises(safety.ConfirmationError, match="does not match"):
        safety.confirm_destruction("S4YNNE0N800123", "S4YNNE0N800124+2", others=others)


def test_a_multipath_head_is_erased_with_its_whole_subsystem(tmp_path):
    """Native NVMe multipath: /sys/class/block/nvme0n1 is a head under the subsystem, the controllers hold only the
    hidden paths (nvme0c0n1, nvme0c1n1); any scope wider than the namespace is the whole subsystem."""
    fake = FakeSystem(tmp_path / "root")
    fake.add_disk("nvme0c0n1", devnum="259:10", controller="nvme0")
    fake.add_disk("nvme0c1n1", devnum="259:11", controller="nvme1", pci_path=("0000:00:1d.0", "0000:3c:00.0"))
    fake.add_subsystem("nvme-subsys0", ["nvme0", "nvme1"])
    subsystem = fake.root / "sys/devices/virtual/nvme-subsystem/nvme-subsys0"
    for head, devnum in (("nvme0n1", "259:0"), ("nvme0n2", "259:1")):
        (subsystem / head / "holders").mkdir(parents=True)
        (subsystem / head / "dev").write_text(f"{devnum}\n")
        link = fake.root / "sys/class/block" / head
        link.symlink_to(os.path.relpath(subsystem / head, link.parent))
        (fake.root / "dev" / head).write_text("")
    for scope in ("controller", "subsystem"):
        assert safety.namespaces_erased_with("/dev/nvme0n1", scope, root=fake.root) == ["nvme0n1", "nvme0n2"]
    fake.mount("/dev/nvme0n2", "/home", devnum="259:1")
    _, refusal = namespaces.erase_scope_check(
        "/dev/nvme0n1", "controller", confirmed=["nvme0n2"], root=fake.root, list_text=""
    )
    assert "nvme0n2 is mounted on /home" in refusal
