"""The server's check that a DIRTH capture run is one the plan declares (crosscheck.check_run_against_plan). Its TC
and QD are decided after the sweep, so here they need only be a cell of the sweep; whether they are the operating
point's is the derivation's check (analysis.pts.demand_intensity), which flags a mismatch rather than rejecting."""

from __future__ import annotations

from collections.abc import Mapping

from analysis.pts.segments import runtime_problems
from nvmedb_client.pts import dirth_capture


def capture_of(run: Mapping, blocks: list[Mapping]) -> tuple[Mapping, Mapping] | None:
    """(the planned capture, its block) whose run id is the run's, or None when the run is no capture."""
    for block in blocks:
        for capture in as_list(block.get("captures")):
            if isinstance(capture, Mapping) and capture.get("run_id") == run.get("id"):
                return capture, block
    return None


def capture_problems(run: Mapping, capture: Mapping, block: Mapping) -> list[str]:
    """What differs between the run entry and its planned capture (empty when nothing does): it must issue the
    stimulus of one of the sweep's cells, at that cell's TC/QD, for the planned length."""
    problems = [] if run.get("phase") == dirth_capture.PHASE else [f"phase {str(run.get('phase'))[:40]} is no capture"]
    keys = ("pattern", "block_size_bytes", "read_pct", "threads", "iodepth")
    cells = [
        tuple(cell.get(key) for key in keys)
        for series in as_list(block.get("series"))
        if isinstance(series, Mapping)
        for cell in as_list(series.get("cells"))
        if isinstance(cell, Mapping)
    ]
    if tuple(run.get(key) for key in keys) not in cells:
        shown = ", ".join(f"{key} {str(run.get(key))[:20]}" for key in keys)
        problems.append(f"{shown} is no cell of the plan's sweep")
    problems += runtime_problems(run, capture)
    return problems


def as_list(value) -> list:
    """A list from the bundle's plan, or nothing: the plan is the client's word and may have any shape."""
    return value if isinstance(value, list) else []
