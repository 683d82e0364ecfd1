"""Refuse targets whose destruction would surprise anyone, before a single byte is written.

`check_device_safe` reads what the kernel says about a block device — /proc/self/mounts and mountinfo, /proc/swaps,
/sys/class/block — relative to `root`, so tests build those files under a temporary directory. Each refusal is an
`UnsafeTargetError` whose message names the reason. There is no override for the disk that holds the root filesystem.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from nvmedb_client import units

MIN_FILE_TARGET_BYTES = 16 * 1024**2
_NVME_NAMESPACE = re.compile(r"^nvme\d+n\d+$")
_CONTROLLER = re.compile(r"^nvme\d+$")
_SUBSYSTEM = re.compile(r"^nvme-subsys\d+$")


class SafetyError(Exception):
    """A precondition of a destructive run is not met; the message says what to do."""


class UnsafeTargetError(SafetyError):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class NotRootError(SafetyError):
    pass


class MissingToolError(SafetyError):
    pass


class ConfirmationError(SafetyError):
    pass


@dataclass(frozen=True)
class _Mount:
    source: str
    mount_point: str
    devnum: str | None  # "major:minor" from mountinfo


def check_device_safe(device: str, *, root: Path = Path("/")) -> None:
    """Raise UnsafeTargetError unless `device` is an unused NVMe namespace that may be overwritten."""
    path = _under(root, device)
    if not os.path.lexists(path):
        raise UnsafeTargetError(f"{device} does not exist.")
    name = Path(os.path.realpath(path)).name
    sys_block = _under(root, "/sys/class/block") / name
    if not sys_block.exists():
        raise UnsafeTargetError(f"{device} is not a block device known to the kernel (no /sys/class/block/{name}).")
    if (sys_block / "partition").exists():
        raise UnsafeTargetError(f"{device} is a partition; give the whole NVMe namespace (for example /dev/nvme0n1).")

    _refuse_if_in_use(root, device, name)

    if not _NVME_NAMESPACE.match(name):
        raise UnsafeTargetError(f"{device} ({name}) is not an NVMe namespace; give one like /dev/nvme0n1.")
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise UnsafeTargetError(f"{device} cannot be examined: {exc.strerror}.") from exc
    if not stat.S_ISBLK(mode):
        raise UnsafeTargetError(f"{device} is not a block device.")


def _refuse_if_in_use(root: Path, device: str, name: str) -> None:
    """UnsafeTargetError when block device `name` (or a partition of it, or what is built on those) is mounted,
    holds the root filesystem, is swap or is a RAID, LVM or device-mapper member."""
    sys_block = _under(root, "/sys/class/block") / name
    partitions = sorted(child.name for child in _dir_entries(sys_block) if (child / "partition").exists())
    family = {name, *partitions}
    users = _holders_recursive(root, family)  # dm/md devices built on the device, and what is built on those
    numbers = {_devnum(root, member): member for member in family | users}
    numbers.pop(None, None)

    for mount in _mounts(root):
        member = _match_source(root, mount, family | users, numbers)
        if member is None:
            continue
        if mount.mount_point == "/":
            raise UnsafeTargetError(
                f"{device} holds the root filesystem (through {member}); it can never be a test target."
            )
        raise UnsafeTargetError(f"{device} is mounted: {member} is mounted on {mount.mount_point}.")

    for swap in _swaps(root):
        swap_name = Path(os.path.realpath(_under(root, swap))).name
        if swap_name in family | users:
            raise UnsafeTargetError(f"{device} is in use as swap ({swap}); run `swapoff {swap}` first if it is spare.")

    for member in sorted(family):
        holders = sorted(holder.name for holder in _dir_entries(_under(root, "/sys/class/block") / member / "holders"))
        if holders:
            described = ", ".join(_describe_holder(root, holder) for holder in holders)
            raise UnsafeTargetError(
                f"{device} is a member of a RAID, LVM or device-mapper device: {member} is held by {described}."
            )


def check_file_target(path: Path, size_bytes: int, *, min_size_bytes: int = MIN_FILE_TARGET_BYTES) -> None:
    """Raise UnsafeTargetError unless a test file of `size_bytes` can be created or reused at `path`."""
    path = Path(path)
    if size_bytes < min_size_bytes:
        raise UnsafeTargetError(
            f"The target file size {_human(size_bytes)} is below the minimum of {_human(min_size_bytes)}."
        )
    if os.path.lexists(path):
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise UnsafeTargetError(f"{path} cannot be examined: {exc.strerror}.") from exc
        if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
            kind = "a symlink to a device" if path.is_symlink() else "a device"
            raise UnsafeTargetError(f"{path} is {kind}; --target-file needs a regular file (use --device for drives).")
        if not stat.S_ISREG(mode):
            raise UnsafeTargetError(f"{path} exists and is not a regular file.")
    parent = path.parent
    if not parent.is_dir():
        raise UnsafeTargetError(f"The folder {parent} does not exist; create it first.")
    reusable = path.stat().st_blocks * 512 if path.is_file() else 0
    free = shutil.disk_usage(parent).free
    if free + reusable < size_bytes:
        raise UnsafeTargetError(
            f"Not enough free space for the target file: it needs {_human(size_bytes)} but the filesystem of "
            f"{parent} has {_human(free + reusable)} available."
        )


def namespaces_erased_with(device: str, scope: str, *, root: Path = Path("/")) -> list[str] | None:
    """The NVMe namespaces (block device names, `device` included) that a command of `scope` erases, from sysfs.

    scope "namespace": the device alone; "controller" (a Format with FNA bit 0 set): every namespace attached to the
    device's controller; "subsystem" (a Sanitize): every namespace of every controller of its NVM subsystem.
    None when sysfs does not show the relation, so the caller can refuse the command instead of guessing."""
    name = Path(os.path.realpath(_under(root, device))).name
    disk = Path(os.path.realpath(_under(root, "/sys/class/block") / name))
    if scope == "namespace":
        return [name]
    parent = disk.parent
    if _SUBSYSTEM.match(parent.name):  # a multipath head: every path's controller may apply the command
        subsystem: Path | None = parent
    elif _CONTROLLER.match(parent.name):
        subsystem = _subsystem_of(root, parent.name)
        if scope == "controller":
            return sorted(_namespaces_in(parent) | {name})
    else:
        return None
    if subsystem is None:
        return None
    found = _namespaces_in(subsystem) | {name}
    for controller in _dir_entries(subsystem):
        if _CONTROLLER.match(controller.name):
            found |= _namespaces_in(Path(os.path.realpath(controller)))
    return sorted(found)


def namespace_refusals(names: list[str], *, root: Path = Path("/")) -> dict[str, str]:
    """For each namespace that is in use (mounted, root, swap, RAID/LVM/dm member), why it may not be erased."""
    refusals = {}
    for name in names:
        try:
            _refuse_if_in_use(root, f"/dev/{name}", name)
        except UnsafeTargetError as exc:
            refusals[name] = exc.reason
    return refusals


def _subsystem_of(root: Path, controller: str) -> Path | None:
    for subsystem in _dir_entries(_under(root, "/sys/class/nvme-subsystem")):
        if (subsystem / controller).exists():
            return Path(os.path.realpath(subsystem))
    return None


def _namespaces_in(directory: Path) -> set[str]:
    return {child.name for child in _dir_entries(directory) if _NVME_NAMESPACE.match(child.name)}


def require_root() -> None:
    if os.geteuid() != 0:
        raise NotRootError("Testing a device needs root (the client sends NVMe admin commands); run it with sudo.")


def require_tool(name: str) -> str:
    """The full path of program `name`, or MissingToolError saying how to get it."""
    found = shutil.which(name)
    if found is None:
        hint = {"fio": "fio", "nvme": "nvme-cli", "lspci": "pciutils", "lshw": "lshw"}.get(name, name)
        raise MissingToolError(f"{name} is not installed (not found on PATH); install the {hint} package.")
    return found


def confirm_destruction(serial_expected: str | None, typed: str | None, *, others: list[str] = ()) -> list[str]:
    """Raise ConfirmationError unless the operator typed the drive's serial number exactly (surrounding spaces aside).

    When a purge could also erase `others` (namespaces sharing the controller or subsystem), `SERIAL+N` (N their
    number) confirms them too and returns them; the bare serial confirms the target alone and returns []."""
    expected = (serial_expected or "").strip()
    if not expected:
        raise ConfirmationError("The drive reports no serial number, so destruction cannot be confirmed.")
    given = (typed or "").strip()
    if given == expected:
        return []
    if others and re.fullmatch(rf"{re.escape(expected)}\s*\+\s*{len(others)}", given):
        return list(others)
    if others and given.startswith(expected) and "+" in given:
        raise ConfirmationError(
            f"{given} does not confirm the {len(others)} other namespaces the purge would erase "
            f"({', '.join('/dev/' + name for name in others)}): type {expected}+{len(others)}; nothing was written."
        )
    raise ConfirmationError(
        f"The serial number typed ({given or 'nothing'}) does not match the drive's ({expected}); nothing was written."
    )


def _under(root: Path, path: str) -> Path:
    return Path(root).joinpath(str(path).lstrip("/"))


def _dir_entries(directory: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError:
        return []


def _holders_recursive(root: Path, names: set[str]) -> set[str]:
    found: set[str] = set()
    pending = list(names)
    while pending:
        current = pending.pop()
        for holder in _dir_entries(_under(root, "/sys/class/block") / current / "holders"):
            if holder.name not in found and holder.name not in names:
                found.add(holder.name)
                pending.append(holder.name)
    return found


def _describe_holder(root: Path, holder: str) -> str:
    dm_name = _under(root, "/sys/class/block") / holder / "dm" / "name"
    try:
        return f"{holder} ({dm_name.read_text().strip()})"
    except OSError:
        return holder


def _devnum(root: Path, name: str) -> str | None:
    try:
        return (_under(root, "/sys/class/block") / name / "dev").read_text().strip() or None
    except OSError:
        return None


def _mounts(root: Path) -> list[_Mount]:
    mounts: list[_Mount] = []
    try:
        for line in _under(root, "/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            if " - " not in line or len(fields) < 5:
                continue
            after = line.split(" - ", 1)[1].split()
            source = _unescape(after[1]) if len(after) > 1 else ""
            mounts.append(_Mount(source, _unescape(fields[4]), fields[2]))
    except OSError:
        pass
    try:
        for line in _under(root, "/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) >= 2:
                mounts.append(_Mount(_unescape(fields[0]), _unescape(fields[1]), None))
    except OSError:
        pass
    return mounts


def _match_source(root: Path, mount: _Mount, names: set[str], numbers: dict[str, str]) -> str | None:
    if mount.devnum and mount.devnum in numbers:
        return numbers[mount.devnum]
    if mount.source.startswith("/"):
        resolved = Path(os.path.realpath(_under(root, mount.source))).name
        if resolved in names:
            return resolved
    return None


def _swaps(root: Path) -> list[str]:
    try:
        lines = _under(root, "/proc/swaps").read_text().splitlines()
    except OSError:
        return []
    return [_unescape(line.split()[0]) for line in lines[1:] if line.split()]


def _unescape(text: str) -> str:
    # /proc escapes space, tab, newline and backslash in paths as octal (\040 ...).
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), text)


def _human(size: int) -> str:
    return units.size_both(size)
