"""fio job files for every run of a plan.

Each rendered file carries, as comments, the reason for every option, so a job file in a bundle explains itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from nvmedb_client.plan_types import WIPC_BLOCK_SIZE, WIPC_PASSES, Cell
from nvmedb_client.pts import registry, segments

PERCENTILES = "99:99.9:99.99:99.999"

# The options every job file has, with the reason for each (rendered as comments above the option).
GLOBAL_OPTIONS: tuple[tuple[str, str | None, str], ...] = (
    ("direct", "1", "bypass the page cache: measure the drive, not RAM (never toggled to emulate a cache setting)"),
    ("thread", None, "jobs are threads of one fio process, so stopping that process stops every job"),
    ("randrepeat", "0", "a new random sequence every run, so the drive cannot benefit from a repeated pattern"),
    ("norandommap", None, "random offsets are drawn independently, as the PTS asks, without a block map in memory"),
    ("refill_buffers", None, "new data for every write, so nothing can be deduplicated"),
    ("buffer_compress_percentage", "0", "incompressible data, so a compressing controller gains nothing"),
    ("group_reporting", None, "one aggregated result for all the jobs of the run"),
    ("percentile_list", PERCENTILES, "the latency percentiles the PTS reports (json+ also keeps every bin)"),
    ("lat_percentiles", "1", "percentiles of total latency (submission + completion), the PTS response time"),
    ("allow_file_create", "0", "never create a file: a mistyped device path must fail, not write to /dev"),
)


@dataclass(frozen=True)
class EngineChoice:
    engine: str
    note: str | None  # why it is not libaio, recorded in the run and the compliance reasons


def choose_ioengine(enghelp_output: str | None, *, platform: str) -> EngineChoice:
    """libaio on Linux when this fio has it; otherwise psync with the reason (QD > 1 is then not real)."""
    if platform != "linux":
        return EngineChoice("psync", f"libaio exists only on Linux (this is {platform}): psync runs one I/O per job")
    if enghelp_output is None:
        return EngineChoice("psync", "could not list fio's I/O engines: psync runs one I/O per job")
    engines = {line.strip() for line in enghelp_output.splitlines()}
    if "libaio" in engines:
        return EngineChoice("libaio", None)
    return EngineChoice("psync", "this fio has no libaio engine: psync runs one I/O per job, so QD > 1 is not real")


def split_range(range_bytes: int, jobs: int, *, unit: int = WIPC_BLOCK_SIZE) -> list[tuple[int, int]]:
    """(offset, size) per job covering [0, range_bytes) exactly once, in whole `unit`s; earlier jobs take the
    remainder units. Used so TC jobs writing sequentially each cover their own slice (two known tools give every job
    the whole range and offset it, leaving half of the drive unwritten)."""
    if jobs < 1:
        raise ValueError("at least one job")
    if range_bytes <= 0 or range_bytes % unit:
        raise ValueError(f"the range ({range_bytes} bytes) must be a positive multiple of {unit} bytes")
    units = range_bytes // unit
    if units < jobs:
        raise ValueError(f"the range holds {units} blocks of {unit} bytes, fewer than the {jobs} jobs")
    base, extra = divmod(units, jobs)
    slices = []
    offset = 0
    for index in range(jobs):
        size = (base + (1 if index < extra else 0)) * unit
        slices.append((offset, size))
        offset += size
    return slices


def sequential_starts(*, slice_bytes: int, block_size: int, moved: list[int]) -> list[int]:
    """Where each round's sequential segment starts inside a slice of `slice_bytes`, given the bytes the earlier
    rounds of the same direction moved in it: one start per round, `len(moved) + 1` in all.

    A round starts where the previous one stopped, so successive rounds stream through the whole slice instead of
    re-touching its first minute's worth. A round that reached the end of the slice (fio then wraps within its region)
    is followed by a start at 0. A start is never closer to the end than one round's worth of bytes (the last round's
    figure), so a round never loops over a sliver the drive could hold in its cache; the slice's tail is still covered
    because that start lies before the position the previous round reached.
    """
    starts = [0]
    for amount in moved:
        end = starts[-1] + amount
        if end >= slice_bytes:
            starts.append(0)
            continue
        start = min(end, max(0, slice_bytes - amount))
        starts.append(start // block_size * block_size)
    return starts


def carried_starts(*, range_bytes: int, threads: int, block_size: int, moved: list[int]) -> list[int]:
    """Each job's start inside its slice of the range (split_range) for the next round of a sequential series, given
    the bytes every earlier round of the series moved (all jobs together, the direction that went furthest: a mixed
    rw= job streams its reads and its writes each from its start). The same rule for the throughput test's segments
    and the sequential WSAT workloads' samples; it needs only the recorded outputs, so a resumed run starts where the
    original would have."""
    return carried_starts_by_round(range_bytes=range_bytes, threads=threads, block_size=block_size, moved=moved)[-1]


def carried_starts_by_round(*, range_bytes: int, threads: int, block_size: int, moved: list[int]) -> list[list[int]]:
    """carried_starts for every round at once: one list of job starts per round, `len(moved) + 1` in all."""
    per_job = [amount // threads // block_size * block_size for amount in moved]
    columns = [
        sequential_starts(slice_bytes=size, block_size=block_size, moved=per_job)
        for _, size in split_range(range_bytes, threads, unit=block_size)
    ]
    return [list(row) for row in zip(*columns, strict=True)]


def format_runtime(seconds: float) -> str:
    """fio's runtime= value: whole seconds when possible, otherwise milliseconds."""
    if float(seconds).is_integer():
        return str(int(seconds))
    return f"{int(round(seconds * 1000))}ms"


