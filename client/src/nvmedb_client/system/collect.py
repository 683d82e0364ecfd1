"""Collect everything the dataset wants to know about the machine and the drive, without writing to the drive.

`collect_system` runs nvme-cli, lspci and lshw through `commands.run_command`, keeps each raw output in `out_dir`,
and writes `facts.json`: the parsed facts, where anything the machine cannot provide is `{"missing": "<reason>"}`.
Every command it runs only reads (identify, log pages, get-feature, PCI config space).

facts.json (values in SI units, see the parser modules for each dict):
    collected_at, device, privileges {root}
    tools {nvmedb-client, fio, nvme-cli, libnvme, lspci}
    host {cpu {model, logical_cpus, sockets, cores_per_socket}, memory_bytes, kernel {name, release, version,
          machine}, distribution {id, version_id, pretty_name}, nvme_driver {nvme {...}, nvme_core {...}},
          cpufreq_governor}
    lshw (lshw.parse_lshw), nvme_list (nvme.parse_list)
    id_ctrl, id_ns, smart_log, volatile_write_cache (nvme.parse_*)
    block_device {block_name, block_queue {scheduler, nr_requests, rotational, ...}, pci_path, numa_node}
    pcie {path: [root port ... drive], devices: [PciDevice.to_dict() per address], raw_file}
    commands_file: "commands.json" (each command run: args, returncode, duration_s, error, stderr, output_file)
A value that could not be had is {"missing": "<reason>"}; inside parsed dicts the same marker replaces the field.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nvmedb_client import __version__, privacy
from nvmedb_client.system import commands, host, lshw, lspci, nvme
from nvmedb_client.system.host import is_missing, missing

logger = logging.getLogger(__name__)

FACTS_FILE = "facts.json"
COMMANDS_FILE = "commands.json"
COMMAND_TIMEOUT_S = 120.0
# the kind (nvmedb_client.system_files.KINDS) of each file the collection writes, as the manifest declares it
FILE_KINDS = {
    "nvme-id-ctrl.json": "nvme-id-ctrl",
    "nvme-id-ns.json": "nvme-id-ns",
    "nvme-smart-log.json": "nvme-smart-log",
    "nvme-list.json": "nvme-list",
    "nvme-get-feature-0x06.txt": "nvme-get-feature-vwc",
    "lspci.txt": "lspci-vvv",
    "lshw.json": "lshw",
    FACTS_FILE: "facts",
    COMMANDS_FILE: "commands",
}
PCI_IDS_PATHS = (Path("/usr/share/misc/pci.ids"), Path("/usr/share/hwdata/pci.ids"), Path("/usr/share/pci.ids"))


class _Collector:
    def __init__(self, out_dir: Path, *, root: Path):
        self.out_dir = out_dir
        self.root = root
        self.log: list[dict[str, Any]] = []
        self.is_root = host.is_root()

    def run(
        self, args: Sequence[str], filename: str | None, clean: Callable[[str], str] | None = None
    ) -> commands.CommandResult:
        result = commands.run_command(args, timeout=COMMAND_TIMEOUT_S)
        if clean is not None and result.ok:
            result = dataclasses.replace(result, stdout=clean(result.stdout))
        entry: dict[str, Any] = {
            "args": list(result.args),
            "returncode": result.returncode,
            "duration_s": round(result.duration_s, 6),
            "error": result.error,
            "stderr": result.stderr[-4000:],
            "output_file": None,
        }
        if not result.ok:
            # A failed command's stdout (often its usage text) is no tool output; it is kept only in the log.
            entry["stdout"] = result.stdout[-4000:]
        elif filename is not None and result.stdout:
            (self.out_dir / filename).write_text(result.stdout, encoding="utf-8")
            entry["output_file"] = filename
        self.log.append(entry)
        return result

    def reason(self, result: commands.CommandResult) -> str:
        why = result.failure_reason()
        if result.tool_absent or self.is_root:
            return why
        return f"{why} (not running as root, which this command may need)"

    def parsed(
        self,
        args: Sequence[str],
        filename: str | None,
        parse: Callable[[str], Any],
        *,
        empty_ok: bool = False,
        clean: Callable[[str], str] | None = None,
    ) -> Any:
        """The parsed stdout of a command (after `clean`), or a missing marker saying why there is none."""
        result = self.run(args, filename, clean)
        if not result.ok:
            return missing(self.reason(result))
        if not result.stdout.strip() and not empty_ok:
            return missing(f"`{' '.join(result.args)}` printed nothing")
        try:
            return _marked(parse(result.stdout))
        except ValueError as exc:
            return missing(f"the output of `{' '.join(result.args)}` could not be parsed: {exc}")


def _marked(parsed: Any) -> Any:
    """A parser's dict with each value it lists under "missing" replaced by {"missing": reason}, as facts.json has it."""
    if not isinstance(parsed, dict) or not isinstance(parsed.get("missing"), dict):
        return parsed
    reasons = parsed["missing"]
    return {
        key: missing(reasons[key]) if key in reasons else value for key, value in parsed.items() if key != "missing"
    }


