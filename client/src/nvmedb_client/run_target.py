"""The target's state around each test: the purge before it (NVMe Format, Sanitize or blkdiscard, only of namespaces
the operator confirmed), and the write cache read back at its start and end (the edition's setting, PTS feature 0x06).
Each takes the Runner and records into its state."""

from __future__ import annotations

from pathlib import Path

from nvmedb_client import device, namespaces
from nvmedb_client.plan_types import Block
from nvmedb_client.run_state import utc_now


def check_write_cache(runner, block: Block, when: str) -> None:
    """Read feature 0x06 back; a test that did not run with the edition's setting is not compliant."""
    if runner.device is None or not (runner.state.get("write_cache") or {}).get("applicable"):
        return
    wanted = runner.plan.edition.write_cache_enabled
    check = device.check_write_cache(runner.device, wanted=wanted, block=block.label, when=when)
    checks = runner.state.setdefault("write_cache_checks", [])
    checks.append(check)
    if check["problem"] and when != "test end":
        # no I/O of the test has run yet: setting it again costs the test nothing, if the drive keeps it
        record, _ = device.apply_write_cache(runner.device, enabled=wanted, record=runner.state.get("write_cache"))
        runner.state["write_cache"] = record
        when = f"{when}, set again"
        check = device.check_write_cache(runner.device, wanted=wanted, block=block.label, when=when)
        checks.append(check)
    if check["problem"]:
        runner._test_non_compliant(block.label, f"write cache at {when}: {check['problem']}")
    runner._save()


def purge(runner, block: Block) -> None:
    if any(p["block"] == block.label and not p.get("superseded") for p in runner.state["purges"]):
        return
    if runner.device is None:
        record = {"block": block.label, "method": None, "reason": "file target: never purged", "at": utc_now()}
    else:
        runner._message(f"purging {runner.device} before {block.label}")
        record = device.purge(
            runner.device,
            label=block.label,
            interrupted=lambda: runner.interrupted,
            check_scope=lambda scope: erase_scope(runner, scope),
        )
    runner.state["purges"].append(record)
    runner._save()
    check_write_cache(runner, block, "after purge")


def erase_scope(runner, scope: str) -> tuple[list[str] | None, str | None]:
    """The namespaces a purge of `scope` erases, and why it may not run: one that nobody confirmed, or one in use."""
    return namespaces.erase_scope_check(
        runner.device, scope, confirmed=runner.config.erase_confirmed, root=Path(runner.config.system_root or "/")
    )
