"""The server's own verdict on the conditions a client recorded in run.json: the write cache and idle time.

The client already lists its compliance reasons; this re-reads the observations themselves, so that a client that
recorded a drifted write cache or an interruption but did not draw the conclusion (an older or a modified client)
still gets a non-compliant result, with the reason shown on the site.

- Write cache (feature 0x06): for every test the client read it back, the last read before the test's I/O and the
  read at its end must both show the setting the edition asks for (enterprise: disabled, client: enabled).
- Interruptions: a resumed run must say how long each pause was; a pause that let the test go on must be no longer
  than the allowed gap between rounds, and a restarted test may not use a run that started before the pause.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from nvmedb_client.plan import EDITIONS
from nvmedb_client.resume import ALLOWED_GAP_S

BEFORE_IO = ("after purge", "test start")


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def write_cache_problems(checks: Sequence[Any], *, edition: str) -> list[str]:
    if edition not in EDITIONS:
        return []
    wanted = EDITIONS[edition].write_cache_enabled
    state = "enabled" if wanted else "disabled"
    by_block: dict[str, list[Mapping]] = {}
    for check in checks:
        if isinstance(check, Mapping) and isinstance(check.get("block"), str):
            by_block.setdefault(check["block"], []).append(check)
    problems = []
    for block, observed in by_block.items():
        before = [c for c in observed if str(c.get("when", "")).startswith(BEFORE_IO)]
        end = [c for c in observed if c.get("when") == "test end"]
        for label, check in (
            ("before its I/O", before[-1] if before else None),
            ("at its end", end[-1] if end else None),
        ):
            if check is None:
                problems.append(f"{block}: the write cache was not read back {label}")
            elif check.get("enabled") is not wanted:
                seen = {True: "enabled", False: "disabled"}.get(check.get("enabled"), "unreadable")
                problems.append(f"{block}: the write cache was {seen} {label} (the {edition} edition runs it {state})")
    return problems


def interruption_problems(recorded: Mapping, runs: Sequence[Any]) -> list[str]:
    sessions = [s for s in recorded.get("sessions") or [] if isinstance(s, Mapping)]
    gaps = [g for g in recorded.get("interruptions") or [] if isinstance(g, Mapping)]
    problems = []
    if len(sessions) > 1 and len(gaps) < len(sessions) - 1:
        problems.append(
            f"the run was resumed {len(sessions) - 1} time(s) but records {len(gaps)} interruption(s): "
            "the idle time of the others is unknown"
        )
    started = {run.get("id"): _time(run.get("started_at")) for run in runs if isinstance(run, Mapping)}
    for gap in gaps:
        length = gap.get("length_s")
        where = gap.get("block") or "the run"
        if not isinstance(length, (int, float)):
            problems.append(f"{where}: an interruption has no length")
        elif gap.get("action") == "continued" and length > ALLOWED_GAP_S:
            problems.append(
                f"{where}: rounds went on after a pause of {length:.0f} s (more than {ALLOWED_GAP_S:g} s between rounds)"
            )
        elif gap.get("action") == "restart":
            resumed = _time(gap.get("resumed_at"))
            stale = sorted(
                run_id
                for run_id in gap.get("superseded_runs") or []
                if run_id in started and (started[run_id] is None or resumed is None or started[run_id] < resumed)
            )
            if stale:
                problems.append(f"{where}: restarted after a pause of {length:.0f} s but uses runs from before it")
    return problems


def run_condition_problems(recorded: Mapping, manifest: Mapping) -> list[str]:
    """Every non-compliance the server finds in run.json, as sentences for the submission's reasons."""
    problems = []
    if (manifest.get("target") or {}).get("kind") == "device":
        problems += write_cache_problems(recorded.get("write_cache_checks") or [], edition=str(manifest.get("edition")))
    problems += interruption_problems(recorded, manifest.get("runs") or [])
    return problems
