"""Timed fio runs that are not rounds of a steady-state series: HIR's write bursts between idle periods and its
return-to-baseline stretches, XSR's access groups. Each writes per-interval logs (fio's `write_iops_log` /
`write_bw_log` averaged over `log_avg_msec`) that go into the bundle beside its JSON output."""

from __future__ import annotations

from dataclasses import dataclass

LOG_DIR = "logs"
LOG_PREFIX_ENV = "NVMEDB_LOG_PREFIX"


@dataclass(frozen=True)
class Segment:
    """One fio run of a recovery test. `burst_s`/`idle_s` set: I/O for burst_s, then the host idles idle_s
    (fio's thinktime_iotime / thinktime), repeated until runtime_s; otherwise continuous I/O for runtime_s."""

    run_id: str
    test: str
    phase: str  # hir-wait | hir-base | xsr-g1 | xsr-g2 | xsr-g3
    pattern: str  # fio rw=
    block_size_bytes: int
    threads: int
    iodepth: int
    runtime_s: float
    log_interval_ms: int
    logs: tuple[str, ...]  # which fio logs: "iops", "bw"
    burst_s: float | None = None
    idle_s: float | None = None
    bursts: int | None = None  # bursts that follow an idle period (the first burst of the run follows writes)
    index: int = 1  # the wait state (1..5) or access group (1..3) this run belongs to


def log_prefix(run_id: str) -> str:
    """Relative to the run's files: fio appends _iops.<job>.log / _bw.<job>.log."""
    return f"{LOG_DIR}/{run_id}"


def job_lines(segment: Segment) -> list[str]:
    """The options of a segment's job after the [global] section's common ones (see fio_jobs.render_segment)."""
    lines = [
        "# a fixed time: the segment's length is part of the test, not a steady-state round",
        "time_based",
        f"runtime={_ms(segment.runtime_s)}",
        f"rw={segment.pattern}",
        f"bs={segment.block_size_bytes}",
        f"iodepth={segment.iodepth}",
    ]
    if segment.burst_s is not None and segment.idle_s is not None:
        lines += [
            f"# write for {segment.burst_s:g} s, then the host idles {segment.idle_s:g} s (no I/O), and again",
            f"thinktime={_ms(segment.idle_s)}",
            f"thinktime_iotime={_ms(segment.burst_s)}",
        ]
    lines += [
        f"# one averaged sample per {segment.log_interval_ms} ms per job: the per-interval time series",
        f"log_avg_msec={segment.log_interval_ms}",
    ]
    # the log path comes from the environment so the job file names no directory of the user's
    if "iops" in segment.logs:
        lines.append(f"write_iops_log=${{{LOG_PREFIX_ENV}}}")
    if "bw" in segment.logs:
        lines.append(f"write_bw_log=${{{LOG_PREFIX_ENV}}}")
    return lines


def _ms(seconds: float) -> str:
    return f"{int(round(seconds * 1000))}ms"


MIN_LOG_INTERVAL_MS = 10
MAX_LOG_INTERVAL_MS = 600_000


def checked_interval(segment: dict) -> int:
    """A plan segment's log interval, refused when it is not one this client plans (the plan is the client's word)."""
    value = segment.get("log_interval_ms")
    if not isinstance(value, int) or isinstance(value, bool) or not MIN_LOG_INTERVAL_MS <= value <= MAX_LOG_INTERVAL_MS:
        raise ValueError(f"segment {segment.get('run_id')!r} has no usable log interval: {value!r}")
    return value
