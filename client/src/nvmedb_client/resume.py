"""What a resumed run does about the time it stood still.

The PTS runs the rounds of a test back to back: the drive never idles between the end of its preconditioning and
the end of its last measurement window. An interruption gives a drive idle time in which it can garbage-collect, so
the rounds after it would measure a different drive state. A resumed run therefore records every interruption (when
it began: the last checkpoint; how long it lasted) and where it fell:

- between tests (or before a test's purge): nothing to undo, the next test starts with its own purge and
  preconditioning;
- between two rounds, no longer than ALLOWED_GAP_S: the rounds continue (the gap is recorded);
- anywhere else in a test (during its WIPC, inside a round, or a longer gap between rounds): the test's runs so far
  are set aside (kept in the bundle as superseded) and the test starts again from its purge and preconditioning.
"""

from __future__ import annotations

import logging
import os
from datetime import datetime
from pathlib import Path

from nvmedb_client.plan_types import Block
from nvmedb_client.pts import registry

# One PTS measurement cell lasts a minute; a pause between rounds longer than that is no longer "back to back".
ALLOWED_GAP_S = 60.0

logger = logging.getLogger(__name__)


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def interruption(state: dict, *, now: str) -> dict:
    """The interruption that ended when this session started, and what must be done about it."""
    position = state.get("position") or {}
    began = state.get("saved_at") or state["sessions"][-2]["started_at"]
    length_s = round(max(0.0, _seconds(now) - _seconds(began)), 3)
    stage = position.get("stage")
    block = position.get("block")
    if stage in (None, "done", "purge"):
        action, why = "none", "between tests: the next test starts with its own purge and preconditioning"
    elif stage == "captures":
        action = "continued"
        why = (
            "during the operating-point captures: the sweep and the finished captures are kept, the interrupted "
            f"capture runs again from its start (after {length_s:g} s in which the drive could idle)"
        )
    elif stage == "prewrite":
        action = "continued"
        why = (
            f"during the pre-write before round {position.get('round')}: the rounds so far are kept, the pre-write "
            f"runs again from its start, so the round still follows writes (after {length_s:g} s of idle)"
        )
    elif stage == "rounds" and position.get("round_complete") and length_s <= ALLOWED_GAP_S:
        action = "continued"
        why = f"between rounds {position.get('round')} and {position.get('round', 0) + 1}, within {ALLOWED_GAP_S:g} s"
    else:
        action = "restart"
        if stage == "rounds" and position.get("round_complete"):
            where = f"between rounds, longer than {ALLOWED_GAP_S:g} s"
        elif stage == "rounds":
            where = f"inside round {position.get('round')} (a measurement window)"
        else:
            where = f"during {stage}"
        why = f"{where}: the test restarts from its purge and preconditioning"
    return {
        "started_at": began,
        "resumed_at": now,
        "length_s": length_s,
        "block": block,
        "stage": stage,
        "round": position.get("round"),
        "action": action,
        "reason": why,
    }


def block_run_ids(block: Block) -> set[str]:
    ids = {block.wipc_run_id} if block.wipc else set()
    for series in block.series:
        for round_number in range(1, series.max_rounds + 1):
            ids.update(series.run_id(round_number, cell) for cell in series.cells)
    ids.update(segment.run_id for segment in block.segments)
    ids.update(capture.run_id for capture in block.captures)
    ids.update(prewrite.run_id for prewrite in block.prewrites)
    return ids


def supersede_block(state: dict, block: Block, files: Path) -> list[str]:
    """Set aside every run and the purge of `block` so that it starts again. Their files move under
    superseded/<attempt>/ and their entries to state["superseded_runs"]; nothing is deleted."""
    ids = block_run_ids(block)
    earlier = [
        entry.get("attempt", 0) for entry in state.get("superseded_runs", []) if entry.get("block") == block.label
    ]
    attempt = 1 + max(earlier, default=0)
    kept, moved = [], []
    for run in state["runs"]:
        if run["id"] not in ids:
            kept.append(run)
            continue
        entry = {**run, "block": block.label, "attempt": attempt}
        for key in ("job_file", "output_file", "smart_before", "smart_after"):
            rel = run.get(key)
            if not rel:
                continue
            new_rel = f"superseded/{block.label}-{attempt}/{rel}"
            target = files / new_rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if (files / rel).exists():
                os.replace(files / rel, target)
            entry[key] = new_rel
        if run.get("log_files"):
            entry["log_files"] = []
            for rel in run["log_files"]:
                new_rel = f"superseded/{block.label}-{attempt}/{rel}"
                (files / new_rel).parent.mkdir(parents=True, exist_ok=True)
                if (files / rel).exists():
                    os.replace(files / rel, files / new_rel)
                entry["log_files"].append(new_rel)
        moved.append(entry)
    state["runs"] = kept
    state.setdefault("superseded_runs", []).extend(moved)
    for purge in state["purges"]:
        if purge.get("block") == block.label and not purge.get("superseded"):
            purge["superseded"] = True
    if forget_stop := registry.hook(block.test, "forget_stop"):  # the block is run again: where it stopped goes
        forget_stop(state, block.test)
    state.setdefault("blocks_done", [])
    state["blocks_done"] = [label for label in state["blocks_done"] if label != block.label]
    return [run["id"] for run in moved]


def account_for_interruption(runner, now: str) -> None:
    """Record the gap before this session; a gap that broke a test sets its runs aside to start it again."""
    gap = interruption(runner.state, now=now)
    if "position" not in runner.state and runner.state["runs"]:
        # a run directory of an earlier client does not say where it stopped: assume inside the last run's test
        last = runner.state["runs"][-1]["id"]
        block = next((b for b in runner.plan.blocks if last in block_run_ids(b)), None)
        if block is not None:
            gap.update(block=block.label, action="restart", reason="the checkpoint does not say where it stopped")
    if gap["action"] == "restart":
        block = next(b for b in runner.plan.blocks if b.label == gap["block"])
        gap["superseded_runs"] = supersede_block(runner.state, block, runner.files)
        runner.completed = {run["id"]: run for run in runner.state["runs"]}
        runner.summaries = {}
        runner.state["position"] = {"block": block.label, "stage": "purge"}
    runner.state.setdefault("interruptions", []).append(gap)
    logger.info("interruption of %.0f s (%s): %s", gap["length_s"], gap["action"], gap["reason"])
