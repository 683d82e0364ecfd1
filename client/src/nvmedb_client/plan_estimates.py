"""How long a plan takes, how many fio runs it makes and how large its bundle gets (`nvmedb-client plan` prints
them; the manifest's plan stores them). Steps whose length depends on the drive use the stated assumptions."""

from __future__ import annotations

from dataclasses import dataclass

from nvmedb_client.plan_types import KIB, RANGE_ALIGNMENT, WIPC_PASSES, Plan
from nvmedb_client.pts.estimates import log_bytes
from nvmedb_client.steady_state import WINDOW_ROUNDS

# Assumptions behind `estimate_duration` for steps whose length depends on the drive (documented in the plan output).
ASSUMED_SEQ_WRITE_BYTES_PER_S = 1_000_000_000
ASSUMED_RANDOM_WRITE_BYTES_PER_S = 500_000_000
ASSUMED_RUN_OVERHEAD_S = 0.35  # fio start-up and smart-log snapshots per fio run, measured with fio 3.33 on a 2-core VM

# Bundle size basis. pts: the 391 fio 3.8 json+ outputs of a real PTS IOPS run (60-second cells, shared samples
# `ssspt-hp-iops-1/`) compress with gzip to 5.5 KB on average and 8.2 KB at most, with completion-latency bins only;
# the total-latency bins every job file now asks for (lat_percentiles=1) add about 37 % (measured on a quick run's
# outputs with and without them), so 8 KiB per fio output. A job file, two smart-log JSON files and their tar headers
# add ~2.5 KiB; the system facts of a device (lspci -vvv, lshw -json, nvme id-ctrl...) about 256 KiB.
# quick: real quick runs of all four tests on a 256 MiB file (145-147 fio runs of 1-second cells) made bundles of
# 0.46 MiB on a quiet machine and 0.67 MiB on a loaded one (3.2 and 4.5 KiB per run for its fio output and job file,
# no smart-log on a file): a wider latency spread fills more json+ histogram bins. 3.5 KiB sits between the two;
# 4 KiB of system facts.
# The manifest is gzipped in the bundle with the rest: its ~1 KB per run compress to ~150 bytes.
FIO_OUTPUT_GZIP_BYTES = 8 * KIB
QUICK_RUN_GZIP_BYTES = 3584
RUN_EXTRA_GZIP_BYTES = 2560
SYSTEM_FILES_GZIP_BYTES = 256 * KIB
FILE_TARGET_SYSTEM_GZIP_BYTES = 4 * KIB
MANIFEST_GZIP_BYTES_PER_RUN = 150


def wipc_range_bytes(plan: Plan) -> int:
    """WIPC covers the whole user capacity (PTS: "2X user capacity"), not only the active range of the tests."""
    usable = plan.capacity_bytes
    if plan.profile.range_cap_bytes is not None:
        usable = min(usable, plan.profile.range_cap_bytes)
    return max(plan.active_range_bytes, usable // RANGE_ALIGNMENT * RANGE_ALIGNMENT)


def wipc_bytes(plan: Plan) -> int:
    return WIPC_PASSES * wipc_range_bytes(plan)


@dataclass(frozen=True)
class DurationEstimate:
    min_s: float  # every series steady at the earliest possible round (5)
    max_s: float  # every series runs to its round limit; WSAT to its time limit
    assumptions: tuple[str, ...]


def estimate_duration(plan: Plan, *, run_overhead_s: float = ASSUMED_RUN_OVERHEAD_S) -> DurationEstimate:
    """Bounds on the plan's wall time. Steps that depend on the drive's speed use the stated assumptions."""
    wipc_s = wipc_bytes(plan) / ASSUMED_SEQ_WRITE_BYTES_PER_S + run_overhead_s
    low = high = 0.0
    for block in plan.blocks:
        if block.wipc:
            low += wipc_s
            high += wipc_s
        for series in block.series:
            per_round = len(series.cells) * (series.runtime_s + run_overhead_s)
            if series.time_series:
                to_target = plan.wsat_target_bytes / ASSUMED_RANDOM_WRITE_BYTES_PER_S
                samples = min(series.max_rounds, max(1, -(-to_target // series.runtime_s)))
                low += samples * per_round
                high += series.max_rounds * per_round
            else:
                low += min(WINDOW_ROUNDS, series.max_rounds) * per_round
                high += series.max_rounds * per_round
        low += sum(run.runtime_s + run_overhead_s for run in block.timed_runs(fewest=True))
        high += sum(run.runtime_s + run_overhead_s for run in block.timed_runs(fewest=False))
    assumptions = (
        f"WIPC writes at {ASSUMED_SEQ_WRITE_BYTES_PER_S / 1e9:g} GB/s",
        f"WSAT random writes at {ASSUMED_RANDOM_WRITE_BYTES_PER_S / 1e9:g} GB/s for the lower bound",
        f"{run_overhead_s:g} s of start-up per fio run",
        "purge time is not included (seconds for a crypto erase, up to hours for a user-data erase)",
    )
    return DurationEstimate(min_s=low, max_s=high, assumptions=assumptions)


def count_runs(plan: Plan) -> tuple[int, int]:
    """(fewest, most) fio runs the plan can take."""
    low = high = 0
    for block in plan.blocks:
        low += int(block.wipc)
        high += int(block.wipc)
        for series in block.series:
            if series.time_series:
                to_target = plan.wsat_target_bytes / ASSUMED_RANDOM_WRITE_BYTES_PER_S
                low += int(min(series.max_rounds, max(1, -(-to_target // series.runtime_s))))
                high += series.max_rounds
            else:
                low += min(WINDOW_ROUNDS, series.max_rounds) * len(series.cells)
                high += series.max_rounds * len(series.cells)
        low += len(block.timed_runs(fewest=True))
        high += len(block.timed_runs(fewest=False))
    return low, high


def estimate_bundle_bytes(plan: Plan) -> tuple[int, int]:
    """(fewest, most) bytes of the compressed bundle; see FIO_OUTPUT_GZIP_BYTES for how the sizes were measured."""
    low_runs, high_runs = count_runs(plan)
    per_run = bundle_bytes_per_run(plan)
    system = SYSTEM_FILES_GZIP_BYTES if plan.target_kind == "device" else FILE_TARGET_SYSTEM_GZIP_BYTES
    logs = log_bytes(plan)
    return system + low_runs * per_run + logs, system + high_runs * per_run + logs


def bundle_bytes_per_run(plan: Plan) -> int:
    if plan.profile.name == "quick":
        run = QUICK_RUN_GZIP_BYTES + (RUN_EXTRA_GZIP_BYTES if plan.target_kind == "device" else 0)
    else:
        run = FIO_OUTPUT_GZIP_BYTES + RUN_EXTRA_GZIP_BYTES
    return run + MANIFEST_GZIP_BYTES_PER_RUN
