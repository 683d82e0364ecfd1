"""The queue-depth x block-size surface: an nvmedb extension, not a test of the SNIA PTS.

Every cell is one timed fio run of one access pattern (sequential or random, read or write) at one block size and
one queue depth, with a single job, so the queue depth is the number of I/Os in flight. Block sizes and queue depths
are powers of two; the grid and its limits are options (`SurfaceOptions`), validated by `validate`. The block runs
after a purge and WIPC, like the PTS tests: reads first (they see the WIPC state), then sequential writes, then a
random-write preconditioning run, then the random writes.

Every cell runs `repetitions` times (default 3), interleaved within its pattern: repetition 1 of every cell of the
pattern, then repetition 2 of every cell, and so on, so a passing disturbance of the host cannot hit all of one cell's
repetitions. The interleave stays inside a pattern so every repetition sees the drive state the order above intends
(reads after WIPC, random writes after their preconditioning). See docs/methodology.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from nvmedb_client.plan_types import STOP_REPETITIONS, Block, Cell, Series

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

TEST = "surface"
PHASE = "surface"
PC_PHASE = "surface-pc"
LABEL = "nvmedb extension, not part of the SNIA PTS"

# fio rw= of each pattern, in run order; reads before writes so they see the state WIPC left.
PATTERNS = ("read", "randread", "write", "randwrite")
ACCESS = {"read": "sequential", "write": "sequential", "randread": "random", "randwrite": "random"}
DIRECTION = {"read": "read", "randread": "read", "write": "write", "randwrite": "write"}

# Hard limits of the grid (the range); the options choose a sub-grid.
LIMIT_MIN_BS = 4 * KIB
LIMIT_MAX_BS = 64 * MIB
LIMIT_MAX_QD = 1024
LIMIT_CELL_S = 3600.0
# fio allocates one buffer per I/O in flight: a 64 MiB x 1024 cell would need 64 GiB of memory.
DEFAULT_MAX_INFLIGHT = 1 * GIB
PTS_CELL_S = 10.0
# Each cell's repetitions: fewer than MIN_REPEATABLE is allowed for a trial, but the surface then says it is not
# repeatable. At most LIMIT_REPETITIONS: the time bounds assume a series may stop after its steady-state window (5).
DEFAULT_REPETITIONS = 3
MIN_REPEATABLE = 3
LIMIT_REPETITIONS = 5
INTERLEAVING = (
    "interleaved within each pattern: repetition 1 of every cell of the pattern, then repetition 2 of every cell, ..."
)
# quick: half the quick cell time (0.5 s by default), so the 24 quick cells stay well under a minute
QUICK_CELL_FACTOR = 0.5

# Random writes run after a random-write preconditioning run (4 KiB, QD 32, one job) of this length.
PC_BLOCK_SIZE = 4 * KIB
PC_IODEPTH = 32
PC_S = {"pts": 1800.0, "quick_cells": 2}


class SurfaceError(ValueError):
    """An option of the surface grid is out of its limits; the message says which and what is allowed."""


@dataclass(frozen=True)
class SurfaceOptions:
    """The grid: block sizes min_bs, min_bs*bs_step, ... <= max_bs; queue depths 1, qd_step, ... <= max_qd."""

    min_bs: int = LIMIT_MIN_BS
    max_bs: int = LIMIT_MAX_BS
    bs_step: int = 2
    max_qd: int = LIMIT_MAX_QD
    qd_step: int = 2
    patterns: tuple[str, ...] = PATTERNS
    cell_s: float | None = None  # None: PTS_CELL_S for pts, QUICK_CELL_FACTOR x the quick cell time for quick
    max_inflight_bytes: int = DEFAULT_MAX_INFLIGHT
    repetitions: int = DEFAULT_REPETITIONS

    def to_dict(self) -> dict:
        data = asdict(self)
        data["patterns"] = list(self.patterns)
        return data

    @classmethod
    def from_dict(cls, data: dict | None) -> SurfaceOptions | None:
        if data is None:
            return None
        return cls(**{**data, "patterns": tuple(data.get("patterns") or PATTERNS)})


QUICK_OPTIONS = SurfaceOptions(min_bs=4 * KIB, max_bs=1 * MIB, bs_step=16, max_qd=16, qd_step=16)


def default_options(profile: str) -> SurfaceOptions:
    return QUICK_OPTIONS if profile == "quick" else SurfaceOptions()


def _power_of_two(value: int) -> bool:
    return isinstance(value, int) and value > 0 and value & (value - 1) == 0


def validate(options: SurfaceOptions, *, active_range_bytes: int, lba_size_bytes: int | None = None) -> None:
    """Raise SurfaceError naming the first option out of its limits."""
    o = options
    for name, value in (("--surface-min-bs", o.min_bs), ("--surface-max-bs", o.max_bs)):
        if not _power_of_two(value):
            raise SurfaceError(f"{name} must be a power of two number of bytes (4KiB, 64KiB, 1MiB...), got {value}")
        if not LIMIT_MIN_BS <= value <= LIMIT_MAX_BS:
            raise SurfaceError(f"{name} must lie between 4 KiB and 64 MiB, got {value} bytes")
    if o.min_bs > o.max_bs:
        raise SurfaceError(f"--surface-min-bs ({o.min_bs} bytes) is larger than --surface-max-bs ({o.max_bs} bytes)")
    if not _power_of_two(o.max_qd) or o.max_qd > LIMIT_MAX_QD:
        raise SurfaceError(f"--surface-max-qd must be a power of two from 1 to {LIMIT_MAX_QD}, got {o.max_qd}")
    for name, value in (("--surface-bs-step", o.bs_step), ("--surface-qd-step", o.qd_step)):
        if not _power_of_two(value) or value < 2:
            raise SurfaceError(f"{name} must be a power of two of at least 2 (2, 4, 8...), got {value}")
    if not o.patterns:
        raise SurfaceError(f"--surface-patterns needs at least one of {', '.join(PATTERNS)}")
    unknown = [p for p in o.patterns if p not in PATTERNS]
    if unknown:
        raise SurfaceError(
            f"unknown surface pattern {', '.join(map(repr, unknown))}: choose from {', '.join(PATTERNS)}"
        )
    if len(set(o.patterns)) != len(o.patterns):
        raise SurfaceError("--surface-patterns names a pattern twice")
    if o.cell_s is not None and not (0 < o.cell_s <= LIMIT_CELL_S):
        raise SurfaceError(f"--surface-cell-s must be more than 0 and at most {LIMIT_CELL_S:g} seconds, got {o.cell_s}")
    if isinstance(o.repetitions, bool) or not isinstance(o.repetitions, int):
        raise SurfaceError(f"--surface-repetitions must be a whole number, got {o.repetitions!r}")
    if not 1 <= o.repetitions <= LIMIT_REPETITIONS:
        raise SurfaceError(
            f"--surface-repetitions must be from 1 to {LIMIT_REPETITIONS} ({MIN_REPEATABLE} or more for a repeatable "
            f"surface), got {o.repetitions}"
        )
    if o.max_inflight_bytes < o.min_bs:
        raise SurfaceError(
            f"--surface-max-inflight ({o.max_inflight_bytes} bytes) is smaller than one block of "
            f"--surface-min-bs ({o.min_bs} bytes): no cell could run"
        )
    if o.max_bs > active_range_bytes:
        raise SurfaceError(
            f"--surface-max-bs ({o.max_bs} bytes) is larger than the active range ({active_range_bytes} bytes)"
        )
    if lba_size_bytes and o.min_bs < lba_size_bytes:
        raise SurfaceError(
            f"--surface-min-bs ({o.min_bs} bytes) is smaller than the namespace's LBA ({lba_size_bytes} bytes): "
            "direct I/O cannot issue it"
        )


def block_sizes(options: SurfaceOptions) -> list[int]:
    sizes, size = [], options.min_bs
    while size <= options.max_bs:
        sizes.append(size)
        size *= options.bs_step
    return sizes


def queue_depths(options: SurfaceOptions) -> list[int]:
    depths, depth = [], 1
    while depth <= options.max_qd:
        depths.append(depth)
        depth *= options.qd_step
    return depths


@dataclass(frozen=True)
class SurfaceCell:
    pattern: str
    block_size_bytes: int
    iodepth: int

    @property
    def bytes_in_flight(self) -> int:
        return self.block_size_bytes * self.iodepth

    def run_id(self, repetition: int) -> str:
        return f"surface-{self.pattern}-bs{self.block_size_bytes}-qd{self.iodepth}-rep{repetition}"


@dataclass(frozen=True)
class SurfacePlan:
    options: SurfaceOptions
    cell_s: float
    pc_s: float
    cells: tuple[SurfaceCell, ...]
    skipped: tuple[tuple[SurfaceCell, str], ...] = field(default=())

    def to_dict(self, *, target_kind: str) -> dict:
        return {
            "label": LABEL,
            "options": self.options.to_dict(),
            "cell_runtime_s": self.cell_s,
            "block_sizes_bytes": block_sizes(self.options),
            "iodepths": queue_depths(self.options),
            "patterns": list(self.options.patterns),
            "threads": 1,
            "repetitions": self.options.repetitions,
            "repeatable": self.options.repetitions >= MIN_REPEATABLE,
            "interleaving": INTERLEAVING,
            "random_write_preconditioning": {
                "pattern": "randwrite",
                "block_size_bytes": PC_BLOCK_SIZE,
                "iodepth": PC_IODEPTH,
                "runtime_s": self.pc_s,
            }
            if "randwrite" in self.options.patterns
            else None,
            "cells": [
                {"pattern": c.pattern, "block_size_bytes": c.block_size_bytes, "iodepth": c.iodepth} for c in self.cells
            ],
            "skipped_cells": [
                {"pattern": c.pattern, "block_size_bytes": c.block_size_bytes, "iodepth": c.iodepth, "reason": r}
                for c, r in self.skipped
            ],
            "target_note": target_note(target_kind),
        }


def target_note(target_kind: str) -> str | None:
    if target_kind == "file":
        return (
            "file target: the surface measures the file system path (direct I/O through the file system to the "
            "device under it), not a drive"
        )
    return None


def plan_surface(options: SurfaceOptions, *, profile_name: str, profile_cell_s: float) -> SurfacePlan:
    """The grid's cells of one repetition, in run order: pattern, then block size, then queue depth (ascending)."""
    if options.cell_s is not None:
        cell_s = options.cell_s
    else:
        cell_s = PTS_CELL_S if profile_name == "pts" else profile_cell_s * QUICK_CELL_FACTOR
    pc_s = PC_S["pts"] if profile_name == "pts" else PC_S["quick_cells"] * cell_s
    cells, skipped = [], []
    for pattern in [p for p in PATTERNS if p in options.patterns]:
        for bs in block_sizes(options):
            for qd in queue_depths(options):
                cell = SurfaceCell(pattern, bs, qd)
                if cell.bytes_in_flight > options.max_inflight_bytes:
                    skipped.append(
                        (
                            cell,
                            f"{bs} bytes x QD {qd} = {cell.bytes_in_flight} bytes in flight, more than "
                            f"--surface-max-inflight ({options.max_inflight_bytes} bytes) of fio buffers",
                        )
                    )
                else:
                    cells.append(cell)
    return SurfacePlan(options, cell_s, pc_s, tuple(cells), tuple(skipped))


