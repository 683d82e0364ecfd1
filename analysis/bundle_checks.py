"""The cross-checks of a bundle's runs (analysis.crosscheck) as the bundle reader runs them: each run's fio output
against itself, its job file and the declared plan, then the runs' positions and clocks together.

Each run's figures are walked once (crosscheck.figure_directions) and kept for the reader, which reads the runtime
from them too; each output's echo of its options is made once, for the job file's check and the run's options; the
job files are parsed back to back before the checks (_job_files).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from analysis import crosscheck
from analysis.poison import reading
from analysis.pts import sequential as pts_sequential
from analysis.records import FlagRecord, SubmissionRecord
from analysis.values import optional_int

MIXED_BLOCK_SIZE_TESTS = ("ws-comp",)
# the client's job files are a few hundred bytes
MAX_JOB_FILE_BYTES = 1024 * 1024


def parse_time(value: Any) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass
class CrossChecked:
    """By run id: the effective fio options of each checked run, and its fio output's figure_directions."""

    options: dict[str, dict] = field(default_factory=dict)
    figures: dict[str, crosscheck.Directions] = field(default_factory=dict)


def cross_check(bundle, manifest, runs, summaries, documents, record: SubmissionRecord) -> CrossChecked:
    """Run every cross-check; return what the reader uses again of each run (CrossChecked)."""
    failures: list[crosscheck.CheckFailure] = []
    plan = manifest.get("plan") or {}
    context = _RunContext(bundle, plan, record)
    for run, job in zip(runs, _job_files(bundle, runs, documents), strict=True):
        run_id = str(run.get("id"))
        doc = documents.get(run_id)
        if doc is None:
            continue
        raw = str(run.get("output_file"))
        with reading(f"run {run_id}: {raw}"):
            failures += _check_run(context, run, doc, raw, job)
    with reading("the positions of the sequential WSAT workloads' samples"):
        failures += pts_sequential.position_failures(runs, context.starts, summaries, plan.get("active_range_bytes"))
    timed = [
        {
            "id": str(run.get("id")),
            "started_at": parse_time(run.get("started_at")),
            "finished_at": parse_time(run.get("finished_at")),
        }
        for run in runs
    ]
    fio_end = {rid: float(doc["timestamp"]) for rid, doc in documents.items() if isinstance(doc.get("timestamp"), int)}
    timing = manifest.get("timing") or {}
    with reading("the timestamps of the runs and their fio outputs"):
        failures += crosscheck.check_timestamps(
            started_at=parse_time(timing.get("started_at")),
            finished_at=parse_time(timing.get("finished_at")),
            runs=timed,
            fio_end_times=fio_end,
        )
    for failure in failures:
        if failure.severity == crosscheck.REJECT:
            record.reject_reasons.append(failure.reason[:300])
        else:
            record.hold_reasons.append(failure.reason[:300])
            record.flags.append(FlagRecord("crosscheck", failure.reason[:300]))
    return context.checked


@dataclass
class _RunContext:
    """What every run's check shares: the bundle, its declared plan and the record (for a missing job file), and what
    the checks gather as they go: each run's options and figures (`checked`), each sliced run's job positions in
    their slices (`starts`, for pts.sequential) and the plan's cells (made once)."""

    bundle: Any
    plan: Mapping
    record: SubmissionRecord
    checked: CrossChecked = field(default_factory=CrossChecked)
    starts: dict[str, list[int]] = field(default_factory=dict)
    cells: crosscheck.PlanCells = field(default_factory=crosscheck.PlanCells)


def _check_run(context: _RunContext, run, doc, raw: str, job: JobFile | None) -> list:
    run_id = str(run.get("id"))
    directions = crosscheck.figure_directions(doc)  # walked once for every figure check
    context.checked.figures[run_id] = directions
    failures = crosscheck.check_figures(doc, raw_file=raw, directions=directions)
    # a block-size mix (bssplit) has no single block size to check IOPS x size against
    mixed = run.get("test") in MIXED_BLOCK_SIZE_TESTS
    block_size = None if mixed else optional_int(run.get("block_size_bytes"))
    failures += crosscheck.check_iops_bandwidth(doc, block_size_bytes=block_size, raw_file=raw, directions=directions)
    failures += crosscheck.check_bytes_runtime(
        doc, raw_file=raw, declared_runtime_s=run.get("runtime_s"), directions=directions
    )
    options = crosscheck.job_options(doc)
    job_text = None
    sliced = pts_sequential.sliced(run)
    if run.get("job_file"):
        # fio echoes every option it was given; the job file is read for what the output leaves out, for the slices
        # of a sequential run's jobs (fio's output echoes the first job's options only), and to hold it to the echo
        try:
            job_bytes = job.data if job is not None else context.bundle.read_bytes(run["job_file"])
        except KeyError:
            context.record.missing.setdefault("job_files", f"job file {run['job_file']} is not in the bundle")
        else:
            if len(job_bytes) > MAX_JOB_FILE_BYTES:
                return [*failures, _oversized_job_file(run["job_file"], len(job_bytes))]
            job_text = job.text if job is not None else job_bytes.decode("utf-8", errors="replace")
            with reading(f"run {run_id}: {run['job_file']}"):
                file_options = job.options if job is not None else crosscheck.job_file_options(job_text)
                failures += crosscheck.check_job_file_matches_output(
                    file_options=file_options, doc=doc, raw_file=run["job_file"], echoed=options
                )
                options = {**file_options, **options}
    context.checked.options[run_id] = options
    failures += crosscheck.check_job_options(run=run, options=options, raw_file=raw)
    slices = pts_sequential.job_slices(job_text) if sliced and job_text is not None else None
    if slices is not None:  # one section per job: each in its own slice of the active range
        positions, problems = pts_sequential.slice_problems(run, slices, context.plan.get("active_range_bytes"))
        failures += [crosscheck.CheckFailure("job_slices", crosscheck.REJECT, f"{run['job_file']}: {p}"[:300])
                     for p in problems]  # fmt: skip
        if positions is not None:
            context.starts[run_id] = positions
    if context.plan.get("blocks"):
        failures += crosscheck.check_run_against_plan(run=run, plan=context.plan, cells=context.cells)
    return failures


class JobFile(NamedTuple):
    """A run's job file as _job_files read it: its bytes, their text and the options it sets."""

    data: bytes
    text: str
    options: dict[str, str]  # crosscheck.job_file_options(text)


def _job_files(bundle, runs, documents) -> list[JobFile | None]:
    """Each run's job file, read and parsed before the checks run (None where a run's check reads it itself).

    Back to back, configparser reads a bundle's hundreds of job files markedly faster than one between each run's
    checks (its code and data stay in the CPU's caches). Anything unusual (a missing or oversized file, any error)
    is left to the run's check, which reads the file again and reports it as it always did, where it always did."""
    found: list[JobFile | None] = []
    for run in runs:
        job = None
        if documents.get(str(run.get("id"))) is not None and run.get("job_file"):
            try:
                data = bundle.read_bytes(run["job_file"])
                if len(data) <= MAX_JOB_FILE_BYTES:
                    text = data.decode("utf-8", errors="replace")
                    job = JobFile(data, text, crosscheck.job_file_options(text))
            except Exception:  # noqa: BLE001 - the run's check meets it again, inside its reading()
                job = None
        found.append(job)
    return found


def _oversized_job_file(path: str, size: int) -> crosscheck.CheckFailure:
    reason = f"job file {path} is {size} bytes, more than the limit of {MAX_JOB_FILE_BYTES} for a fio job file"
    return crosscheck.CheckFailure("job_options", crosscheck.REJECT, reason)
