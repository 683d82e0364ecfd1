"""A fake /proc, /sys and /dev under a temporary folder, laid out the way the kernel lays them out.

The client reads these files (relative to a `root` parameter) to decide what a device is and whether it is in use;
building them is how the tests simulate mounts, swap, holders and PCIe paths that cannot exist on a CI machine.
Symlinks are relative, as in the real sysfs, so they resolve inside the fake tree.
"""

from __future__ import annotations

import os
from pathlib import Path


class FakeSystem:
    def __init__(self, root: Path):
        self.root = root
        self.mount_lines: list[str] = []
        self.mountinfo_lines: list[str] = []
        self.swap_lines: list[str] = []
        (root / "dev").mkdir(parents=True, exist_ok=True)
        (root / "proc/self").mkdir(parents=True, exist_ok=True)
        for folder in ("sys/block", "sys/class/block", "sys/bus/pci/devices", "sys/devices/virtual/block"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        self._write_proc()

    def add_disk(
        self,
        name: str,
        *,
        devnum: str,
        pci_path: tuple[str, ...] | None = ("0000:00:1d.0", "0000:3b:00.0"),
        controller: str = "nvme0",
        partitions: dict[str, str] | None = None,
        numa_node: int = 0,
        scheduler: str = "[none] mq-deadline",
        nr_requests: int = 1023,
    ) -> Path:
        """A whole disk (with partitions "name": "major:minor"), under the PCI bridges in `pci_path`."""
        if pci_path:
            pci_dir = self.root / "sys/devices" / f"pci{pci_path[0][:7]}"
            for address in pci_path:
                pci_dir = pci_dir / address
                pci_dir.mkdir(parents=True, exist_ok=True)
                (pci_dir / "numa_node").write_text(f"{numa_node}\n")
                link = self.root / "sys/bus/pci/devices" / address
                if not link.is_symlink():
                    link.symlink_to(os.path.relpath(pci_dir, link.parent))
            disk_dir = pci_dir / "nvme" / controller / name
        else:
            disk_dir = self.root / "sys/devices/virtual/block" / name
        disk_dir.mkdir(parents=True)
        (disk_dir / "dev").write_text(f"{devnum}\n")
        (disk_dir / "holders").mkdir()
        queue = disk_dir / "queue"
        queue.mkdir()
        for key, value in {
            "scheduler": scheduler,
            "nr_requests": nr_requests,
            "rotational": 0,
            "logical_block_size": 512,
            "physical_block_size": 4096,
            "max_sectors_kb": 128,
            "read_ahead_kb": 128,
            "nomerges": 0,
            "rq_affinity": 1,
            "write_cache": "write back",
        }.items():
            (queue / key).write_text(f"{value}\n")
        self._link_block(name, disk_dir, whole=True)
        for part, part_devnum in (partitions or {}).items():
            part_dir = disk_dir / part
            part_dir.mkdir()
            (part_dir / "partition").write_text("1\n")
            (part_dir / "dev").write_text(f"{part_devnum}\n")
            (part_dir / "holders").mkdir()
            self._link_block(part, part_dir, whole=False)
        return disk_dir

    def add_subsystem(self, name: str, controllers: list[str]) -> None:
        """/sys/class/nvme-subsystem/<name>/<controller> links, as the kernel shows the controllers of a subsystem;
        each controller is found from one of its namespaces added with add_disk(controller=...)."""
        directory = self.root / "sys/devices/virtual/nvme-subsystem" / name
        directory.mkdir(parents=True)
        link = self.root / "sys/class/nvme-subsystem" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(directory, link.parent))
        for controller in controllers:
            found = next(p for p in self.root.joinpath("sys/devices").rglob(controller) if p.parent.name == "nvme")
            (directory / controller).symlink_to(os.path.relpath(found, directory))

    def add_virtual(self, name: str, *, devnum: str, dm_name: str | None = None) -> Path:
        """A dm-* or md* device (no PCI parent)."""
        directory = self.root / "sys/devices/virtual/block" / name
        directory.mkdir(parents=True)
        (directory / "dev").write_text(f"{devnum}\n")
        (directory / "holders").mkdir()
        if dm_name:
            (directory / "dm").mkdir()
            (directory / "dm" / "name").write_text(f"{dm_name}\n")
        self._link_block(name, directory, whole=True)
        return directory

    def hold(self, member: str, holder: str) -> None:
        """`holder` (dm-0, md0) is built on `member`, as /sys/class/block/<member>/holders/<holder> shows."""
        holders = Path(os.path.realpath(self.root / "sys/class/block" / member)) / "holders"
        target = Path(os.path.realpath(self.root / "sys/class/block" / holder))
        (holders / holder).symlink_to(os.path.relpath(target, holders))

    def mount(self, source: str, mount_point: str, *, devnum: str | None = None, fstype: str = "ext4") -> None:
        self.mount_lines.append(f"{source} {mount_point} {fstype} rw,relatime 0 0")
        if devnum:
            index = 20 + len(self.mountinfo_lines)
            self.mountinfo_lines.append(
                f"{index} 1 {devnum} / {mount_point} rw,relatime shared:1 - {fstype} {source} rw"
            )
        self._write_proc()

    def swap(self, path: str) -> None:
        self.swap_lines.append(f"{path}\t\t\t\tpartition\t8388604\t\t0\t\t-2")
        self._write_proc()

    def _link_block(self, name: str, directory: Path, *, whole: bool) -> None:
        for folder in (["sys/block"] if whole else []) + ["sys/class/block"]:
            link = self.root / folder / name
            link.symlink_to(os.path.relpath(directory, link.parent))
        (self.root / "dev" / name).write_text("")  # a regular file: real device nodes need root to create

    def _write_proc(self) -> None:
        (self.root / "proc/self/mounts").write_text("".join(f"{line}\n" for line in self.mount_lines))
        (self.root / "proc/self/mountinfo").write_text("".join(f"{line}\n" for line in self.mountinfo_lines))
        header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        (self.root / "proc/swaps").write_text(header + "".join(f"{line}\n" for line in self.swap_lines))
