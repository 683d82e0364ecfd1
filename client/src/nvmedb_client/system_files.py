"""The system files a bundle may hold and how a format-2 manifest declares them (docs/bundle-format.md).

A format-2 manifest lists every file under `files/system/` in `system.files` with its `kind`; readers find a file by
its kind, never by its name. Format-1 bundles declared nothing: readers fall back to the client's old file names
(`V1_NAME_PATTERNS`), and only for format 1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

SYSTEM_DIR = "system"

# kind -> what the file holds (the role the docs give it)
KINDS = {
    "nvme-id-ctrl": "`nvme id-ctrl DEV -o json` of the tested controller: the drive's identity and capacity",
    "nvme-id-ns": "`nvme id-ns DEV -o json` of the tested namespace: its size and LBA format",
    "nvme-smart-log": "`nvme smart-log DEV -o json` taken when the system was collected (wear, temperature)",
    "nvme-list": "`nvme list -o json`: the NVMe devices of the host",
    "nvme-get-feature-vwc": "`nvme get-feature DEV -f 0x06 -H`: the volatile write cache setting",
    "lspci-vvv": "`lspci -vvv` (any of -D, -nn) text of at least the drive and the bridges on `system.pci_path`",
    "lshw": "`lshw -json` of the host",
    "facts": "facts.json: the parsed host and drive facts (schema `$defs/facts`)",
    "commands": "commands.json: each command the system collection ran, with its exit status",
    "other": "any other output kept as raw data; the server stores it and reads nothing from it",
}
# kinds the server reads one file of: a second file of the same kind would leave it to guess
UNIQUE_KINDS = frozenset(KINDS) - {"other"}

# Format 1 only: the client's file names, matched loosely as the server always did.
V1_NAME_PATTERNS = {
    "nvme-id-ctrl": re.compile(r"(^|/)(nvme[-_])?id[-_]ctrl[^/]*\.json$"),
    "nvme-id-ns": re.compile(r"(^|/)(nvme[-_])?id[-_]ns[^/]*\.json$"),
    "lspci-vvv": re.compile(r"(^|/)lspci[^/]*$"),
    "facts": re.compile(r"(^|/)facts\.json$"),
    "nvme-smart-log": re.compile(r"(^|/)(nvme[-_])?smart[-_]log[^/]*\.json$"),
}

V1_KEYS = {
    "id_ctrl": "nvme-id-ctrl",
    "id_ns": "nvme-id-ns",
    "lspci": "lspci-vvv",
    "facts": "facts",
    "smart": "nvme-smart-log",
}


def declared_files(manifest: Mapping) -> list[Mapping]:
    system = manifest.get("system")
    entries = system.get("files") if isinstance(system, Mapping) else None
    return [entry for entry in entries or [] if isinstance(entry, Mapping)]


def declaration_problems(manifest: Mapping) -> list[str]:
    """What is wrong with a format-2 manifest's `system.files` beyond its schema: a declared file the bundle does not
    list, a file declared twice, two files of a kind the server reads one of. Empty when it is sound."""
    listed = {entry.get("path") for entry in manifest.get("files") or [] if isinstance(entry, Mapping)}
    problems = []
    seen_paths: set[str] = set()
    seen_kinds: dict[str, str] = {}
    for entry in declared_files(manifest):
        path, kind = entry.get("path"), entry.get("kind")
        if path not in listed:
            problems.append(f"system.files declares {path!r}, which the manifest's files do not list")
        if path in seen_paths:
            problems.append(f"system.files declares {path!r} twice")
        seen_paths.add(path)
        if kind in UNIQUE_KINDS:
            if kind in seen_kinds:
                problems.append(f"system.files declares two {kind} files ({seen_kinds[kind]!r} and {path!r})")
            seen_kinds.setdefault(kind, path)
    return problems


def files_by_kind(manifest: Mapping) -> dict[str, str]:
    """Format 2: the declared file of each kind the server reads (path relative to files/)."""
    found: dict[str, str] = {}
    for entry in declared_files(manifest):
        kind, path = entry.get("kind"), entry.get("path")
        if kind in UNIQUE_KINDS and isinstance(path, str):
            found.setdefault(kind, path)
    return found


def undeclared_system_files(manifest: Mapping) -> list[str]:
    """Format 2: files under system/ that `system.files` does not declare (their role is unknown)."""
    declared = {entry.get("path") for entry in declared_files(manifest)}
    listed = [entry.get("path") for entry in manifest.get("files") or [] if isinstance(entry, Mapping)]
    return sorted(
        path for path in listed if isinstance(path, str) and path.startswith(f"{SYSTEM_DIR}/") and path not in declared
    )


def files_by_v1_name(manifest: Mapping, files: set[str]) -> dict[str, str]:
    """Format 1: the system files found by the client's old names (never used for format 2)."""
    found: dict[str, str] = {}
    declared = manifest.get("system")  # some format-1 writers named files under a "system" mapping
    if isinstance(declared, Mapping):
        for key, value in declared.items():
            if isinstance(value, str) and value in files:
                for kind, pattern in V1_NAME_PATTERNS.items():
                    if pattern.search(value) or V1_KEYS.get(key) == kind:
                        found.setdefault(kind, value)
    run_files = {
        run.get(key)
        for run in manifest.get("runs") or []
        if isinstance(run, Mapping)
        for key in ("smart_before", "smart_after", "output_file")
    }
    for path in sorted(files - run_files):
        for kind, pattern in V1_NAME_PATTERNS.items():
            if pattern.search(path):
                found.setdefault(kind, path)
    return found
