"""Rows of the HIR and XSR results of a submission (called by services.store_submission, in its transaction)."""

from __future__ import annotations

import math

from analysis.models.recovery import MAX_POINTS_PER_SEGMENT, HirWaitState, RecoveryPoint, XsrGroup
from nvmedb.bulk import insert_rows
from nvmedb_client.pts.derive import claim, differences


def insert_recovery(pairs) -> None:
    """`pairs`: (TestRun row, TestRunRecord) of one submission. Three batched inserts whatever the run's size."""
    states, groups, points = [], [], []
    for test_run, test_record in pairs:
        recovery = test_record.recovery
        if not recovery:
            continue
        result, claimed = recovery["result"], recovery.get("claim") or {}
        if test_record.test == "hir":
            offsets = _offsets(result["wait_states"], lambda s: s.get("segment_s") or 0.0)
            for state, offset in zip(result["wait_states"], offsets, strict=True):
                states.append(_state_row(test_run, result, state, _claimed(claimed, "wait_states", state)))
                points += _hir_points(test_run, state, offset)
        elif test_record.test == "xsr":
            offsets = _offsets(result["groups"], lambda g: g["runtime_s"])
            for group, offset in zip(result["groups"], offsets, strict=True):
                groups.append(_group_row(test_run, group, _claimed(claimed, "groups", group)))
                series = [(offset + t / 1000, v) for t, v in group["series"]]
                points += [
                    RecoveryPoint(test_run=test_run, stage=group["index"], kind="tp", t_s=t, value=v)
                    for t, v in _bounded(series)
                ]
    insert_rows(states)
    insert_rows(groups)
    insert_rows(points)


def _offsets(stages: list[dict], length) -> list[float]:
    """Where each stage starts on the test's timeline: the planned lengths of the stages before it."""
    out, at = [], 0.0
    for stage in stages:
        out.append(at)
        at += float(length(stage))
    return out


def _claimed(claimed: dict, key: str, stage: dict) -> dict | None:
    return next((c for c in claimed.get(key) or [] if c.get("index") == stage["index"]), None)


def _state_row(test_run, result: dict, state: dict, claimed: dict | None) -> HirWaitState:
    baseline = result["baseline"]
    return HirWaitState(
        test_run=test_run,
        index=state["index"],
        idle_s=state["idle_s"],
        burst_s=state["burst_s"],
        bursts_planned=state["bursts_planned"],
        bursts_measured=state["bursts_measured"],
        baseline_iops=baseline["iops"],
        baseline_steady=bool(baseline["steady"]),
        recovery_iops=state["recovery_iops"],
        recovery_ratio=state["recovery_ratio"],
        recovered=state["recovered"],
        return_iops=state["baseline_run_iops"],
        missing=state.get("missing", ""),
        claimed=claimed,
        claim_differs=claimed is None or bool(differences(claimed, claim(state))),
    )


def _group_row(test_run, group: dict, claimed: dict | None) -> XsrGroup:
    return XsrGroup(
        test_run=test_run,
        index=group["index"],
        pattern=group["pattern"],
        block_size_bytes=group["block_size_bytes"],
        runtime_s=group["runtime_s"],
        interval_s=group["interval_ms"] / 1000,
        mean_bytes_per_s=group["mean_bytes_per_s"],
        final_bytes_per_s=group["final_bytes_per_s"],
        recover_s=group["recover_s"],
        recovered=bool(group["recovered"]),
        log_gaps=len(group["log_gaps"]),
        missing=group.get("missing", ""),
        claimed=claimed,
        claim_differs=claimed is None or bool(differences(claimed, claim(group))),
    )


def _hir_points(test_run, state: dict, offset: float) -> list[RecoveryPoint]:
    rows = []
    times = state.get("burst_times_ms") or []
    for k, (t, value) in enumerate(zip(times, state["burst_iops"], strict=False)):
        if t is None or value is None:
            continue
        kind = "first" if k == 0 else "burst"
        rows.append(
            RecoveryPoint(test_run=test_run, stage=state["index"], kind=kind, t_s=offset + t / 1000, value=value)
        )
    rows = rows[:MAX_POINTS_PER_SEGMENT]
    wait_s = state.get("wait_segment_s") or 0.0
    baseline = [(offset + wait_s + t / 1000, v) for t, v in state["baseline_series"]]
    rows += [
        RecoveryPoint(test_run=test_run, stage=state["index"], kind="baseline", t_s=t, value=v)
        for t, v in _bounded(baseline)
    ]
    return rows


def _bounded(series: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """At most MAX_POINTS_PER_SEGMENT points: consecutive intervals averaged in equal groups (time of the first)."""
    if len(series) <= MAX_POINTS_PER_SEGMENT:
        return series
    size = math.ceil(len(series) / MAX_POINTS_PER_SEGMENT)
    return [
        (series[i][0], sum(v for _, v in series[i : i + size]) / len(series[i : i + size]))
        for i in range(0, len(series), size)
    ]
