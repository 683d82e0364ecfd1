"""The shapes of a test plan (editions, profiles, cells, series, blocks, the plan, tracking variables) and what a
test's planner is given.

Every PTS test module (nvmedb_client.pts) builds its blocks from these types; this module imports no test module, so
the tests, their registry (nvmedb_client.pts.registry) and `nvmedb_client.plan` can all import it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from nvmedb_client.steady_state import DEFAULT_MAX_ROUNDS, WINDOW_ROUNDS

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

EDITION_NAMES = ("enterprise", "client")
PROFILE_NAMES = ("pts", "quick")
WIPC_BLOCK_SIZE = 128 * KIB
WIPC_PASSES = 2
WSAT_CAPACITY_MULTIPLE = 4
# The active range is a whole number of the largest block size, so every block size tiles it exactly and the
# WIPC split between jobs never leaves a partial block unwritten.
RANGE_ALIGNMENT = 1024 * KIB

QUICK_CELL_ENV = "NVMEDB_QUICK_CELL_S"


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


# How a series' rounds end (Series.stop): at the first round where its tracking variables are steady (the PTS rule);
# as a time series, one sample per round until a written-bytes or time limit (WSAT), never judged for steady state;
# or after every one of a fixed number of repetitions (an nvmedb extension's grid).
STOP_STEADY, STOP_WRITTEN, STOP_REPETITIONS = "steady", "written", "repetitions"


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
    stop: str = STOP_STEADY  # STOP_STEADY | STOP_WRITTEN | STOP_REPETITIONS

    # a test whose runs are named otherwise (throughput, the surface) sets this: (series, round, cell) -> run id
    namer: Callable[[Series, int, Cell], str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.stop not in (STOP_STEADY, STOP_WRITTEN, STOP_REPETITIONS):
            raise ValueError(f"unknown stop rule {self.stop!r} for the {self.test} {self.phase} series")

    def run_id(self, round_number: int, cell: Cell) -> str:
        if self.namer is not None:
            return self.namer(self, round_number, cell)
        if self.time_series:  # one sample per "round"
            return f"{self.test}-r{round_number:04d}"
        if self.phase == "wdpc" and cell.threads is not None:  # a demand-intensity sweep (ECW, DIRTH)
            return f"{self.test}-r{round_number:02d}-tc{cell.threads:02d}-qd{cell.iodepth:02d}"
        return f"{self.test}-r{round_number:02d}-rw{cell.read_pct:03d}-bs{cell.block_size_bytes}"

    @property
    def time_series(self) -> bool:
        """Sampled until a written-bytes or time limit (WSAT and its optional workloads), never judged steady."""
        return self.stop == STOP_WRITTEN


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
    surface: object | None = (
        None  # the SurfacePlan (nvmedb_client.pts.surface) of the nvmedb extension's grid, when "surface" is selected
    )

    @property
    def compliant(self) -> bool:
        return not self.compliance_reasons


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


@dataclass(frozen=True)
class PlanContext:
    """What a test's planner (`plan_blocks` of a module in nvmedb_client.pts.registry) is given: the operator's
    choices resolved against the edition and profile."""

    profile: Profile
    edition: Edition
    threads: int  # the series' TC: the edition's, or the override
    iodepth: int
    max_rounds: int
    threads_override: int | None  # what the operator asked for (a test with its own TC/QD keeps it unless set)
    iodepth_override: int | None
    lba_size_bytes: int | None
    active_range_bytes: int
    # keeps the cells this namespace can issue, recording each other one as a SkippedCell
    runnable: Callable[[str, str, tuple[Cell, ...]], tuple[Cell, ...]]
    surface: object | None = None  # the SurfacePlan when the surface test is selected

    @property
    def quick(self) -> bool:
        return self.profile.name == "quick"

    @property
    def cell_s(self) -> float:
        return self.profile.cell_runtime_s


@dataclass(frozen=True)
class Planned:
    """A test's part of the plan: its blocks and the reasons (if any) it departs from the PTS on this target."""

    blocks: tuple[Block, ...]
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class TrackingVariable:
    """A PTS tracking variable: one cell's metric, judged round by round for steady state. A test module that stops
    its rounds by the steady-state rule says which it tracks (`tracking_variables`, see nvmedb_client.pts.registry)."""

    id: str
    test: str
    phase: str
    metric: str
    block_size_bytes: int
    read_pct: int
    threads: int | None = None  # demand-intensity sweeps track one TC/QD cell
    iodepth: int | None = None
    group: str | None = None  # the variables steady together; the whole test's when None

    @property
    def series(self) -> str:
        """The group of variables that must be steady together."""
        return self.group or self.test


def tracking_variable(
    test: str, phase: str, metric: str, block_size: int, read_pct: int, *, group: str | None = None
) -> TrackingVariable:
    """A tracking variable of one (R/W mix, block size) cell, named `test.metric.rwNNN.bsN`."""
    return TrackingVariable(
        id=f"{test}.{metric}.rw{read_pct:03d}.bs{block_size}",
        test=test,
        phase=phase,
        metric=metric,
        block_size_bytes=block_size,
        read_pct=read_pct,
        group=group,
    )
