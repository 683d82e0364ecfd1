"""The server's check that a HIR/XSR run is a segment of the plan it declares (crosscheck.check_run_against_plan)."""

from __future__ import annotations

from collections.abc import Mapping

RUNTIME_TOLERANCE_S = 0.5


def segment_of(run: Mapping, blocks: list[Mapping]) -> Mapping | None:
    for block in blocks:
        for segment in block.get("segments") or []:
            if isinstance(segment, Mapping) and segment.get("run_id") == run.get("id"):
                return segment
    return None


def segment_problems(run: Mapping, segment: Mapping) -> list[str]:
    """What differs between the run entry and its planned segment (empty when nothing does)."""
    problems = []
    for key in ("phase", "pattern", "block_size_bytes", "threads", "iodepth"):
        if run.get(key) != segment.get(key):
            problems.append(f"{key} {str(run.get(key))[:40]} where the plan says {str(segment.get(key))[:40]}")
    problems += runtime_problems(run, segment)
    return problems


def runtime_problems(run: Mapping, planned_run: Mapping) -> list[str]:
    """[why] when the run's declared runtime is not the planned one within RUNTIME_TOLERANCE_S (or either is not a
    number), else []. Shared by the segment, capture and pre-write checks."""
    declared, planned = run.get("runtime_s"), planned_run.get("runtime_s")
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (declared, planned))
    if not numbers or abs(float(declared) - float(planned)) > RUNTIME_TOLERANCE_S:
        return [f"runtime {str(declared)[:20]} s where the plan says {str(planned)[:20]} s"]
    return []