def _global_section(filename: str, ioengine: str, engine_note: str | None) -> list[str]:
    lines = ["[global]", f"filename={filename}"]
    for name, value, why in GLOBAL_OPTIONS:
        lines.append(f"# {why}")
        lines.append(name if value is None else f"{name}={value}")
    if ioengine == "libaio":
        lines.append("# asynchronous I/O, so the queue depth is really kept in flight")
    else:
        lines.append(f"# {engine_note or 'fallback engine'}")
    lines.append(f"ioengine={ioengine}")
    return lines


def _stimulus_lines(cell) -> tuple[list[str] | None, list[str]]:
    """A named stimulus's options as its test's module gives them (`workload_job_lines`, e.g. the ECW's block-size
    mix and LBA hot zones, a WSAT optional workload's): (lines in place of bs= or None, lines after the R/W mix)."""
    if cell.workload is None:
        return None, []
    lines_of = getattr(registry.MODULES.get(cell.workload), "workload_job_lines", None)
    if lines_of is None:
        raise ValueError(f"unknown workload {cell.workload!r}: no test of that name issues a named stimulus")
    return lines_of(cell.workload)


def render_cell(
    *,
    name: str,
    filename: str,
    cell: Cell,
    threads: int,
    iodepth: int,
    runtime_s: float,
    range_bytes: int,
    split: bool,
    ioengine: str,
    engine_note: str | None = None,
    starts: list[int] | None = None,
) -> str:
    """A timed measurement run. Random cells let every job roam the whole active range; sequential cells (`split`)
    give each job its own slice, so the jobs stream through distinct LBAs instead of rewriting each other's.
    `starts` (sequential cells) gives each job's position inside its slice, carried over from the previous round
    (see sequential_starts): the job's region then runs from there to the end of its slice."""
    lines = _global_section(filename, ioengine, engine_note)
    lines += [
        "# a fixed measurement time per cell, as the PTS defines rounds",
        "time_based",
        f"runtime={format_runtime(runtime_s)}",
        f"rw={cell.pattern}",
    ]
    in_place_of_bs, after_mix = _stimulus_lines(cell)
    lines += [f"bs={cell.block_size_bytes}"] if in_place_of_bs is None else in_place_of_bs
    lines.append(f"iodepth={iodepth}")
    if cell.pattern in ("randrw", "rw"):
        lines.append(f"rwmixread={cell.read_pct}")
    lines += after_mix
    lines.append("")
    if split and (threads > 1 or starts is not None):
        slices = split_range(range_bytes, threads, unit=cell.block_size_bytes)
        positions = starts if starts is not None else [0] * threads
        if len(positions) != threads or any(not 0 <= q < size for q, (_, size) in zip(positions, slices, strict=True)):
            raise ValueError(f"one start inside its slice per job is needed, got {positions}")
        if starts is not None:
            lines.append("# each job continues in its slice where the previous round (or sample) of the series stopped")
        for index, ((offset, size), position) in enumerate(zip(slices, positions, strict=True)):
            lines += [f"[{name}-job{index}]", f"offset={offset + position}", f"size={size - position}", ""]
    else:
        lines += [f"[{name}]", "# the active range", "offset=0", f"size={range_bytes}", f"numjobs={threads}", ""]
    return "\n".join(lines)


def render_wipc(
    *,
    name: str,
    filename: str,
    range_bytes: int,
    threads: int,
    ioengine: str,
    iodepth: int = 32,
    engine_note: str | None = None,
    block_size: int = WIPC_BLOCK_SIZE,
) -> str:
    """Workload-independent preconditioning: sequential writes of 2x the active range, 128 KiB blocks (or the block
    size under test for a throughput block). The range is split between the jobs and each job writes its slice twice
    (loops=2), so every LBA is written exactly twice."""
    lines = _global_section(filename, ioengine, engine_note)
    lines += [
        "rw=write",
        f"bs={block_size}",
        f"iodepth={iodepth}",
        "# each job writes its own slice of the range twice",
        f"loops={WIPC_PASSES}",
        "",
    ]
    for index, (offset, size) in enumerate(split_range(range_bytes, threads, unit=block_size)):
        lines += [f"[{name}-job{index}]", f"offset={offset}", f"size={size}", ""]
    return "\n".join(lines)


def render_segment(*, name: str, filename: str, segment, range_bytes: int, ioengine: str, engine_note=None) -> str:
    """A recovery test's timed run (nvmedb_client.pts.segments): every job roams the whole active range."""
    lines = _global_section(filename, ioengine, engine_note)
    lines += segments.job_lines(segment)
    lines += [
        "",
        f"[{name}]",
        "# the active range",
        "offset=0",
        f"size={range_bytes}",
        f"numjobs={segment.threads}",
        "",
    ]
    return "\n".join(lines)