def collect_system(*, device: str | None, out_dir: Path, root: Path = Path("/")) -> dict[str, Any]:
    """Collect host and drive facts into `out_dir` (raw outputs, commands.json, facts.json) and return the facts."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    collector = _Collector(out_dir, root=root)

    facts: dict[str, Any] = {
        "collected_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "device": device,
        "privileges": {"root": collector.is_root},
        "tools": _tool_versions(collector),
        "host": host.host_facts(root=root),
        "lshw": collector.parsed(list(privacy.LSHW_ARGS), "lshw.json", lshw.parse_lshw, clean=privacy.sanitize_lshw),
        "nvme_list": collector.parsed(["nvme", "list", "-o", "json"], "nvme-list.json", nvme.parse_list),
    }
    if not collector.is_root and not is_missing(facts["lshw"]):
        facts["lshw"]["note"] = "lshw ran without root and may have left out hardware details"

    facts.update(_device_facts(collector, device))
    facts["commands_file"] = COMMANDS_FILE
    (out_dir / COMMANDS_FILE).write_text(json.dumps(collector.log, indent=2) + "\n", encoding="utf-8")
    (out_dir / FACTS_FILE).write_text(json.dumps(facts, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return facts


def _tool_versions(collector: _Collector) -> dict[str, Any]:
    tools: dict[str, Any] = {"nvmedb-client": __version__}
    tools["fio"] = collector.parsed(["fio", "--version"], None, lambda text: text.strip().splitlines()[0])
    versions = collector.parsed(["nvme", "version"], None, nvme.parse_version)
    if is_missing(versions):
        tools["nvme-cli"] = versions
        tools["libnvme"] = versions
    else:
        tools["nvme-cli"] = versions["nvme-cli"] or missing("`nvme version` printed no nvme-cli version")
        tools["libnvme"] = versions["libnvme"] or missing("`nvme version` printed no libnvme version (nvme-cli 1.x)")
    tools["lspci"] = collector.parsed(["lspci", "--version"], None, _lspci_version)
    return tools


def _lspci_version(text: str) -> str:
    match = re.search(r"lspci version (\S+)", text)
    if not match:
        raise ValueError("no 'lspci version' in the output")
    return match.group(1)


def _device_facts(collector: _Collector, device: str | None) -> dict[str, Any]:
    keys = ("id_ctrl", "id_ns", "smart_log", "volatile_write_cache", "block_device", "pcie")
    if device is None:
        return {key: missing("no device was given (--device)") for key in keys}
    device_path = collector.root / device.lstrip("/")
    if not os.path.exists(device_path):
        return {key: missing(f"{device} does not exist (no NVMe device here)") for key in keys}

    facts: dict[str, Any] = {
        "id_ctrl": collector.parsed(["nvme", "id-ctrl", device, "-o", "json"], "nvme-id-ctrl.json", nvme.parse_id_ctrl),
        "id_ns": collector.parsed(["nvme", "id-ns", device, "-o", "json"], "nvme-id-ns.json", nvme.parse_id_ns),
        "smart_log": collector.parsed(
            ["nvme", "smart-log", device, "-o", "json"], "nvme-smart-log.json", nvme.parse_smart_log
        ),
        "volatile_write_cache": collector.parsed(
            ["nvme", "get-feature", device, "-f", "0x06", "-H"],
            "nvme-get-feature-0x06.txt",
            nvme.parse_volatile_write_cache,
        ),
        "block_device": host.device_facts(device, root=collector.root),
    }
    facts["pcie"] = _pcie(collector, facts["block_device"]["pci_path"])
    return facts


def _pcie(collector: _Collector, path: list[str] | dict[str, str]) -> dict[str, Any] | dict[str, str]:
    """`lspci -vvv` of the drive and every bridge above it, root port first, saved together in lspci.txt."""
    if is_missing(path):
        return path
    vendor_names = _vendor_names()
    outputs = []
    devices: list[Any] = []
    for address in path:
        result = collector.run(["lspci", "-D", "-vvvnn", "-s", address], None)
        if not result.ok:
            devices.append({"address": address, **missing(collector.reason(result))})
            continue
        outputs.append(result.stdout)
        parsed = lspci.parse_lspci(result.stdout, vendor_names=vendor_names)
        if not parsed:
            devices.append({"address": address, **missing(f"lspci printed no device for {address}")})
            continue
        entry = parsed[0].to_dict()
        if parsed[0].capabilities_denied:
            entry["note"] = "lspci could not read the capabilities (not root): link and payload values are missing"
        devices.append(entry)
    if outputs:
        (collector.out_dir / "lspci.txt").write_text("\n".join(outputs), encoding="utf-8")
    return {"path": list(path), "devices": devices, "raw_file": "lspci.txt" if outputs else None}


def _vendor_names() -> dict[str, str]:
    for path in PCI_IDS_PATHS:
        if path.is_file():
            try:
                return lspci.load_vendor_names(path)
            except OSError:
                continue
    return {}


def system_declaration(out_dir: Path, *, prefix: str = "system") -> dict[str, Any]:
    """The manifest's `system` key for a collection in `out_dir`: each file with its kind (paths under `prefix`) and
    the drive's PCI path from facts.json, or null with the reason."""
    out_dir = Path(out_dir)
    files = [
        {"path": f"{prefix}/{path.relative_to(out_dir).as_posix()}", "kind": FILE_KINDS.get(path.name, "other")}
        for path in sorted(out_dir.rglob("*"))
        if path.is_file()
    ]
    declaration: dict[str, Any] = {"files": files, "pci_path": None}
    try:
        facts = json.loads((out_dir / FACTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        declaration["pci_path_missing"] = f"{FACTS_FILE} could not be read: {exc}"
        return declaration
    block = facts.get("block_device") if isinstance(facts, dict) else None
    path = block if is_missing(block) or not isinstance(block, dict) else block.get("pci_path")
    if isinstance(path, list) and path:
        declaration["pci_path"] = [str(address) for address in path]
    elif is_missing(path):
        declaration["pci_path_missing"] = str(path["missing"])
    else:
        declaration["pci_path_missing"] = "the system collection found no PCI path for the target"
    return declaration


def smart_snapshot(device: str | None, out_path: Path) -> dict[str, Any] | None:
    """Save `nvme smart-log DEV -o json` to `out_path` and return it parsed.

    None when there is nothing to snapshot or it failed (a file target, nvme-cli absent, not root, the command
    failed); the reason is logged as a warning and `out_path` is not written.
    """
    if device is None:
        return None
    result = commands.run_command(["nvme", "smart-log", device, "-o", "json"], timeout=COMMAND_TIMEOUT_S)
    if not result.ok:
        logger.warning("no smart-log snapshot of %s: %s", device, result.failure_reason())
        return None
    try:
        parsed = nvme.parse_smart_log(result.stdout)
    except ValueError as exc:
        logger.warning("no smart-log snapshot of %s: %s", device, exc)
        return None
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(result.stdout, encoding="utf-8")
    return parsed
