"""The plan as `nvmedb-client plan --json` prints it and as the manifest's `plan` key stores it."""

from __future__ import annotations

from dataclasses import asdict

from nvmedb_client.plan_estimates import (
    bundle_bytes_per_run,
    count_runs,
    estimate_bundle_bytes,
    estimate_duration,
    wipc_bytes,
    wipc_range_bytes,
)
from nvmedb_client.plan_types import (
    STOP_REPETITIONS,
    STOP_WRITTEN,
    WIPC_BLOCK_SIZE,
    WIPC_PASSES,
    WSAT_CAPACITY_MULTIPLE,
    Block,
    Cell,
    Plan,
    Series,
    format_seconds,
)
from nvmedb_client.steady_state import MAX_DATA_EXCURSION, MAX_SLOPE_EXCURSION, WINDOW_ROUNDS
from nvmedb_client.tracking import series_tracking


def plan_to_dict(plan: Plan) -> dict:
    """The plan as `nvmedb-client plan --json` prints it and as the manifest's `plan` key stores it."""
    duration = estimate_duration(plan)
    bundle_low, bundle_high = estimate_bundle_bytes(plan)
    runs_low, runs_high = count_runs(plan)
    return {
        "specification": "SNIA SSS PTS v2.0.2",
        "tests": list(plan.tests),
        "edition": {
            "name": plan.edition.name,
            "write_cache": "enabled" if plan.edition.write_cache_enabled else "disabled",
            "active_range_pct": plan.edition.active_range_pct,
            "threads": plan.edition.threads,
            "iodepth": plan.edition.iodepth,
        },
        "profile": {
            "name": plan.profile.name,
            "description": plan.profile.description,
            "cell_runtime_s": plan.profile.cell_runtime_s,
            "range_cap_bytes": plan.profile.range_cap_bytes,
        },
        "threads": plan.threads,
        "iodepth": plan.iodepth,
        "max_rounds": plan.max_rounds,
        "target_kind": plan.target_kind,
        "capacity_bytes": plan.capacity_bytes,
        "active_range_bytes": plan.active_range_bytes,
        "wipc": {
            "pattern": "write",
            "block_size_bytes": WIPC_BLOCK_SIZE,
            "bytes": wipc_bytes(plan),
            "range_bytes": wipc_range_bytes(plan),
            "rule": f"{WIPC_PASSES}x the user capacity, sequential, split between the jobs so every LBA "
            "is written exactly twice; 128 KiB blocks, or the block size under test for a throughput block",
        },
        "steady_state": {
            "window_rounds": WINDOW_ROUNDS,
            "max_data_excursion": MAX_DATA_EXCURSION,
            "max_slope_excursion": MAX_SLOPE_EXCURSION,
            "rule": "stop at the first round where every tracking variable of the series is steady over the last "
            f"{WINDOW_ROUNDS} rounds; otherwise stop at max rounds and record 'steady state not reached'",
        },
        "compliance": {"compliant": plan.compliant, "reasons": list(plan.compliance_reasons)},
        "lba_size_bytes": plan.lba_size_bytes,
        "extensions": {"surface": plan.surface.to_dict(target_kind=plan.target_kind)} if plan.surface else {},
        "skipped_cells": [
            {
                "test": s.test,
                "phase": s.phase,
                "pattern": s.cell.pattern,
                "block_size_bytes": s.cell.block_size_bytes,
                "read_pct": s.cell.read_pct,
                "reason": s.reason,
            }
            for s in plan.skipped_cells
        ],
        "blocks": [_block_to_dict(plan, block) for block in plan.blocks],
        "estimate": {
            "duration_s": {"min": round(duration.min_s, 1), "max": round(duration.max_s, 1)},
            "fio_runs": {"min": runs_low, "max": runs_high},
            "bundle_bytes": {"min": bundle_low, "max": bundle_high},
            "assumptions": list(duration.assumptions)
            + [
                f"{bundle_bytes_per_run(plan)} bytes per fio run in the compressed bundle (measured on real "
                f"{'quick runs' if plan.profile.name == 'quick' else 'PTS IOPS outputs'})"
            ],
        },
    }


def _block_to_dict(plan: Plan, block: Block) -> dict:
    return {
        "test": block.test,
        "label": block.label,
        "purge": block.purge,
        "wipc": {
            "run_id": block.wipc_run_id,
            "threads": block.wipc_threads,
            "block_size_bytes": block.wipc_block_size_bytes,
        }
        if block.wipc
        else None,
        "round": "each round runs one segment of every series in turn (write, then read), sequential positions "
        "continuing from the previous round"
        if block.interleaved
        else "each series runs its rounds to its own stop",
        "series": [_series_to_dict(plan, series) for series in block.series],
        **({"segments": [segment_to_dict(s) for s in block.segments]} if block.segments else {}),
        **({"captures": [c.to_dict() for c in block.captures]} if block.captures else {}),
        **({"prewrites": [p.to_dict() for p in block.prewrites]} if block.prewrites else {}),
    }


def segment_to_dict(segment) -> dict:
    data = asdict(segment)
    data["logs"] = list(segment.logs)
    return data


def _series_to_dict(plan: Plan, series: Series) -> dict:
    if series.stop == STOP_WRITTEN:
        stop = (
            f"stop when {WSAT_CAPACITY_MULTIPLE}x the capacity ({plan.wsat_target_bytes} bytes) is written "
            f"or after {format_seconds(plan.profile.wsat_max_s)} ({series.max_rounds} samples)"
        )
        tracking = []
    elif series.stop == STOP_REPETITIONS:
        stop = f"{series.max_rounds} interleaved repetition(s), no steady-state rule (nvmedb extension, not the PTS)"
        tracking = []
    else:
        stop = f"first steady round, at most {series.max_rounds} rounds"
        tracking = [
            {
                "id": v.id,
                "metric": v.metric,
                "block_size_bytes": v.block_size_bytes,
                "read_pct": v.read_pct,
                **({"threads": v.threads, "iodepth": v.iodepth} if v.threads else {}),
            }
            for v in series_tracking(series)
        ]
    return {
        "phase": series.phase,
        "threads": series.threads,
        "iodepth": series.iodepth,
        "runtime_s": series.runtime_s,
        "max_rounds": series.max_rounds,
        "cells": [_cell_to_dict(c) for c in series.cells],
        "tracking_variables": tracking,
        "stop_rule": stop,
    }


def _cell_to_dict(cell: Cell) -> dict:
    entry = {"pattern": cell.pattern, "block_size_bytes": cell.block_size_bytes, "read_pct": cell.read_pct}
    if cell.threads is not None:
        entry.update(threads=cell.threads, iodepth=cell.iodepth)
    if cell.workload is not None:
        entry["workload"] = cell.workload
    return entry
