"""Facts about the host read from /proc, /sys and /etc, relative to `root` so tests can point at a fake tree.

Each function returns plain values; a fact the machine does not provide is a `{"missing": "<reason>"}` dict (see
`missing`), never a guess.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def missing(reason: str) -> dict[str, str]:
    return {"missing": reason}


def is_missing(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"missing"}


def _read(path: Path) -> str | dict[str, str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except FileNotFoundError:
        return missing(f"{path} does not exist")
    except PermissionError:
        return missing(f"{path} is not readable (permission denied; not root?)")
    except OSError as exc:
        return missing(f"{path} could not be read: {exc.strerror or exc}")


def _sys(root: Path, *parts: str) -> Path:
    return root.joinpath(*(part.lstrip("/") for part in parts))


def cpu_info(*, root: Path = Path("/")) -> dict[str, Any]:
    """Model, logical CPU count, sockets and cores per socket from /proc/cpuinfo."""
    text = _read(_sys(root, "proc/cpuinfo"))
    if is_missing(text):
        return text
    blocks = [block for block in re.split(r"\n\s*\n", text) if block.strip()]
    entries = [dict(_key_values(block)) for block in blocks]
    processors = [entry for entry in entries if "processor" in entry and entry["processor"].isdigit()]
    models = sorted({entry.get("model name") or entry.get("cpu model") or "" for entry in processors} - {""})
    sockets = {entry["physical id"] for entry in processors if "physical id" in entry}
    cores = {entry["cpu cores"] for entry in processors if "cpu cores" in entry}
    result: dict[str, Any] = {
        "model": "; ".join(models) if models else missing("/proc/cpuinfo has no 'model name'"),
        "logical_cpus": len(processors) if processors else missing("/proc/cpuinfo lists no processor"),
        "sockets": len(sockets) if sockets else missing("/proc/cpuinfo has no 'physical id'"),
        "cores_per_socket": int(next(iter(cores))) if len(cores) == 1 else missing("/proc/cpuinfo has no 'cpu cores'"),
    }
    return result


def _key_values(block: str) -> list[tuple[str, str]]:
    pairs = []
    for line in block.splitlines():
        if ":" in line:
            key, _, value = line.partition(":")
            pairs.append((key.strip(), value.strip()))
    return pairs


def memory_bytes(*, root: Path = Path("/")) -> int | dict[str, str]:
    text = _read(_sys(root, "proc/meminfo"))
    if is_missing(text):
        return text
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else missing("/proc/meminfo has no MemTotal line")


def kernel(*, root: Path = Path("/")) -> dict[str, Any]:
    """What `uname -srv` says, from /proc/sys/kernel (plus the machine type on the live system)."""
    result: dict[str, Any] = {
        "name": _read(_sys(root, "proc/sys/kernel/ostype")),
        "release": _read(_sys(root, "proc/sys/kernel/osrelease")),
        "version": _read(_sys(root, "proc/sys/kernel/version")),
    }
    if root == Path("/"):
        result["machine"] = os.uname().machine
    else:
        result["machine"] = missing("the machine type is only known for the live system")
    return result


def distribution(*, root: Path = Path("/")) -> dict[str, Any]:
    """ID, VERSION_ID and PRETTY_NAME from os-release (/etc/os-release, else /usr/lib/os-release)."""
    for candidate in ("etc/os-release", "usr/lib/os-release"):
        text = _read(_sys(root, candidate))
        if not is_missing(text):
            values = {}
            for line in text.splitlines():
                match = re.match(r"^([A-Z_][A-Z0-9_]*)=(.*)$", line.strip())
                if match:
                    values[match.group(1)] = match.group(2).strip().strip("\"'")
            return {
                "id": values.get("ID") or missing("os-release has no ID"),
                "version_id": values.get("VERSION_ID") or missing("os-release has no VERSION_ID"),
                "pretty_name": values.get("PRETTY_NAME") or missing("os-release has no PRETTY_NAME"),
            }
    return missing("neither /etc/os-release nor /usr/lib/os-release exists")


def nvme_driver_params(*, root: Path = Path("/")) -> dict[str, Any]:
    """Every parameter of the nvme and nvme_core kernel modules (/sys/module/<module>/parameters/*)."""
    result: dict[str, Any] = {}
    for module in ("nvme", "nvme_core"):
        directory = _sys(root, "sys/module", module, "parameters")
        if not directory.is_dir():
            result[module] = missing(f"the {module} module is not loaded ({directory} does not exist)")
            continue
        result[module] = {path.name: _read(path) for path in sorted(directory.iterdir()) if path.is_file()}
    return result


def block_name(device: str, *, root: Path = Path("/")) -> str:
    """The kernel name of a block device path: "/dev/disk/by-id/nvme-..." or "/dev/nvme0n1" -> "nvme0n1"."""
    path = _sys(root, device) if device.startswith("/") else _sys(root, "dev", device)
    return Path(os.path.realpath(path)).name


def block_queue(device: str, *, root: Path = Path("/")) -> dict[str, Any]:
    """The request queue settings of a block device (/sys/block/<name>/queue)."""
    name = block_name(device, root=root)
    queue = _sys(root, "sys/block", name, "queue")
    if not queue.is_dir():
        return missing(f"{queue} does not exist ({name} is not a whole block device known to the kernel)")
    scheduler = _read(queue / "scheduler")
    result: dict[str, Any] = {}
    if is_missing(scheduler):
        result["scheduler"] = scheduler
        result["schedulers_available"] = scheduler
    else:
        active = re.search(r"\[([^\]]+)\]", scheduler)
        result["scheduler"] = active.group(1) if active else scheduler or missing("empty scheduler file")
        result["schedulers_available"] = scheduler.replace("[", "").replace("]", "").split()
    for key in (
        "nr_requests",
        "logical_block_size",
        "physical_block_size",
        "max_sectors_kb",
        "read_ahead_kb",
        "nomerges",
        "rq_affinity",
    ):
        result[key] = _int_or_missing(_read(queue / key))
    rotational = _int_or_missing(_read(queue / "rotational"))
    result["rotational"] = rotational if is_missing(rotational) else bool(rotational)
    result["write_cache"] = _read(queue / "write_cache")
    return result


def _int_or_missing(value: str | dict[str, str]) -> int | dict[str, str]:
    if is_missing(value):
        return value
    try:
        return int(value)
    except ValueError:
        return missing(f"not an integer: {value!r}")


def cpufreq_governor(*, root: Path = Path("/")) -> dict[str, Any] | str:
    """The scaling governor; when CPUs differ, the count of CPUs per governor."""
    cpus = sorted(_sys(root, "sys/devices/system/cpu").glob("cpu[0-9]*"))
    governors: dict[str, int] = {}
    for cpu in cpus:
        value = _read(cpu / "cpufreq" / "scaling_governor")
        if not is_missing(value):
            governors[value] = governors.get(value, 0) + 1
    if not governors:
        return missing("no CPU frequency scaling (no /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)")
    if len(governors) == 1:
        return next(iter(governors))
    return {"per_cpu_count": governors}


def pci_path(device: str, *, root: Path = Path("/")) -> list[str] | dict[str, str]:
    """The PCI addresses from the root port down to the NVMe controller behind a block device.

    sysfs places a device under its parents: /sys/block/nvme0n1 resolves to
    /sys/devices/pci0000:00/0000:00:1d.0/0000:3b:00.0/nvme/nvme0/nvme0n1, so the PCI addresses in that path are the
    bridges and the endpoint, root port first. A multipath namespace head lives under a virtual nvme-subsystem; its
    controllers (…/nvme-subsys0/nvme0/device) lead to the PCI device.
    """
    name = block_name(device, root=root)
    block = _sys(root, "sys/block", name)
    if not block.exists():
        return missing(f"{block} does not exist (no block device named {name})")
    candidates = [block, block / "device"]
    subsystem = Path(os.path.realpath(block)).parent
    candidates += sorted(subsystem.glob("nvme[0-9]*/device"))
    for candidate in candidates:
        resolved = Path(os.path.realpath(candidate))
        addresses = [part for part in resolved.parts if _PCI_ADDRESS.match(part)]
        if addresses:
            return addresses
    return missing(f"{name} is not behind a PCI device (no PCI address in its sysfs path)")


def numa_node(device: str, *, root: Path = Path("/")) -> int | dict[str, str]:
    """The NUMA node of the PCI device behind a block device (-1: the platform reports none)."""
    path = pci_path(device, root=root)
    if is_missing(path):
        return path
    value = _read(_sys(root, "sys/bus/pci/devices", path[-1], "numa_node"))
    return _int_or_missing(value)


def is_root() -> bool:
    return os.geteuid() == 0


def host_facts(*, root: Path = Path("/")) -> dict[str, Any]:
    """Every host-wide fact (nothing about a particular device)."""
    return {
        "cpu": cpu_info(root=root),
        "memory_bytes": memory_bytes(root=root),
        "kernel": kernel(root=root),
        "distribution": distribution(root=root),
        "nvme_driver": nvme_driver_params(root=root),
        "cpufreq_governor": cpufreq_governor(root=root),
    }


def device_facts(device: str, *, root: Path = Path("/")) -> dict[str, Any]:
    """Facts about one block device: its queue settings, PCI path and NUMA node."""
    return {
        "block_name": block_name(device, root=root),
        "block_queue": block_queue(device, root=root),
        "pci_path": pci_path(device, root=root),
        "numa_node": numa_node(device, root=root),
    }
