"""What the run does to an NVMe device besides fio: purge it, and set and restore its volatile write cache.

Every command goes through system.commands.run_command. Never called for file targets.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from nvmedb_client.run_state import RunError, RunInterrupted, utc_now
from nvmedb_client.system import commands, nvme

SANITIZE_POLL_S = 5.0
SANITIZE_TIMEOUT_S = 24 * 3600
WRITE_CACHE_FEATURE = "--feature-id=6"


def purge_attempts(device: str, id_ctrl: dict, id_ns: dict) -> list[tuple[str, list[str]]]:
    """The purge commands to try, best first: Format with Secure Erase (crypto erase when FNA allows, else user data
    erase) keeping the current LBA format, then Sanitize (crypto or block erase per SANICAP), then blkdiscard."""
    attempts: list[tuple[str, list[str]]] = []
    lbaf = id_ns.get("lba_format_index")
    if id_ctrl.get("format_nvm_supported") is not False and lbaf is not None:
        ses, what = (2, "crypto erase") if id_ctrl.get("crypto_erase_supported") else (1, "user data erase")
        attempts.append(
            (
                f"nvme format --ses={ses} ({what}), LBA format {lbaf} kept",
                ["nvme", "format", device, f"--ses={ses}", f"--lbaf={lbaf}", "--force"],
            )
        )
    if id_ctrl.get("sanitize_crypto_erase_supported"):
        attempts.append(("nvme sanitize --sanact=4 (crypto erase)", ["nvme", "sanitize", device, "--sanact=4"]))
    elif id_ctrl.get("sanitize_block_erase_supported"):
        attempts.append(("nvme sanitize --sanact=2 (block erase)", ["nvme", "sanitize", device, "--sanact=2"]))
    attempts.append(("blkdiscard (full-range deallocate)", ["blkdiscard", device]))
    return attempts


def purge(device: str, *, label: str, interrupted: Callable[[], str | None]) -> dict:
    """Purge `device` with the best method that works; the record names the method and every failed attempt."""
    ctrl = commands.run_command(["nvme", "id-ctrl", device, "-o", "json"], timeout=60)
    ns = commands.run_command(["nvme", "id-ns", device, "-o", "json"], timeout=60)
    id_ctrl = nvme.parse_id_ctrl(ctrl.stdout) if ctrl.ok else {}
    id_ns = nvme.parse_id_ns(ns.stdout) if ns.ok else {}
    failures = []
    for method, argv in purge_attempts(device, id_ctrl, id_ns):
        started = utc_now()
        result = commands.run_command(argv, timeout=SANITIZE_TIMEOUT_S)
        if not result.ok:
            failures.append(f"{method}: {result.failure_reason()}")
            continue
        if argv[1:2] == ["sanitize"]:
            finished, why = _wait_for_sanitize(device, interrupted)
            if not finished:
                failures.append(f"{method}: {why}")
                continue
        return {
            "block": label,
            "method": method,
            "command": argv,
            "started_at": started,
            "at": utc_now(),
            "failed_attempts": failures,
        }
    raise RunError(f"no purge method worked on {device}: " + "; ".join(failures))


def _wait_for_sanitize(device: str, interrupted: Callable[[], str | None]) -> tuple[bool, str]:
    deadline = time.monotonic() + SANITIZE_TIMEOUT_S
    while time.monotonic() < deadline:
        reason = interrupted()
        if reason:
            raise RunInterrupted(reason)
        log = commands.run_command(["nvme", "sanitize-log", device, "-o", "json"], timeout=60)
        done = sanitize_done(log.stdout) if log.ok else None
        if done:
            return True, ""
        if done is None:
            return False, log.failure_reason() or "the sanitize log could not be read"
        time.sleep(SANITIZE_POLL_S)
    return False, "sanitize did not finish within 24 h"


def sanitize_done(log_text: str) -> bool | None:
    """From `nvme sanitize-log -o json`: True when finished, False while running, None when unreadable."""
    try:
        doc = json.loads(log_text)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    entry = next(iter(doc.values())) if doc and all(isinstance(v, dict) for v in doc.values()) else doc
    sprog = entry.get("sprog")
    sstat = entry.get("sstat")
    if isinstance(sstat, dict):
        sstat = sstat.get("status", sstat.get("value"))
    if isinstance(sstat, int) and sstat & 0x7 == 2:  # SSTAT 2: a sanitize is in progress
        return False
    if sprog == 65535 or (isinstance(sstat, int) and sstat & 0x7 in (1, 3)):
        return True
    return None


def write_cache_value(get_feature_text: str) -> int | None:
    try:
        return nvme.parse_volatile_write_cache(get_feature_text)["value"]
    except ValueError:
        return None


def apply_write_cache(device: str, *, enabled: bool, record: dict | None) -> tuple[dict, str | None]:
    """Set the volatile write cache as the edition asks. Returns the record (keeping the value found the first time,
    so a resumed run restores the drive's own setting) and a non-compliance reason when it could not be done."""
    ctrl = commands.run_command(["nvme", "id-ctrl", device, "-o", "json"], timeout=60)
    if ctrl.ok:
        try:
            present = nvme.parse_id_ctrl(ctrl.stdout).get("volatile_write_cache_present")
        except ValueError:
            present = None
        if present is False:
            return {"applicable": False, "reason": "the drive has no volatile write cache (VWC)"}, None
    current = commands.run_command(["nvme", "get-feature", device, WRITE_CACHE_FEATURE, "-H"], timeout=60)
    value = write_cache_value(current.stdout) if current.ok else None
    record = dict(record or {})
    if "original" not in record:
        record = {"applicable": True, "original": value, "wanted_enabled": enabled, "set": False}
    if value is None:
        record["reason"] = current.failure_reason() or "no 'Current value' in the get-feature output"
        return record, f"the write cache state could not be read: {record['reason']}"
    if bool(value & 1) != enabled:
        result = commands.run_command(
            ["nvme", "set-feature", device, WRITE_CACHE_FEATURE, f"--value={int(enabled)}"], timeout=60
        )
        record["set"] = result.ok
        if not result.ok:
            record["reason"] = result.failure_reason()
            return record, f"the write cache could not be set as the edition asks: {record['reason']}"
    return record, None


def restore_write_cache(device: str, record: dict) -> str | None:
    """Put the write cache back as it was found; the failure reason, or None."""
    if not record.get("set") or record.get("original") is None:
        return None
    result = commands.run_command(
        ["nvme", "set-feature", device, WRITE_CACHE_FEATURE, f"--value={record['original'] & 1}"], timeout=60
    )
    record["restored"] = result.ok
    return None if result.ok else result.failure_reason()
