"""Evidence gates: the target's sizes, and whether a compliance claim is backed by what a PTS run leaves behind."""

from __future__ import annotations

from collections.abc import Mapping

from analysis.plausibility.limits import HOLD, REJECT, GateFailure, finite, show
from analysis.records import SubmissionRecord
from nvmedb_client.plan import EXTENSIONS, build_plan, plan_to_dict


def check_sizes(record: SubmissionRecord) -> list[GateFailure]:
    """The target's size and active range are finite, ≥ 0, and the active range lies inside the target."""
    size, active = record.target_size_bytes, record.active_range_bytes
    failures = [
        GateFailure("sizes", REJECT, f"the target's {name} is {show(value)}, not a finite number ≥ 0")
        for name, value in (("size_bytes", size), ("active_range_bytes", active))
        if value is not None and (not finite(value) or value < 0)
    ]
    if not failures and size is not None and active is not None and active > size:
        failures.append(GateFailure("sizes", REJECT, f"the active range ({active} B) exceeds the target ({size} B)"))
    return failures


def _plan_shape(plan: Mapping) -> list:
    """The PTS blocks' shape; an extension's block (the surface, any grid) is never part of the PTS plan."""

    def series(s: Mapping) -> tuple:
        cells = sorted(
            (str(c.get("pattern")), c.get("block_size_bytes"), c.get("read_pct"))
            for c in s.get("cells") or []
            if isinstance(c, Mapping)
        )
        return (s.get("phase"), s.get("threads"), s.get("iodepth"), s.get("runtime_s"), s.get("max_rounds"), cells)

    return [
        (b.get("test"), bool(b.get("purge")), bool(b.get("wipc")), [series(s) for s in b.get("series") or []])
        for b in plan.get("blocks") or []
        if isinstance(b, Mapping) and b.get("test") not in EXTENSIONS
    ]


def reference_plan(plan: Mapping, edition: str) -> dict | None:
    """The plan a PTS run of these tests on a device of the plan's capacity must follow, from the client's own
    planner, of its PTS tests only (an extension such as the surface is never part of it, whatever its grid); None
    when the plan does not say enough to rebuild it."""
    try:
        built = build_plan(
            tests=[str(t) for t in plan.get("tests") or [] if t not in EXTENSIONS],
            edition=edition,
            profile="pts",
            capacity_bytes=int(plan.get("capacity_bytes")),
            target_kind="device",
        )
    except (TypeError, ValueError, OverflowError):
        return None
    return plan_to_dict(built)


def check_compliance_claim(record: SubmissionRecord) -> list[GateFailure]:
    """A bundle that declares itself compliant must show it: the pts profile, a device target, the PTS plan itself
    (cells, threads, depth, 60-second cells, round limit), and a purge that is not blkdiscard. A false claim is held."""
    if record.source != "client" or not record.compliant:
        return []
    problems = []
    if record.profile != "pts":
        problems.append(f"the {record.profile or 'unnamed'} profile is not the PTS")
    if record.target_kind != "device":
        problems.append(f"a {record.target_kind or 'unknown'} target is not a drive")
    plan = record.plan if isinstance(record.plan, Mapping) else {}
    reference = reference_plan(plan, record.edition) if plan.get("blocks") else None
    if reference is None:
        problems.append("the bundle has no plan the PTS plan can be rebuilt from")
    elif _plan_shape(plan) != _plan_shape(reference):
        problems.append("its plan is not the PTS plan for these tests (cells, threads, depth, cell time or rounds)")
    if not record.purge_method:
        problems.append("no purge is recorded")
    elif record.purge_method.startswith("blkdiscard"):
        problems.append("purged with blkdiscard, not a Format or Sanitize")
    if not problems:
        return []
    return [GateFailure("compliance_evidence", HOLD, "declared PTS-compliant, but " + "; ".join(problems))]
