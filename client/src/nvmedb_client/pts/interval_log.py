"""fio's per-interval logs (write_iops_log / write_bw_log with log_avg_msec), read strictly: they are hostile input
on the server, so every line must be exactly what fio 3.x writes and the file must stay within its limits.

A line is `time_ms, value, direction, block_size[, offset[, priority]]`, all integers; the time never goes
backwards. With log_avg_msec each value is the average over the time since the job's previous sample, so a sample
after a pause (a host idle period) covers the pause.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MAX_LOG_BYTES = 32 * 1024 * 1024
MAX_LINE_BYTES = 200
MAX_SAMPLES = 1_000_000
_LINE = re.compile(rb"^(\d{1,12}), (\d{1,15}), ([012]), (\d{1,10})(?:, (\d{1,20}))?(?:, (\d{1,10}))?$")
_NAME = re.compile(r"^logs/(?P<run>[A-Za-z0-9._-]{1,200})_(?P<kind>iops|bw)\.(?P<job>\d{1,4})\.log$")


class IntervalLogError(ValueError):
    """A log breaks a rule; the message names the file and line."""


@dataclass(frozen=True)
class Sample:
    time_ms: int
    value: int  # IOPS for an iops log; KiB/s for a bw log (fio's unit)


def parse_log(
    data: bytes, *, name: str = "log", max_bytes: int = MAX_LOG_BYTES, allow_empty: bool = False
) -> list[Sample]:
    """The log's samples. An empty log raises IntervalLogError unless `allow_empty`: fio writes no line for a job
    that ran shorter than one logging interval (a short segment on a busy host), which the caller records as
    missing samples (`empty_log_reason`) rather than failing the whole run."""
    if len(data) > max_bytes:
        raise IntervalLogError(f"{name} is {len(data)} bytes, more than the {max_bytes} bytes a log may have")
    samples: list[Sample] = []
    previous = -1
    for number, line in enumerate(data.split(b"\n"), start=1):
        line = line.rstrip(b"\r")
        if not line:
            continue
        if len(line) > MAX_LINE_BYTES:
            raise IntervalLogError(f"{name} line {number} is {len(line)} bytes long, more than {MAX_LINE_BYTES}")
        match = _LINE.match(line)
        if match is None:
            shown = line[:60].decode("ascii", "replace")
            raise IntervalLogError(f"{name} line {number} is not a fio log line: {shown!r}")
        time_ms, value = int(match.group(1)), int(match.group(2))
        if time_ms < previous:
            raise IntervalLogError(f"{name} line {number}: time {time_ms} ms goes back from {previous} ms")
        previous = time_ms
        samples.append(Sample(time_ms, value))
        if len(samples) > MAX_SAMPLES:
            raise IntervalLogError(f"{name} has more than {MAX_SAMPLES} samples")
    if not samples and not allow_empty:
        raise IntervalLogError(f"{name} has no samples")
    return samples


def empty_log_reason(path: str) -> str:
    return f"{path} has no samples: fio logged no interval for that job (it ran shorter than one logging interval)"


def missing_sentence(paths: list[str], per_job: list[list[Sample]]) -> str:
    """Why figures read from these logs are missing ("" when every log has samples)."""
    return "; ".join(empty_log_reason(path) for path, samples in zip(paths, per_job, strict=True) if not samples)


def log_name_parts(path: str) -> tuple[str, str, int]:
    """(run id, 'iops' | 'bw', job number) of a log's bundle path, or IntervalLogError."""
    match = _NAME.match(path)
    if match is None:
        raise IntervalLogError(f"{path} is not a log name this client writes (logs/<run>_<iops|bw>.<job>.log)")
    return match["run"], match["kind"], int(match["job"])


def job_logs(log_files: list[str], run_id: str, kind: str) -> list[str]:
    """The run's logs of one kind, ordered by job number."""
    found = []
    for path in log_files:
        run, what, job = log_name_parts(path)
        if run == run_id and what == kind:
            found.append((job, path))
    return [path for _, path in sorted(found)]


def gaps(samples: list[Sample], interval_ms: int) -> list[tuple[int, int]]:
    """(start ms, length ms) of every stretch longer than 1.5 intervals without a sample."""
    limit = interval_ms * 3 // 2
    out = []
    for before, after in zip(samples, samples[1:], strict=False):
        if after.time_ms - before.time_ms > limit:
            out.append((before.time_ms, after.time_ms - before.time_ms))
    return out


def combine(per_job: list[list[Sample]]) -> list[Sample]:
    """The jobs' series added sample by sample (the k-th sample of every job falls in the same interval; fio's
    timestamps drift by a few ms per sample, so matching times would split intervals). The shortest job decides."""
    if not per_job:
        return []
    length = min(len(samples) for samples in per_job)
    return [Sample(max(s[k].time_ms for s in per_job), sum(s[k].value for s in per_job)) for k in range(length)]


def read_run_logs(run: dict, kind: str, read: Callable[[str], bytes]) -> tuple[list[str], list[list[Sample]]]:
    """The paths and parsed `kind` ("iops" or "bw") logs of each job of `run`, in job order. A job's log may be
    empty (see parse_log); raises IntervalLogError when the run lists no log at all (a recovery test's figures come
    from its logs, never from the summary alone)."""
    paths = job_logs(run.get("log_files") or [], run["id"], kind)
    per_job = [parse_log(read(path), name=path, allow_empty=True) for path in paths]
    if not per_job:
        raise IntervalLogError(f"{run['id']} has no {kind} log")
    return paths, per_job
