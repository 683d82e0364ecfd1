"""The server's check of a sequential run's job layout: each job in its own slice of the active range, and (for a
sequential WSAT workload) each sample continuing where the previous one stopped.

The client's throughput segments and sequential WSAT workloads (ws-vod, ws-meta) give every job its own job section
with offset= and size= inside its slice (nvmedb_client.fio_jobs.split_range in the run's block size), from the job's
position to the slice's end; a WSAT sample's positions follow from the bytes the earlier samples moved
(nvmedb_client.fio_jobs.carried_starts). A job file with numjobs= is the layout of an older client (every job roaming
the whole range, or the lockstep WSAT workloads before issue 22): it has no slices to check.
"""

from __future__ import annotations

import configparser
from collections.abc import Mapping, Sequence

from analysis.crosscheck import REJECT, CheckFailure, parse_size
from nvmedb_client.fio_jobs import carried_starts_by_round, split_range
from nvmedb_client.fio_output import FioSummary
from nvmedb_client.pts.wsat_workloads import WORKLOADS

CARRIED_TESTS = tuple(key for key, workload in WORKLOADS.items() if workload.sequential)
SLICED_TESTS = ("tp", *CARRIED_TESTS)


def sliced(run: Mapping) -> bool:
    """A run whose jobs the client gives their own slices: a throughput segment or a sequential WSAT sample."""
    return run.get("test") in SLICED_TESTS and run.get("phase") != "wipc"


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def job_slices(job_file_text: str) -> list[tuple[int | None, int | None]] | None:
    """(offset, size) of each job section, in order (None where a value is not a size); None when the file is not
    one section per job (numjobs= anywhere, or not an INI file)."""
    parser = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None)
    try:
        parser.read_string(job_file_text)
    except configparser.Error:
        return None
    if any(parser.has_option(section, "numjobs") for section in parser.sections()):
        return None
    jobs = [section for section in parser.sections() if section != "global"]
    return [
        (parse_size(parser.get(s, "offset", fallback="0") or ""), parse_size(parser.get(s, "size", fallback="") or ""))
        for s in jobs
    ]


def slice_problems(run: Mapping, slices: list, range_bytes) -> tuple[list[int] | None, list[str]]:
    """(each job's position in its slice, or None) and what is wrong with the layout (empty when nothing is)."""
    threads, block = _int(run.get("threads")), _int(run.get("block_size_bytes"))
    range_bytes = _int(range_bytes)
    if threads is None or block is None or range_bytes is None or range_bytes % block or range_bytes // block < threads:
        return None, []  # the plan and run checks judge these figures
    if len(slices) != threads:
        return None, [f"{len(slices)} job sections where the run declares {threads} threads"]
    starts, problems = [], []
    for index, ((offset, size), (slice_offset, slice_size)) in enumerate(
        zip(slices, split_range(range_bytes, threads, unit=block), strict=True)
    ):
        end = slice_offset + slice_size
        if offset is None or size is None or not slice_offset <= offset < end or offset + size != end:
            problems.append(
                f"job {index} covers offset={offset} size={size}, not a part of its slice "
                f"{slice_offset}..{end} running to the slice's end"
            )
        elif (offset - slice_offset) % block:
            problems.append(f"job {index} starts at {offset}, not a whole number of {block}-byte blocks into its slice")
        else:
            starts.append(offset - slice_offset)
    return (None if problems else starts), problems


def position_failures(
    runs: Sequence[Mapping], starts: Mapping[str, list[int]], summaries: Mapping[str, FioSummary], range_bytes
) -> list[CheckFailure]:
    """Every sample of a sequential WSAT workload must start its jobs where the earlier samples stopped (derived from
    their fio outputs as the client derives it). A series is judged up to its first gap (a sample missing, or one
    whose layout or output could not be read: those carry their own reasons)."""
    failures = []
    range_bytes = _int(range_bytes)
    if range_bytes is None:
        return []
    for test in CARRIED_TESTS:
        samples = sorted(
            (r for r in runs if r.get("test") == test and r.get("phase") == "wsat" and _int(r.get("round"))),
            key=lambda r: r["round"],
        )
        usable = []
        for expected_round, run in enumerate(samples, start=1):
            run_id = str(run.get("id"))
            same_cell = not usable or all(run.get(k) == usable[0].get(k) for k in ("threads", "block_size_bytes"))
            if run["round"] != expected_round or run_id not in starts or run_id not in summaries or not same_cell:
                break
            usable.append(run)
        if not usable:
            continue
        moved = [
            max(int(s.read_bytes or 0), int(s.write_bytes or 0)) for s in (summaries[str(r["id"])] for r in usable)
        ]
        expected = carried_starts_by_round(
            range_bytes=range_bytes,
            threads=usable[0]["threads"],
            block_size=usable[0]["block_size_bytes"],
            moved=moved[:-1],
        )
        for run, positions in zip(usable, expected, strict=True):
            if starts[str(run["id"])] != positions:
                reason = (
                    f"run {run['id']}: its jobs start at {starts[str(run['id'])]} in their slices, but the earlier "
                    f"samples' outputs put them at {positions}"
                )
                failures.append(CheckFailure("sequential_position", REJECT, reason[:300]))
                break
    return failures
