"""Which namespaces a purge really erases, and whether each of them may be erased.

A Format whose controller sets FNA bit 0 erases every namespace attached to the controller; a Sanitize erases every
namespace of the NVM subsystem. Both are found in sysfs (the controller's and the subsystem's namespaces) and in
`nvme list -o json` (namespaces with the same serial number belong to the same subsystem: NVMe Base 2.0, 7.1); the
union is used, so a namespace either source shows is never erased unseen. A wide command runs only when every other
namespace it erases was named to the operator and confirmed, and passes the same refusals as the target (mounted,
root, swap, RAID/LVM/dm member).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from nvmedb_client import safety
from nvmedb_client.system import commands, nvme

SCOPE_WORDS = {
    "controller": "a Format on this controller erases every namespace attached to it (FNA bit 0)",
    "subsystem": "a Sanitize erases every namespace of the NVM subsystem",
}


def target_name(device: str, root: Path) -> str:
    return Path(os.path.realpath(Path(root).joinpath(device.lstrip("/")))).name


def listed_namespaces(list_text: str | None, target: str, scope: str) -> set[str]:
    """Namespaces `nvme list -o json` puts in the same subsystem (same serial and model) as `target`; for the
    controller scope, only those on the same controller when the list says which controller (nvme-cli 2.11 tree)."""
    if not list_text:
        return set()
    try:
        entries = nvme.parse_list(list_text)
    except ValueError:
        return set()
    names = {entry_name(entry): entry for entry in entries if entry_name(entry)}
    mine = names.get(target)
    if mine is None or not mine.get("serial"):
        return set()
    found = set()
    for name, entry in names.items():
        if (entry.get("serial"), entry.get("model")) != (mine.get("serial"), mine.get("model")):
            continue
        if scope == "controller" and mine.get("controller") and entry.get("controller") != mine.get("controller"):
            continue
        found.add(name)
    return found


def entry_name(entry: dict) -> str | None:
    path = entry.get("device_path")
    return str(path).rsplit("/", 1)[-1] if path else None


def erased_namespaces(device: str, scope: str, *, root: Path, list_text: str | None = None) -> list[str] | None:
    """Every namespace (block device name) a command of `scope` on `device` erases; None when it cannot be known."""
    from_sysfs = safety.namespaces_erased_with(device, scope, root=root)
    if from_sysfs is None:
        return None
    if scope == "namespace":
        return from_sysfs
    if list_text is None:
        result = commands.run_command(["nvme", "list", "-o", "json"], timeout=60)
        list_text = result.stdout if result.ok else None
    return sorted(set(from_sysfs) | listed_namespaces(list_text, target_name(device, root), scope))


def erase_scope_check(
    device: str, scope: str, *, confirmed: Collection[str] | None, root: Path, list_text: str | None = None
) -> tuple[list[str] | None, str | None]:
    """(the namespaces a command of `scope` erases, why it may not run) — the reason is None when it may.
    `confirmed` None: only the safety refusals are applied (to offer the namespaces for confirmation)."""
    names = erased_namespaces(device, scope, root=root, list_text=list_text)
    if names is None:
        return None, f"sysfs does not show which namespaces share this {scope}, so it is not erased as a whole"
    target = target_name(device, root)
    others = [name for name in names if name != target]
    unconfirmed = [name for name in others if confirmed is not None and name not in confirmed]
    if unconfirmed:
        listed = ", ".join(f"/dev/{name}" for name in unconfirmed)
        return names, f"{SCOPE_WORDS[scope]}, and the confirmation did not cover {listed}"
    refusals = safety.namespace_refusals(others, root=root)
    if refusals:
        return names, f"{SCOPE_WORDS[scope]}: " + " ".join(refusals[name] for name in sorted(refusals))
    return names, None
