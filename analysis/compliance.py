"""Compliance means the plan ran: the server's own verdict on whether a client bundle is a PTS result.

The manifest's `compliance.compliant` is only the client's claim; it can lower the verdict, never raise it. A run is
PTS-compliant only when the server finds, in what the bundle holds:

- the pts profile on a device target;
- the manifest's plan is the PTS plan for its edition and tests (`nvmedb_client.plan.build_plan`, the same planner
  the client runs): cells, threads, depth, cell time, round limit, preconditioning and timed runs;
- for each test: every cell of that plan ran in every round of each series, from round 1 to the last round the
  bundle holds, with a readable fio output (the runs themselves are counted, not the plan the manifest declares);
- each series stopped as the PTS allows: at steady state as the server re-derives it (`bundle_reader._steady_state`)
  or at the PTS round limit (the plan's `max_rounds`, `steady_state.DEFAULT_MAX_ROUNDS` = 25); WSAT after 4x the capacity written or its time limit;
- every timed run of the plan (HIR/XSR segments, DIRTH captures and pre-writes) and every WIPC ran.

Record-level failures (profile, target, plan) go into `record.compliance_reasons`; a test's own failures into its
`TestRunRecord.compliance_reasons`, so a full IOPS test stays compliant beside a latency test cut short. Every other
server check (run conditions, plausibility, `analysis.consistency`) lowers the verdict too, before this one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from analysis.records import SubmissionRecord, TestRunRecord
from nvmedb_client import plan as pts_plan
from nvmedb_client.tracking import TESTS_WITH_STEADY_STATE

NOT_CLAIMED = "the client did not declare it compliant"


def apply(record: SubmissionRecord, *, manifest: Mapping, runs: Sequence[Mapping]) -> list[str]:
    """Lower `record` (and its test runs) to what the server finds; return the reasons it added."""
    added: list[str] = []

    def add(reasons: list[str], reason: str) -> None:
        reason = reason[:300]
        if reason not in reasons:
            reasons.append(reason)
            added.append(reason)

    compliance = manifest.get("compliance") if isinstance(manifest.get("compliance"), Mapping) else {}
    if compliance.get("compliant") is not True:
        record.compliant = False
        if not record.compliance_reasons:  # never non-compliant without a reason
            add(record.compliance_reasons, NOT_CLAIMED)
    problems, reference = _record_problems(record)
    for problem in problems:
        record.compliant = False
        add(record.compliance_reasons, problem)
    if reference is None:
        return added
    measured = {m.run_key for tr in record.test_runs for m in tr.measurements}  # a readable fio output each
    ran = {str(run.get("id")): run for run in runs if str(run.get("id")) in measured}
    by_test = {tr.test: tr for tr in record.test_runs}
    for block in reference.blocks:
        test_run = by_test.get(block.test)
        if test_run is None:
            continue
        for problem in block_problems(block, reference, ran, test_run):
            add(test_run.compliance_reasons, problem)
    return added


def _record_problems(record: SubmissionRecord) -> tuple[list[str], pts_plan.Plan | None]:
    """The record-level reasons, and the PTS plan the runs are counted against (None when there is none)."""
    if record.source != "client":
        return [], None
    if record.profile != "pts":
        return [f"the {record.profile or 'unnamed'} profile is not the PTS: only the pts profile runs its plan"], None
    if record.target_kind != "device":
        return [f"a {record.target_kind or 'unknown'} target is not a drive: the PTS measures a device"], None
    plan = record.plan if isinstance(record.plan, Mapping) else {}
    reference, why = reference_plan(plan, record.edition)
    if reference is None:
        return [f"the PTS plan cannot be rebuilt from the manifest's plan: {why}"], None
    problems = [f"the PTS plan itself is not compliant here: {reason}" for reason in reference.compliance_reasons]
    difference = plan_difference(plan, reference)
    if difference:
        problems.append(f"the manifest's plan is not the PTS plan for the {record.edition} edition: {difference}")
    return problems, reference


def reference_plan(plan: Mapping, edition: str) -> tuple[pts_plan.Plan | None, str]:
    """The PTS plan of the manifest plan's PTS tests, edition, capacity and LBA size (the client's own planner)."""
    tests = plan.get("tests")
    if not isinstance(tests, list) or not tests:
        return None, "it names no tests"
    pts_tests = [str(t) for t in tests if t not in pts_plan.EXTENSIONS]
    if not pts_tests:
        return None, "it names no PTS test"
    lba = plan.get("lba_size_bytes")
    try:
        built = pts_plan.build_plan(
            tests=pts_tests,
            edition=edition,
            profile="pts",
            capacity_bytes=int(plan.get("capacity_bytes")),
            target_kind="device",
            lba_size_bytes=int(lba) if lba is not None else None,
        )
    except (TypeError, ValueError, OverflowError) as exc:
        return None, str(exc)[:200]
    return built, ""


def _json(value):
    return json.loads(json.dumps(value, default=str))


def _plan_shape(plan: Mapping) -> dict:
    """What a plan commits a run to: edition, sizes, rounds, and per block its purge, WIPC, series (every field of
    every cell) and timed runs. Descriptions and estimates, which change between client versions, are left out."""
    blocks = []
    for block in plan.get("blocks") or []:
        if not isinstance(block, Mapping) or block.get("test") in pts_plan.EXTENSIONS:
            continue
        series = [
            {key: s.get(key) for key in ("phase", "threads", "iodepth", "runtime_s", "max_rounds", "cells")}
            for s in block.get("series") or []
            if isinstance(s, Mapping)
        ]
        blocks.append(
            {
                **{key: block.get(key) for key in ("test", "label", "purge", "wipc")},
                "series": series,
                **{key: block.get(key) or [] for key in ("segments", "captures", "prewrites")},
            }
        )
    edition = plan.get("edition")
    return {
        "edition": edition.get("name") if isinstance(edition, Mapping) else edition,
        "tests": [t for t in plan.get("tests") or [] if t not in pts_plan.EXTENSIONS],
        **{key: plan.get(key) for key in ("threads", "iodepth", "max_rounds", "active_range_bytes", "lba_size_bytes")},
        "blocks": blocks,
    }


def plan_difference(plan: Mapping, reference: pts_plan.Plan) -> str:
    """'' when `plan` commits to what the PTS plan does, else the first difference, in words."""
    try:
        declared = _json(_plan_shape(plan))
    except (TypeError, ValueError, AttributeError):
        return "it cannot be read"
    expected = _json(_plan_shape(pts_plan.plan_to_dict(reference)))
    for key in ("edition", "tests", "threads", "iodepth", "max_rounds", "active_range_bytes", "lba_size_bytes"):
        if declared.get(key) != expected.get(key):
            return f"its {key} is {_shown(declared.get(key))} where the PTS plan's is {_shown(expected.get(key))}"
    if len(declared["blocks"]) != len(expected["blocks"]):
        return f"it has {len(declared['blocks'])} test blocks where the PTS plan has {len(expected['blocks'])}"
    for mine, theirs in zip(declared["blocks"], expected["blocks"], strict=True):
        for key, value in theirs.items():
            if mine.get(key) != value:
                return f"its {theirs['label']} block's {key} differs (the PTS plan's: {_shown(value)})"
    return ""


def _shown(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _cell_key(cell: pts_plan.Cell) -> tuple:
    return (cell.pattern, cell.block_size_bytes, cell.read_pct, cell.threads, cell.iodepth)


def _run_cell(run: Mapping, cells: list[tuple]) -> tuple | None:
    """The planned cell `run` is a round of (None when it is none of a series' `cells`, its _cell_keys)."""
    base = (run.get("pattern"), run.get("block_size_bytes"), run.get("read_pct"))
    # compared, never hashed: a hostile run's values may be unhashable
    for key in ((*base, run.get("threads"), run.get("iodepth")), (*base, None, None)):
        if key in cells:
            return cells[cells.index(key)]  # the plan's cell, the first equal to the run's
    return None


def _round(run: Mapping) -> int | None:
    value = run.get("round")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def block_problems(
    block: pts_plan.Block, reference: pts_plan.Plan, ran: Mapping[str, Mapping], test_run: TestRunRecord
) -> list[str]:
    """Why the runs of `block` are not the whole of it: cells, rounds, the stop rule, the WIPC and timed runs."""
    test_runs = [run for run in ran.values() if run.get("test") == block.test]
    problems = []
    wipc = [run for run in test_runs if run.get("phase") == "wipc"]
    # the block's own WIPC: its run id, or its block size (a throughput block is preconditioned with its own)
    if block.wipc and not any(
        str(run.get("id")) == block.wipc_run_id or run.get("block_size_bytes") == block.wipc_block_size_bytes
        for run in wipc
    ):
        problems.append(f"{block.label}: its preconditioning (WIPC) did not run")
    by_series: list[dict[int, set]] = []
    for series in block.series:
        rounds: dict[int, set] = {}
        cells = [_cell_key(c) for c in series.cells]  # listed once for all the block's runs
        for run in test_runs:
            if run.get("phase") != series.phase or _round(run) is None:
                continue
            cell = _run_cell(run, cells)
            if cell is not None:
                rounds.setdefault(_round(run), set()).add(cell)
        by_series.append(rounds)
    block_last = max((max(rounds, default=0) for rounds in by_series), default=0)
    for series, rounds in zip(block.series, by_series, strict=True):
        name = block.label if len(block.series) == 1 else f"{block.label} {series.phase}"
        # an interleaved block (throughput) runs each round through every series: its rounds end together
        last = block_last if block.interleaved else max(rounds, default=0)
        problems += _series_problems(series, name, rounds, last, reference, test_run)
    timed = [*block.segments, *block.captures]
    timed += [p for p in block.prewrites if p.round is None or p.round <= block_last]
    missing = [t.run_id for t in timed if t.run_id not in ran]
    if missing:
        problems.append(
            f"{block.label}: {len(timed) - len(missing)} of the plan's {len(timed)} timed runs ran "
            f"(first missing: {missing[0]})"
        )
    return problems


def _series_problems(
    series: pts_plan.Series,
    name: str,
    rounds: Mapping[int, set],
    last: int,
    reference: pts_plan.Plan,
    test_run: TestRunRecord,
) -> list[str]:
    planned = {_cell_key(c) for c in series.cells}
    total = len(planned)
    if not rounds:
        return [f"{name}: none of the plan's {total} cells ran"]
    problems = []
    ran_cells = set().union(*rounds.values())
    if len(ran_cells) < total:
        problems.append(f"{name}: {len(ran_cells)} of the plan's {total} cells ran")
    short = [r for r in range(1, last + 1) if len(rounds.get(r, ())) < total]
    if short and len(ran_cells) == total:
        first = short[0]
        problems.append(
            f"{name}: {len(short)} of its {last} rounds lack cells of the plan "
            f"(round {first}: {len(rounds.get(first, ()))} of {total} cells)"
        )
    if series.phase == "wsat":
        written = sum(
            m.summary.write_bytes or 0 for m in test_run.measurements if m.phase == "wsat" and m.summary is not None
        )
        if written < reference.wsat_target_bytes and last < series.max_rounds:
            problems.append(
                f"{name}: stopped after {last} samples and {written} bytes written (the PTS runs WSAT until "
                f"{pts_plan.WSAT_CAPACITY_MULTIPLE}x the capacity, {reference.wsat_target_bytes} bytes, is written "
                f"or for {series.max_rounds} samples)"
            )
        return problems
    if series.test not in TESTS_WITH_STEADY_STATE or not pts_plan.series_tracking(series):
        return problems
    windows = [
        w
        for w in test_run.windows
        if w.phase == series.phase and (series.test != "tp" or w.block_size_bytes == series.tp_block_size_bytes)
    ]
    steady = bool(windows) and all(w.steady and w.steady_round is not None for w in windows)
    if not steady and last < series.max_rounds:
        problems.append(
            f"{name}: steady state not reached after {last} rounds (the PTS allows stopping only at steady state "
            f"or after {series.max_rounds})"
        )
    return problems
