"""What the run does to an NVMe device besides fio: purge it, and set and restore its volatile write cache.

Every command goes through system.commands.run_command. Never called for file targets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from nvmedb_client.run_state import RunError, RunInterrupted, utc_now
from nvmedb_client.system import commands, nvme

SANITIZE_POLL_S = 5.0
SANITIZE_TIMEOUT_S = 24 * 3600
WRITE_CACHE_FEATURE = "--feature-id=6"
# nvme-cli's own Format timeout is 10 minutes: too short for a user-data erase that overwrites a large drive. This
# rate (a slow overwrite) and the floor give the drive as long as the slowest such erase can need.
FORMAT_ERASE_BYTES_PER_S = 50_000_000
FORMAT_MIN_TIMEOUT_S = 3600
FORMAT_FORCE_SINCE = (1, 10)  # nvme-cli 1.9 (Ubuntu 20.04) has no --force; 1.10 added it with a 10 s warning pause

ScopeCheck = Callable[[str], "tuple[list[str] | None, str | None]"]


@dataclass(frozen=True)
class PurgeMethod:
    label: str
    argv: list[str]
    kind: str  # format | sanitize | blkdiscard
    scope: str  # namespace | controller | subsystem: what the command erases
    timeout_s: float


def format_timeout_s(capacity_bytes: int | None) -> int:
    if not capacity_bytes:
        return SANITIZE_TIMEOUT_S
    # nvme-cli passes the timeout to the kernel in milliseconds as a 32-bit number
    return min(max(FORMAT_MIN_TIMEOUT_S, int(capacity_bytes / FORMAT_ERASE_BYTES_PER_S)), (2**32 - 1) // 1000)


def purge_attempts(device: str, id_ctrl: dict, id_ns: dict, *, nvme_version: str | None) -> list[PurgeMethod]:
    """The purge commands to try, best first: Format with Secure Erase (crypto erase when FNA allows, else user data
    erase) keeping the LBA format and its metadata and protection settings, then Sanitize (crypto or block erase per
    SANICAP), then blkdiscard. Each says what it erases: FNA bit 0 makes a Format erase the whole controller, a
    Sanitize always erases the whole NVM subsystem."""
    attempts: list[PurgeMethod] = []
    lbaf = id_ns.get("lba_format_index")
    keep = {"--pi": id_ns.get("pi_type"), "--pil": id_ns.get("pi_first"), "--ms": id_ns.get("metadata_extended")}
    if id_ctrl.get("format_nvm_supported") is not False and lbaf is not None and None not in keep.values():
        ses, what = (2, "crypto erase") if id_ctrl.get("crypto_erase_supported") else (1, "user data erase")
        timeout_s = format_timeout_s(id_ns.get("size_bytes"))
        argv = ["nvme", "format", device, f"--ses={ses}", f"--lbaf={lbaf}"]
        argv += [f"{option}={int(value)}" for option, value in keep.items()]
        argv.append(f"--timeout={timeout_s * 1000}")
        version = nvme.version_tuple(nvme_version)
        if version is None or version >= FORMAT_FORCE_SINCE:
            argv.append("--force")
        scope = "controller" if id_ctrl.get("format_applies_to_all_namespaces") is not False else "namespace"
        attempts.append(
            PurgeMethod(
                f"nvme format --ses={ses} ({what}), LBA format {lbaf}, PI type {keep['--pi']} and metadata kept",
                argv,
                "format",
                scope,
                timeout_s + 60,
            )
        )
    for flag, action, what in (
        ("sanitize_crypto_erase_supported", 4, "crypto erase"),
        ("sanitize_block_erase_supported", 2, "block erase"),
    ):
        if id_ctrl.get(flag):
            attempts.append(
                PurgeMethod(
                    f"nvme sanitize --sanact={action} ({what})",
                    ["nvme", "sanitize", device, f"--sanact={action}"],
                    "sanitize",
                    "subsystem",
                    600,
                )
            )
            break
    attempts.append(
        PurgeMethod("blkdiscard (full-range deallocate)", ["blkdiscard", device], "blkdiscard", "namespace", 24 * 3600)
    )
    return attempts


def purge(
    device: str,
    *,
    label: str,
    interrupted: Callable[[], str | None],
    check_scope: ScopeCheck | None = None,
) -> dict:
    """Purge `device` with the best method that works; the record names the method, what it erased, every failed
    attempt and every method skipped because it would have erased a namespace nobody confirmed.

    `check_scope(scope)` returns (the namespaces a command of that scope erases, a reason to refuse it); without it
    only per-namespace methods are used."""
    ctrl = commands.run_command(["nvme", "id-ctrl", device, "-o", "json"], timeout=60)
    ns = commands.run_command(["nvme", "id-ns", device, "-o", "json"], timeout=60)
    version = commands.run_command(["nvme", "version"], timeout=30)
    id_ctrl = nvme.parse_id_ctrl(ctrl.stdout) if ctrl.ok else {}
    id_ns = nvme.parse_id_ns(ns.stdout) if ns.ok else {}
    nvme_version = nvme.parse_version(version.stdout)["nvme-cli"] if version.ok else None
    failures: list[str] = []
    skipped: list[str] = []
    # A sanitize left running (by an earlier run, or one whose command timed out) must end before anything else.
    if id_ctrl.get("sanitize_crypto_erase_supported") or id_ctrl.get("sanitize_block_erase_supported"):
        state, _ = sanitize_state(device)
        if state == "in_progress":
            _wait_for_sanitize(device, interrupted)
    for method in purge_attempts(device, id_ctrl, id_ns, nvme_version=nvme_version):
        erased = [device.rsplit("/", 1)[-1]]
        if method.scope != "namespace":
            erased, refusal = check_scope(method.scope) if check_scope else (None, "no namespace check was made")
            if refusal:
                skipped.append(f"{method.label}: {refusal}")
                continue
        started = utc_now()
        result = commands.run_command(method.argv, timeout=method.timeout_s)
        if method.kind == "sanitize":
            # The command may fail or time out while the sanitize it started goes on: never start a fallback then.
            state, why = sanitize_state(device)
            if state == "in_progress":
                state, why = _wait_for_sanitize(device, interrupted)
            elif not result.ok:
                failures.append(f"{method.label}: {result.failure_reason()}")
                continue
            if state != "succeeded":
                failures.append(f"{method.label}: {why}")
                continue
        elif not result.ok:
            failures.append(f"{method.label}: {result.failure_reason()}")
            continue
        return {
            "block": label,
            "method": method.label,
            "command": method.argv,
            "scope": method.scope,
            "erased_namespaces": erased,
            "nvme_cli_version": nvme_version,
            "started_at": started,
            "at": utc_now(),
            "failed_attempts": failures,
            "skipped_attempts": skipped,
            "per_namespace_fallback": bool(skipped),
        }
    raise RunError(f"no purge method worked on {device}: " + "; ".join(failures + skipped))


def sanitize_state(device: str) -> tuple[str, str]:
    """(never | succeeded | in_progress | failed | unknown, a sentence) from `nvme sanitize-log`."""
    log = commands.run_command(["nvme", "sanitize-log", device, "-o", "json"], timeout=60)
    if not log.ok:
        return "unknown", log.failure_reason()
    try:
        parsed = nvme.parse_sanitize_log(log.stdout)
    except ValueError as exc:
        return "unknown", f"the sanitize log cannot be read: {exc}"
    described = parsed["status_text"] or f"SSTAT {parsed['status']}"
    return parsed["state"], f"the sanitize log says {described}"


def _wait_for_sanitize(device: str, interrupted: Callable[[], str | None]) -> tuple[str, str]:
    deadline = time.monotonic() + SANITIZE_TIMEOUT_S
    unreadable = 0
    while time.monotonic() < deadline:
        reason = interrupted()
        if reason:
            raise RunInterrupted(reason)
        state, why = sanitize_state(device)
        if state == "unknown":
            unreadable += 1
            if unreadable >= 12:  # a minute of unreadable logs: the sanitize may still run, so nothing may follow
                raise RunError(f"the sanitize on {device} cannot be followed ({why}); wait for it before resuming")
        elif state != "in_progress":
            return state, why
        time.sleep(SANITIZE_POLL_S)
    raise RunError(f"the sanitize on {device} did not finish within 24 h; nothing else was started")


def write_cache_value(get_feature_text: str) -> int | None:
    try:
        return nvme.parse_volatile_write_cache(get_feature_text)["value"]
    except ValueError:
        return None


def read_write_cache(device: str) -> tuple[int | None, str]:
    """Feature 0x06 as the drive reports it now: (value, "") or (None, why it could not be read)."""
    result = commands.run_command(["nvme", "get-feature", device, WRITE_CACHE_FEATURE, "-H"], timeout=60)
    value = write_cache_value(result.stdout) if result.ok else None
    if value is None:
        return None, result.failure_reason() or "no 'Current value' in the get-feature output"
    return value, ""


def apply_write_cache(device: str, *, enabled: bool, record: dict | None) -> tuple[dict, str | None]:
    """Set the volatile write cache as the edition asks and read it back. Returns the record (keeping the value found
    the first time, so a resumed run restores the drive's own setting) and a non-compliance reason when the drive does
    not report the wanted state afterwards."""
    ctrl = commands.run_command(["nvme", "id-ctrl", device, "-o", "json"], timeout=60)
    if ctrl.ok:
        try:
            present = nvme.parse_id_ctrl(ctrl.stdout).get("volatile_write_cache_present")
        except ValueError:
            present = None
        if present is False:
            return {"applicable": False, "reason": "the drive has no volatile write cache (VWC)"}, None
    value, why = read_write_cache(device)
    record = dict(record or {})
    if "original" not in record:
        record = {"applicable": True, "original": value, "wanted_enabled": enabled, "set": False}
    if value is None:
        record["reason"] = why
        return record, f"the write cache state could not be read: {why}"
    if bool(value & 1) != enabled:
        result = commands.run_command(
            ["nvme", "set-feature", device, WRITE_CACHE_FEATURE, f"--value={int(enabled)}"], timeout=60
        )
        record["set"] = record.get("set") or result.ok
        if not result.ok:
            record["reason"] = result.failure_reason()
            return record, f"the write cache could not be set as the edition asks: {record['reason']}"
        value, why = read_write_cache(device)
    record["observed"] = value
    record["enabled"] = None if value is None else bool(value & 1)
    problem = cache_problem(record["enabled"], enabled, why)
    if problem:
        record["reason"] = problem
    return record, problem


def cache_problem(observed: bool | None, wanted: bool, why: str = "") -> str | None:
    if observed is None:
        return f"the write cache state could not be read back: {why or 'no value'}"
    if observed != wanted:
        return f"the drive reports its write cache {_state(observed)} where the edition asks for it {_state(wanted)}"
    return None


def _state(enabled: bool) -> str:
    return "enabled" if enabled else "disabled"


def check_write_cache(device: str, *, wanted: bool, block: str, when: str) -> dict:
    """One observation of feature 0x06 for the bundle: when, for which test, what the drive said, and the problem."""
    value, why = read_write_cache(device)
    enabled = None if value is None else bool(value & 1)
    return {
        "block": block,
        "when": when,
        "at": utc_now(),
        "value": value,
        "enabled": enabled,
        "wanted_enabled": wanted,
        "problem": cache_problem(enabled, wanted, why),
    }


def restore_write_cache(device: str, record: dict) -> str | None:
    """Put the write cache back as it was found; the failure reason, or None."""
    if not record.get("set") or record.get("original") is None:
        return None
    result = commands.run_command(
        ["nvme", "set-feature", device, WRITE_CACHE_FEATURE, f"--value={record['original'] & 1}"], timeout=60
    )
    record["restored"] = result.ok
    return None if result.ok else result.failure_reason()
