"""The server's check that a DIRTH pre-write run is one the plan declares (crosscheck.check_run_against_plan): the
port's random writes before each round of the sweep (at the plan's TC/QD) or before each capture (at the TC/QD of a
cell of the sweep, decided after it like the capture's). A pre-write is no cell of the sweep: the derivation of the
curve and the operating points never reads it (it reads only the sweep's `wdpc` runs)."""

from __future__ import annotations

from collections.abc import Mapping

from analysis.pts.captures import as_list
from analysis.pts.segments import runtime_problems
from nvmedb_client.pts import dirth_prewrite


def prewrite_of(run: Mapping, blocks: list[Mapping]) -> tuple[Mapping, Mapping] | None:
    """(the planned pre-write, its block) whose run id is the run's, or None when the run is no planned pre-write."""
    for block in blocks:
        for prewrite in as_list(block.get("prewrites")):
            if isinstance(prewrite, Mapping) and prewrite.get("run_id") == run.get("id"):
                return prewrite, block
    return None


def prewrite_problems(run: Mapping, prewrite: Mapping, block: Mapping) -> list[str]:
    """What differs between the run entry and its planned pre-write (empty when nothing does)."""
    problems = (
        [] if run.get("phase") == dirth_prewrite.PHASE else [f"phase {str(run.get('phase'))[:40]} is no pre-write"]
    )
    for key in ("pattern", "block_size_bytes", "read_pct"):
        if run.get(key) != prewrite.get(key):
            problems.append(f"{key} {str(run.get(key))[:20]} where the plan says {str(prewrite.get(key))[:20]}")
    at = (run.get("threads"), run.get("iodepth"))
    if prewrite.get("point") is not None:  # TC/QD decided after the sweep: one of its cells
        cells = [
            (cell.get("threads"), cell.get("iodepth"))
            for series in as_list(block.get("series"))
            if isinstance(series, Mapping)
            for cell in as_list(series.get("cells"))
            if isinstance(cell, Mapping)
        ]
        if at not in cells:
            problems.append(f"TC {str(at[0])[:20]}/QD {str(at[1])[:20]} is no cell of the plan's sweep")
    elif at != (prewrite.get("threads"), prewrite.get("iodepth")):
        planned = f"TC {str(prewrite.get('threads'))[:20]}/QD {str(prewrite.get('iodepth'))[:20]}"
        problems.append(f"TC {str(at[0])[:20]}/QD {str(at[1])[:20]} where the plan says {planned}")
    problems += runtime_problems(run, prewrite)
    return problems
