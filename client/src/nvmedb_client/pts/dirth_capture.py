"""DIRTH's response-time histogram captures: after the TC x QD sweep, one longer fio run at each operating point
(MaxIOPS, MidIOPS, MinIOPS), at the TC/QD the sweep's raw outputs give that point, with the sweep's stimulus. The
histogram of each point is read from its capture; `verify` and the server re-derive the operating points from the
sweep and accept a capture only if it ran at its point's TC/QD (see docs/methodology.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from nvmedb_client.fio_output import FioOutputError
from nvmedb_client.pts import dirth

PHASE = "capture"
# 10 minutes per operating point, MaxIOPS then MidIOPS then MinIOPS: the ADATA/CloudHarmony PTS 2.x port's DIRTH
# ("Test Flow 6"); the PTS-E text itself was not at hand (see the methodology part for the source and differences).
CAPTURE_S = 600
# quick profile: a capture lasts a few sweep cells, so every quick test still fits in a few minutes
QUICK_CAPTURE_CELLS = 3
SOURCE_CAPTURE = "capture"
SOURCE_SWEEP = "sweep cell"
MISMATCH_FLAG = "dirth_capture_mismatch"
MISSING_FLAG = "dirth_capture_missing"
DECIDED = "TC/QD decided after the sweep, from the operating point the sweep's raw outputs give"


@dataclass(frozen=True)
class Capture:
    """One planned capture run: its operating point and length; its TC/QD is known only after the sweep."""

    run_id: str
    test: str
    point: str  # max | mid | min
    runtime_s: float

    def to_dict(self) -> dict:
        return capture_to_dict(self)


def run_id(point: str) -> str:
    return f"dirth-capture-{point}"


def plan_captures(profile) -> tuple[Capture, ...]:
    """One capture per operating point, in the order MaxIOPS, MidIOPS, MinIOPS."""
    quick = profile.name == "quick"
    runtime = profile.cell_runtime_s * QUICK_CAPTURE_CELLS if quick else CAPTURE_S
    return tuple(Capture(run_id(name), "dirth", name, runtime) for name in dirth.OPERATING_POINTS)


def capture_to_dict(capture: Capture) -> dict:
    return {
        "run_id": capture.run_id,
        "test": capture.test,
        "phase": PHASE,
        "point": capture.point,
        "runtime_s": capture.runtime_s,
        "threads": None,
        "iodepth": None,
        "decided": DECIDED,
    }


def describe(captures: Sequence[Mapping]) -> list[str]:
    """The `nvmedb-client plan` lines of a block's captures."""
    if not captures:
        return []
    names = ", ".join(f"{c['point']} ({c['runtime_s']:g} s)" for c in captures)
    return [
        f"  captures: {len(captures)} fio run(s) after the sweep, one per operating point: {names}",
        f"    {DECIDED}; same stimulus; the response-time histogram of each point is read from its capture",
    ]


# -- the histograms from the captures -------------------------------------------------------------------------------


def capture_runs(runs: Sequence[Mapping], test: str) -> list[Mapping]:
    return [r for r in runs if r.get("test") == test and r.get("phase") == PHASE]


def histograms(
    operating_points: Sequence[Mapping], captures: Sequence[Mapping], load: Callable[[str], Mapping], histogram_entry
) -> list[dict]:
    """One histogram entry per operating point the sweep gives, from the capture of that point, checked to have run
    at the point's TC/QD (in the manifest's run entry and in fio's own record of its options). A capture at another
    TC/QD, or none, leaves the point without a histogram, with the reason and a flag; it is never re-labelled."""
    by_id = {r.get("id"): r for r in captures}
    out = []
    for op in operating_points:
        if "threads" not in op:
            continue
        name = op["name"]
        run = by_id.get(run_id(name))
        base = {"point": name, "source": SOURCE_CAPTURE}
        if run is None:
            reason = f"no capture run of {name} (TC {op['threads']}/QD {op['iodepth']}) is in the bundle"
            out.append({**base, "missing": reason, "flag": MISSING_FLAG})
            continue
        base["run_id"] = run["id"]
        problem = _mismatch(op, run, load)
        if problem:
            out.append({**base, "missing": problem, "flag": MISMATCH_FLAG})
            continue
        out.append({**histogram_entry(op, run, load), "source": SOURCE_CAPTURE})
    return out


def _mismatch(op: Mapping, run: Mapping, load: Callable[[str], Mapping]) -> str | None:
    want = (op["threads"], op["iodepth"])
    claimed = (run.get("threads"), run.get("iodepth"))
    if claimed != want:
        return (
            f"the capture {run['id']} ran at TC {claimed[0]}/QD {claimed[1]}, not at the TC {want[0]}/QD {want[1]} "
            f"the sweep gives {op['name']}: its histogram is not this point's"
        )
    recorded, why = recorded_point(load, run)
    if recorded is None:
        return f"the capture {run['id']} cannot be checked against its point: {why}"
    if recorded != want:
        return (
            f"fio's output of the capture {run['id']} records TC {recorded[0]}/QD {recorded[1]}, not the TC "
            f"{want[0]}/QD {want[1]} of {op['name']}: its histogram is not this point's"
        )
    return None


def recorded_point(load: Callable[[str], Mapping], run: Mapping) -> tuple[tuple[int, int] | None, str | None]:
    """(numjobs, iodepth) as fio recorded its own options in the capture's JSON output (job options over global
    ones, fio's defaults 1 and 1), or (None, why) when the output does not say."""
    try:
        doc = load(run["output_file"])
    except (FioOutputError, OSError, KeyError) as exc:
        return None, f"its fio output cannot be read: {exc}"
    global_options = doc.get("global options")
    jobs = doc.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        return None, "its fio output has no jobs"
    seen = set()
    for job in jobs:
        options = {**(global_options if isinstance(global_options, dict) else {})}
        job_options = job.get("job options") if isinstance(job, dict) else None
        options.update(job_options if isinstance(job_options, dict) else {})
        values = []
        for key in ("numjobs", "iodepth"):
            text = options.get(key, "1")
            if not isinstance(text, str) or not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 65536:
                return None, f"its fio output records {key}={text!r}, not a whole number"
            values.append(int(text))
        seen.add(tuple(values))
    if len(seen) != 1:
        return None, "its fio output records jobs with different thread counts or queue depths"
    return seen.pop(), None