def build_block(surface: SurfacePlan, *, wipc_threads: int):
    """The plan Block: purge, WIPC, then per pattern one Series whose cells are its (block size, QD) cells, each
    with its own QD, and whose rounds are the repetitions (round r runs repetition r of every cell: interleaved).
    No steady-state rule stops a surface series: every repetition runs."""
    series = []
    for pattern in [p for p in PATTERNS if p in surface.options.patterns]:
        if pattern == "randwrite":
            pc = Cell("randwrite", PC_BLOCK_SIZE, 0)
            series.append(Series(TEST, PC_PHASE, (pc,), 1, PC_IODEPTH, surface.pc_s, 1, stop=STOP_REPETITIONS))
        read_pct = 100 if DIRECTION[pattern] == "read" else 0
        cells = tuple(
            Cell(pattern, c.block_size_bytes, read_pct, threads=1, iodepth=c.iodepth)
            for c in surface.cells
            if c.pattern == pattern
        )
        if cells:
            depth = max(c.iodepth for c in cells)
            series.append(Series(TEST, PHASE, cells, 1, depth, surface.cell_s, surface.options.repetitions,
                                 stop=STOP_REPETITIONS))  # fmt: skip
    return Block(TEST, TEST, purge=True, wipc=True, series=tuple(series), wipc_threads=wipc_threads)


def run_id(phase: str, pattern: str, block_size_bytes: int, iodepth: int, repetition: int) -> str:
    if phase == PC_PHASE:
        return "surface-randwrite-pc"
    return SurfaceCell(pattern, block_size_bytes, iodepth).run_id(repetition)
