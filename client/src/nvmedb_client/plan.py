"""The SNIA SSS PTS v2.0.2 test plan as data: editions, profiles, tests, rounds and stop rules.

A plan is built once from the operator's choices (`build_plan`) and never changes while it runs: the runner walks it,
`nvmedb-client plan` prints it and the manifest stores it (`plan_to_dict`). Everything that departs from the
specification (the `quick` profile, a file target, a TC/QD or round-limit override) makes the plan non-compliant and
is listed in `compliance_reasons`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from nvmedb_client.pts import surface as surface_test
from nvmedb_client.steady_state import (
    DEFAULT_MAX_ROUNDS,
    MAX_DATA_EXCURSION,
    MAX_SLOPE_EXCURSION,
    WINDOW_ROUNDS,
)
from nvmedb_client.units import size_both

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

CORE_TESTS = ("iops", "tp", "lat", "wsat")
# nvmedb extensions run only when asked for (`--tests ...,surface`); they are never part of the PTS plan
EXTENSIONS = ("surface",)
# The other PTS tests (HIR, XSR, ECW, DIRTH and the WSAT optional workloads, nvmedb_client.pts) run only when asked
# for (`--tests`, or `--tests pts` for every PTS test of the edition): each of them can take many hours on a drive.
TESTS = (*CORE_TESTS, "hir", "xsr", "ecw", "dirth", "ws-oltp", "ws-vod", "ws-meta", "ws-comp", *EXTENSIONS)
DEFAULT_TESTS = CORE_TESTS
EDITION_NAMES = ("enterprise", "client")
ENTERPRISE_ONLY_TESTS = ("ecw", "dirth")  # the PTS defines them for enterprise drives only


def edition_tests(edition: str) -> tuple[str, ...]:
    """Every PTS test of `edition` (`--tests pts`): ECW and DIRTH are defined for enterprise drives only."""
    return tuple(
        t for t in TESTS if t not in EXTENSIONS and (edition == "enterprise" or t not in ENTERPRISE_ONLY_TESTS)
    )


PROFILE_NAMES = ("pts", "quick")

# PTS v2.0.2 IOPS test: R/W mix is the outer loop, block size the inner loop, in this order.
IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
IOPS_BLOCK_SIZES = (1024 * KIB, 128 * KIB, 64 * KIB, 32 * KIB, 16 * KIB, 8 * KIB, 4 * KIB, 512)
# PTS v2.0.2 latency test: mix outer loop (100/0, 65/35, 0/100), block size inner loop (0.5, 4, 8 KiB).
LAT_MIXES = (100, 65, 0)
LAT_BLOCK_SIZES = (512, 4 * KIB, 8 * KIB)
TP_BLOCK_SIZES = {"enterprise": (1024 * KIB, 128 * KIB), "client": (1024 * KIB,)}
# Throughput: one sequential stream, TC 1 / QD 32, in both editions, as the PTS 2.x throughput test sets it (SSSPT's
# throughput role cites "SSS PTS v2.0.1, page 36" for these values); see docs/methodology.md.
TP_THREADS = 1
TP_IODEPTH = 32
WSAT_BLOCK_SIZE = 4 * KIB
WIPC_BLOCK_SIZE = 128 * KIB
WIPC_PASSES = 2
WSAT_CAPACITY_MULTIPLE = 4
# The active range is a whole number of the largest block size, so every block size tiles it exactly and the
# WIPC split between jobs never leaves a partial block unwritten.
RANGE_ALIGNMENT = 1024 * KIB

QUICK_CELL_ENV = "NVMEDB_QUICK_CELL_S"

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


@dataclass(frozen=True)
class Edition:
    name: str
    write_cache_enabled: bool  # NVMe feature 0x06 (Volatile Write Cache)
    active_range_pct: int
    threads: int
    iodepth: int


EDITIONS = {
    "enterprise": Edition("enterprise", write_cache_enabled=False, active_range_pct=100, threads=4, iodepth=32),
    "client": Edition("client", write_cache_enabled=True, active_range_pct=75, threads=2, iodepth=16),
}


@dataclass(frozen=True)
class Profile:
    name: str
    cell_runtime_s: float
    max_rounds: int
    wsat_sample_s: float
    wsat_max_s: float
    range_cap_bytes: int | None  # quick: "small ranges"
    description: str


def pts_profile() -> Profile:
    return Profile(
        name="pts",
        cell_runtime_s=60,
        max_rounds=DEFAULT_MAX_ROUNDS,
        wsat_sample_s=60,
        wsat_max_s=24 * 3600,
        range_cap_bytes=None,
        description="SNIA SSS PTS v2.0.2: 1-minute cells, rounds until steady state (at most 25)",
    )


def quick_profile(cell_runtime_s: float | None = None) -> Profile:
    """Short cells, small ranges, few rounds: for trying the tool and for tests, never a PTS result.

    The cell time comes from $NVMEDB_QUICK_CELL_S when set (the overhead benchmark uses 2-second cells).
    """
    if cell_runtime_s is None:
        cell_runtime_s = _env_seconds(QUICK_CELL_ENV, default=1.0)
    return Profile(
        name="quick",
        cell_runtime_s=cell_runtime_s,
        max_rounds=2,
        wsat_sample_s=cell_runtime_s,
        wsat_max_s=60,
        range_cap_bytes=1 * GIB,
        description=f"quick: {format_seconds(cell_runtime_s)} cells, at most 1 GiB ranges, 2 rounds, WSAT at most 60 s",
    )


def get_profile(name: str) -> Profile:
    if name == "pts":
        return pts_profile()
    if name == "quick":
        return quick_profile()
    raise ValueError(f"unknown profile {name!r}: choose one of {', '.join(PROFILE_NAMES)}")


@dataclass(frozen=True)
class Cell:
    """One fio run of a round: an access pattern at one block size and R/W mix."""

    pattern: str  # fio rw=: randrw | write | read | randwrite
    block_size_bytes: int
    read_pct: int
    # demand-intensity sweeps (ECW, DIRTH): each cell has its own TC and QD; None takes the series'
    threads: int | None = None
    iodepth: int | None = None
    # a named stimulus beyond bs/rw: ecw (block-size mix and LBA hot zones) or a WSAT optional workload
    workload: str | None = None


@dataclass(frozen=True)
class Series:
    """Rounds of the same cells, stopped by the steady-state rule (or, for WSAT, by bytes written or time)."""

    test: str
    phase: str  # wdpc | tp-write | tp-read | wsat
    cells: tuple[Cell, ...]
    threads: int
    iodepth: int
    runtime_s: float
    max_rounds: int
    split_range: bool = False  # sequential series: each job works on its own slice of the range
    tp_block_size_bytes: int | None = None  # the throughput block this series belongs to

    def run_id(self, round_number: int, cell: Cell) -> str:
        if self.test == "surface":
            depth = cell.iodepth or self.iodepth
            return surface_test.run_id(self.phase, cell.pattern, cell.block_size_bytes, depth, round_number)
        digits = 4 if self.phase == "wsat" else 2
        if self.phase == "wsat":
            return f"{self.test}-r{round_number:0{digits}d}"
        if self.phase == "wdpc" and cell.threads is not None:
            return f"{self.test}-r{round_number:0{digits}d}-tc{cell.threads:02d}-qd{cell.iodepth:02d}"
        if self.test == "tp":
            direction = "write" if self.phase == "tp-write" else "read"
            return f"tp-{direction}-r{round_number:0{digits}d}-bs{cell.block_size_bytes}"
        return f"{self.test}-r{round_number:0{digits}d}-rw{cell.read_pct:03d}-bs{cell.block_size_bytes}"


@dataclass(frozen=True)
class Block:
    """A purge, an optional WIPC, then one or more series: a whole PTS test, or one throughput block size."""

    test: str
    label: str
    purge: bool
    wipc: bool
    series: tuple[Series, ...]
    wipc_threads: int = 1
    wipc_block_size_bytes: int = WIPC_BLOCK_SIZE
    # throughput: each round runs one segment of every series (write, then read) before the round is judged
    interleaved: bool = False
    # timed runs after the series (nvmedb_client.pts.segments.Segment): HIR's bursts and baselines, XSR's groups
    segments: tuple = ()
    # DIRTH: one capture run per operating point after the series (nvmedb_client.pts.dirth_capture.Capture)
    captures: tuple = ()
    # DIRTH: pre-writes before each round and each capture (nvmedb_client.pts.dirth_prewrite.Prewrite)
    prewrites: tuple = ()

    @property
    def wipc_run_id(self) -> str:
        return f"{self.label}-wipc"

    def timed_runs(self, *, fewest: bool) -> tuple:
        """The block's fixed-length runs (HIR/XSR segments, DIRTH captures and pre-writes). With `fewest`, only the
        round pre-writes of the rounds a sweep runs at the least (the steady-state window)."""
        rounds = max((s.max_rounds for s in self.series), default=0)
        least = min(WINDOW_ROUNDS, rounds) if fewest else rounds
        prewrites = tuple(p for p in self.prewrites if p.round is None or p.round <= least)
        return (*self.segments, *self.captures, *prewrites)


@dataclass(frozen=True)
class SkippedCell:
    """A cell of the PTS matrix this target cannot run, planned as skipped (that cell is not a PTS result)."""

    test: str
    phase: str
    cell: Cell
    reason: str


@dataclass(frozen=True)
class Plan:
    tests: tuple[str, ...]
    edition: Edition
    profile: Profile
    target_kind: str  # device | file
    capacity_bytes: int
    active_range_bytes: int
    threads: int
    iodepth: int
    max_rounds: int
    wsat_target_bytes: int
    blocks: tuple[Block, ...]
    compliance_reasons: tuple[str, ...] = field(default=())
    lba_size_bytes: int | None = None
    skipped_cells: tuple[SkippedCell, ...] = field(default=())
    surface: surface_test.SurfacePlan | None = None  # the nvmedb extension's grid, when "surface" is selected

    @property
    def compliant(self) -> bool:
        return not self.compliance_reasons


def build_plan(
    *,
    tests: Sequence[str] | None = None,
    edition: str = "enterprise",
    profile: str | Profile = "pts",
    capacity_bytes: int,
    target_kind: str = "device",
    threads: int | None = None,
    iodepth: int | None = None,
    max_rounds: int | None = None,
    lba_size_bytes: int | None = None,
    surface: surface_test.SurfaceOptions | None = None,
) -> Plan:
    """The plan for the chosen tests (always run in PTS order iops, tp, lat, wsat) on a target of `capacity_bytes`.

    `lba_size_bytes` is the namespace's LBA data size when known: with direct I/O no block smaller than one LBA can be
    issued, so such cells (0.5 KiB on a 4096-byte-LBA namespace) are planned as skipped, each with the reason."""
    tests = DEFAULT_TESTS if tests is None else tests
    unknown = [t for t in tests if t not in TESTS]
    if unknown or not tests:
        raise ValueError(f"unknown test {', '.join(unknown) or '(none)'}: choose from {', '.join(TESTS)}")
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}: choose one of {', '.join(EDITION_NAMES)}")
    if target_kind not in ("device", "file"):
        raise ValueError(f"unknown target kind {target_kind!r}")
    prof = get_profile(profile) if isinstance(profile, str) else profile
    ed = EDITIONS[edition]
    tc = ed.threads if threads is None else threads
    qd = ed.iodepth if iodepth is None else iodepth
    rounds = prof.max_rounds if max_rounds is None else max_rounds
    for name, value in (("thread count", tc), ("queue depth", qd), ("max rounds", rounds)):
        if value < 1:
            raise ValueError(f"the {name} must be at least 1, got {value}")

    usable = capacity_bytes if prof.range_cap_bytes is None else min(capacity_bytes, prof.range_cap_bytes)
    active_range = (usable * ed.active_range_pct // 100) // RANGE_ALIGNMENT * RANGE_ALIGNMENT
    if active_range < RANGE_ALIGNMENT * 4:
        raise ValueError(
            f"the target is too small: its {ed.active_range_pct}% active range must hold at least 4 MiB, "
            f"got {active_range} bytes from a capacity of {capacity_bytes} bytes"
        )

    reasons: list[str] = []
    if prof.name == "quick":
        reasons.append("profile quick: short cells, small ranges and few rounds are not the PTS")
    if target_kind == "file":
        reasons.append("file target: a file on a filesystem is measured, not a drive")
    if tc != ed.threads:
        reasons.append(f"thread count overridden: TC {tc} instead of the {ed.name} edition's TC {ed.threads}")
    if qd != ed.iodepth:
        reasons.append(f"queue depth overridden: QD {qd} instead of the {ed.name} edition's QD {ed.iodepth}")
    if ed.name != "enterprise":
        reasons += [f"{t}: an Enterprise (PTS-E) test, run with the {ed.name} edition's settings" for t in tests
                    if t in ENTERPRISE_ONLY_TESTS]  # fmt: skip
    if rounds < DEFAULT_MAX_ROUNDS and prof.name == "pts":
        reasons.append(
            f"max rounds lowered to {rounds}: the PTS allows up to {DEFAULT_MAX_ROUNDS} to reach steady state"
        )

    cell_s = prof.cell_runtime_s
    surface_plan = None
    if "surface" in tests:
        options = surface or surface_test.default_options(prof.name)
        surface_test.validate(options, active_range_bytes=active_range, lba_size_bytes=lba_size_bytes)
        surface_plan = surface_test.plan_surface(options, profile_name=prof.name, profile_cell_s=cell_s)
    elif surface is not None:
        raise ValueError("surface options were given but the surface test is not selected (add it to --tests)")
    blocks: list[Block] = []
    skipped: list[SkippedCell] = []

    def runnable(test: str, phase: str, cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
        if not lba_size_bytes:
            return cells
        kept = []
        for cell in cells:
            if cell.block_size_bytes < lba_size_bytes:
                reason = (
                    f"{test} {format_block_size(cell.block_size_bytes)} cells skipped: the namespace's LBA is "
                    f"{lba_size_bytes} bytes, and direct I/O cannot issue a {cell.block_size_bytes}-byte block "
                    "(this cell is not PTS-compliant on this namespace)"
                )
                skipped.append(SkippedCell(test, phase, cell, reason))
            else:
                kept.append(cell)
        return tuple(kept)

    selected = [t for t in TESTS if t in tests]
    for test in selected:
        if test == "iops":
            cells = tuple(Cell("randrw", bs, mix) for mix in IOPS_MIXES for bs in IOPS_BLOCK_SIZES)
            series = Series("iops", "wdpc", runnable("iops", "wdpc", cells), tc, qd, cell_s, rounds)
            blocks.append(Block("iops", "iops", purge=True, wipc=True, series=(series,), wipc_threads=tc))
        elif test == "tp":
            tp_tc = TP_THREADS if threads is None else threads
            tp_qd = TP_IODEPTH if iodepth is None else iodepth
            for bs in TP_BLOCK_SIZES[ed.name]:
                write = Series("tp", "tp-write", (Cell("write", bs, 0),), tp_tc, tp_qd, cell_s, rounds, True, bs)
                read = Series("tp", "tp-read", (Cell("read", bs, 100),), tp_tc, tp_qd, cell_s, rounds, True, bs)
                blocks.append(
                    Block(
                        "tp",
                        f"tp-bs{bs}",
                        purge=True,
                        wipc=True,
                        series=(write, read),
                        wipc_threads=tc,
                        wipc_block_size_bytes=bs,  # preconditioned with the block size under test
                        interleaved=True,
                    )
                )
        elif test == "lat":
            cells = tuple(Cell("randrw", bs, mix) for mix in LAT_MIXES for bs in LAT_BLOCK_SIZES)
            series = Series("lat", "wdpc", runnable("lat", "wdpc", cells), 1, 1, cell_s, rounds)
            blocks.append(Block("lat", "lat", purge=True, wipc=True, series=(series,), wipc_threads=tc))
        elif test == "surface":
            blocks.append(surface_test.build_block(surface_plan, wipc_threads=tc))
        elif test in ("ecw", "dirth"):
            from nvmedb_client.pts import demand_intensity

            block, reason = demand_intensity.build_block(
                test, profile=prof, max_rounds=rounds, wipc_threads=tc, lba_size_bytes=lba_size_bytes
            )
            blocks += [block] if block else []
            reasons += [reason] if reason else []
        elif test != "wsat":
            from nvmedb_client.pts.blocks import extra_block

            kwargs = dict(prof=prof, tc=tc, qd=qd, rounds=rounds, threads=threads, iodepth=iodepth)
            blocks.append(extra_block(test, **kwargs, runnable=runnable))
        else:
            max_samples = max(1, int(prof.wsat_max_s // prof.wsat_sample_s))
            cells = (Cell("randwrite", WSAT_BLOCK_SIZE, 0),)
            series = Series("wsat", "wsat", cells, tc, qd, prof.wsat_sample_s, max_samples)
            blocks.append(Block("wsat", "wsat", purge=True, wipc=False, series=(series,)))

    reasons += list(dict.fromkeys(entry.reason for entry in skipped))
    return Plan(
        tests=tuple(selected),
        edition=ed,
        profile=prof,
        target_kind=target_kind,
        capacity_bytes=capacity_bytes,
        active_range_bytes=active_range,
        threads=tc,
        iodepth=qd,
        max_rounds=rounds,
        wsat_target_bytes=WSAT_CAPACITY_MULTIPLE * usable,
        blocks=tuple(blocks),
        compliance_reasons=tuple(reasons),
        lba_size_bytes=lba_size_bytes,
        skipped_cells=tuple(skipped),
        surface=surface_plan,
    )


def wipc_range_bytes(plan: Plan) -> int:
    """WIPC covers the whole user capacity (PTS: "2X user capacity"), not only the active range of the tests."""
    usable = plan.capacity_bytes
    if plan.profile.range_cap_bytes is not None:
        usable = min(usable, plan.profile.range_cap_bytes)
    return max(plan.active_range_bytes, usable // RANGE_ALIGNMENT * RANGE_ALIGNMENT)


def wipc_bytes(plan: Plan) -> int:
    return WIPC_PASSES * wipc_range_bytes(plan)


def series_tracking(series: Series) -> list:
    """The tracking variables (nvmedb_client.tracking.TrackingVariable) that decide when `series` is steady."""
    from nvmedb_client import tracking

    if series.phase == "wsat" or series.test not in tracking.TESTS_WITH_STEADY_STATE:
        return []
    block_sizes = [series.tp_block_size_bytes] if series.test == "tp" else None
    point = max(((c.threads, c.iodepth) for c in series.cells if c.threads), default=None)
    variables = tracking.tracking_variables(series.test, block_sizes=block_sizes, demand_point=point)
    cells = {(c.block_size_bytes, c.read_pct) for c in series.cells}
    # a tracking cell skipped on this namespace (LBA larger than its block) cannot be tracked
    return [v for v in variables if v.phase == series.phase and (v.block_size_bytes, v.read_pct) in cells]


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
            if series.phase == "wsat":
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
            if series.phase == "wsat":
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
    from nvmedb_client.pts.estimates import log_bytes

    logs = log_bytes(plan)
    return system + low_runs * per_run + logs, system + high_runs * per_run + logs


def bundle_bytes_per_run(plan: Plan) -> int:
    if plan.profile.name == "quick":
        run = QUICK_RUN_GZIP_BYTES + (RUN_EXTRA_GZIP_BYTES if plan.target_kind == "device" else 0)
    else:
        run = FIO_OUTPUT_GZIP_BYTES + RUN_EXTRA_GZIP_BYTES
    return run + MANIFEST_GZIP_BYTES_PER_RUN


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
    from dataclasses import asdict

    data = asdict(segment)
    data["logs"] = list(segment.logs)
    return data


def _series_to_dict(plan: Plan, series: Series) -> dict:
    if series.phase == "wsat":
        stop = (
            f"stop when {WSAT_CAPACITY_MULTIPLE}x the capacity ({plan.wsat_target_bytes} bytes) is written "
            f"or after {format_seconds(plan.profile.wsat_max_s)} ({series.max_rounds} samples)"
        )
        tracking = []
    elif series.test in EXTENSIONS:
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


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'256MiB' -> 268435456. K/M/G/T/P alone or with iB are powers of 1024; KB/MB/GB/TB are powers of 1000."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"cannot read the size {text!r}: write it like 256MiB, 1GiB, 500GB or 1073741824")
    number, prefix, binary, byte = match.groups()
    power = "kmgtp".find(prefix.lower()) + 1 if prefix else 0
    base = 1000 if (prefix and byte and not binary) else 1024
    value = float(number) * base**power
    if value != int(value) or value <= 0:
        raise ValueError(f"the size {text!r} is not a positive whole number of bytes")
    return int(value)


def format_block_size(value: int) -> str:
    return f"{value / KIB:g} KiB"


def format_bytes(value: float) -> str:
    """Decimal first, binary in parentheses (the formatting rules of `nvmedb_client.units`)."""
    return size_both(value)


def format_seconds(seconds: float) -> str:
    if seconds < 10:
        return f"{max(seconds, 0):.1f} s".replace(".0 s", " s")
    if seconds < 60:
        return f"{seconds:.0f} s"
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _env_seconds(name: str, *, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${name} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise ValueError(f"${name} must be positive, got {raw!r}")
    return value
