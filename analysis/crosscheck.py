"""Does the raw data agree with itself? Each check returns the exact reason of every disagreement.

A number that contradicts another number of the same fio run (IOPS × block size vs bandwidth, bytes vs bandwidth ×
runtime), a run that is not the run the plan declared, or a clock that goes backwards means the bundle was edited or
broken: the submission is rejected. The drive's own smart-log counters are a weaker witness (another process may
have used the drive, some firmware counts oddly), so a disagreement there holds the submission for review instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from analysis.fio_sizes import parse_seconds, parse_size
from analysis.job_files import job_file_options
from analysis.plan_cells import PlanCells
from analysis.pts import captures as pts_captures
from analysis.pts import prewrites as pts_prewrites
from analysis.pts import segments as pts_segments
from analysis.wear import DATA_UNIT_BYTES

REJECT = "reject"
HOLD = "hold"

# fio derives iops, bw and io_bytes from the same counters; they differ only by its integer rounding.
ARITHMETIC_TOLERANCE = 0.01
# A time_based run may stop a little early (ramp, signal) but not by more than this share of its declared runtime.
RUNTIME_TOLERANCE = 0.05
# Seconds of clock slack between the client's timestamps and fio's (fio stamps whole seconds).
CLOCK_SLACK_S = 2.0
# smart-log data units are rounded up to 1000 × 512 bytes on every read of the counter (NVMe Base Spec, SMART log):
# each of the two snapshots may be one unit off. The drive counts host I/O, not NAND writes, so write amplification
# does not inflate it; other processes on the same host may, so the upper bound is generous while the lower bound
# (the drive saw less I/O than fio claims to have done) is strict.
SMART_LOWER_RATIO = 0.98
SMART_UPPER_RATIO = 1.5
SMART_ROUNDING_BYTES = 2 * DATA_UNIT_BYTES
SMART_OTHER_IO_BYTES = 256 * 1024**2


@dataclass(frozen=True)
class CheckFailure:
    check: str
    severity: str  # reject | hold
    reason: str


def _close(a: float, b: float, *, tolerance: float, absolute: float = 0.0) -> bool:
    return abs(a - b) <= max(tolerance * max(abs(a), abs(b)), absolute)


_FIGURES = ("iops", "bw", "bw_bytes", "io_bytes", "io_kbytes", "runtime")


def _entries(doc: Mapping) -> list:
    entries = doc.get("jobs") or doc.get("client_stats") or []
    return entries if isinstance(entries, list) else []


def _all_direction_data(doc: Mapping) -> Iterable[tuple[int, str, Mapping]]:
    for index, entry in enumerate(_entries(doc)):
        if not isinstance(entry, Mapping):
            continue
        for direction in ("read", "write", "mixed"):
            data = entry.get(direction)
            if isinstance(data, Mapping):
                yield index, direction, data


def _bad_figure(data: Mapping) -> str | None:
    """The first of fio's figures that is not a finite number below 2**63, as "key = value"."""
    for key in _FIGURES:
        if key not in data:
            continue
        value = data[key]
        kind = type(value)
        if (kind is int or kind is float) and -(2**63) < value < 2**63:
            continue  # the usual figure, told apart without the general test below
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) < 2**63:
            return f"{key} = {str(value)[:40]}"
    return None


Directions = list[tuple[int, str, Mapping, str | None]]


def figure_directions(doc: Mapping) -> Directions:
    """Every direction of every job with its first unusable figure (None when all are numbers): one walk of the
    document, which a caller running several checks on it passes to each as `directions`."""
    return [(index, direction, data, _bad_figure(data)) for index, direction, data in _all_direction_data(doc)]


def _direction_data(doc: Mapping, directions: Directions | None = None) -> list[tuple[int, str, Mapping]]:
    """Every direction whose figures are numbers (check_figures rejects the others, with the reason)."""
    found = figure_directions(doc) if directions is None else directions
    return [(index, direction, data) for index, direction, data, bad in found if bad is None]


def check_figures(doc: Mapping, *, raw_file: str, directions: Directions | None = None) -> list[CheckFailure]:
    """fio's own figures must be finite numbers a 64-bit column can hold, and its options objects (as fio writes
    them); the other checks read only figures that are numbers and options that are objects."""
    failures = [
        CheckFailure("figures", REJECT, f"{raw_file} $.jobs[{index}].{direction}: {bad} is not a usable number")
        for index, direction, _, bad in (figure_directions(doc) if directions is None else directions)
        if bad is not None
    ]
    shapes = [("$['global options']", doc.get("global options"))]
    shapes += [
        (f"$.jobs[{i}]['job options']", e.get("job options"))
        for i, e in enumerate(_entries(doc))
        if isinstance(e, Mapping)
    ]
    failures += [
        CheckFailure("figures", REJECT, f"{raw_file} {where} is a {type(value).__name__}, not an object of options")
        for where, value in shapes
        if value is not None and not isinstance(value, Mapping)
    ]
    return failures


def _bw_bytes(data: Mapping) -> float:
    return float(data["bw_bytes"]) if "bw_bytes" in data else float(data.get("bw", 0)) * 1024


def _io_bytes(data: Mapping, version: str | None) -> float:
    if "io_kbytes" in data:
        return float(data["io_kbytes"]) * 1024
    match = re.match(r"fio-(\d+)\.(\d+)", version or "")
    old = bool(match) and (int(match.group(1)), int(match.group(2))) < (2, 21)
    return float(data.get("io_bytes", 0)) * (1024 if old else 1)


def direction_runtime_s(doc: Mapping, directions: Directions | None = None) -> float | None:
    """Wall-clock runtime of the run: the longest read/write `runtime`. (fio's `job_runtime` under group_reporting
    is the sum over all jobs, twice the wall clock with numjobs=2, so it is not used.)"""
    runtimes = [float(data.get("runtime", 0)) for _, _, data in _direction_data(doc, directions)]
    longest = max(runtimes, default=0.0)
    return longest / 1000 if longest > 0 else None


def check_iops_bandwidth(
    doc: Mapping, *, block_size_bytes: int | None, raw_file: str, directions: Directions | None = None
) -> list[CheckFailure]:
    """IOPS × block size must equal bandwidth for a fixed block size (mixed block sizes cannot be checked)."""
    failures = []
    entries = _entries(doc)
    sizes: dict[int, int | None] = {}  # each job's size, for its read, write and mixed figures
    for index, direction, data in _direction_data(doc, directions):
        if index not in sizes:
            # a document with several job groups (stonewall) carries each group's own bs in its "job options"
            options = _mapping(entries[index].get("job options")) if isinstance(entries[index], Mapping) else {}
            own = options.get("bs")
            size = parse_size(own) if own else block_size_bytes
            mixed = "bssplit" in options or "bssplit" in _mapping(doc.get("global options"))
            sizes[index] = None if mixed else size
        size = sizes[index]
        if not size:
            continue  # a mix of block sizes (bssplit) cannot be checked this way
        iops = float(data.get("iops", 0))
        bw = _bw_bytes(data)
        if iops == 0 and bw == 0:
            continue
        # fio's `bw` in KiB/s is an integer: allow that rounding for slow runs.
        if not _close(iops * size, bw, tolerance=ARITHMETIC_TOLERANCE, absolute=2048):
            failures.append(
                CheckFailure(
                    "iops_bandwidth",
                    REJECT,
                    f"{raw_file} $.jobs[{index}].{direction}: {iops:g} IOPS × {size} B = "
                    f"{iops * size:.0f} B/s, but bw is {bw:.0f} B/s",
                )
            )
    return failures


def check_bytes_runtime(
    doc: Mapping, *, raw_file: str, declared_runtime_s: float | None = None, directions: Directions | None = None
) -> list[CheckFailure]:
    """Bytes moved must equal bandwidth × runtime, and a run must last as long as it was declared to."""
    failures = []
    version = doc.get("fio version")
    longest_ms = 0.0
    for index, direction, data in _direction_data(doc, directions):
        runtime_ms = float(data.get("runtime", 0))
        longest_ms = max(longest_ms, runtime_ms)
        io_bytes = _io_bytes(data, version)
        if runtime_ms <= 0:
            if io_bytes > 0:
                failures.append(
                    CheckFailure(
                        "bytes_runtime",
                        REJECT,
                        f"{raw_file} $.jobs[{index}].{direction}: {io_bytes:.0f} bytes moved in a runtime of 0 ms",
                    )
                )
            continue
        expected = _bw_bytes(data) * runtime_ms / 1000
        if not _close(io_bytes, expected, tolerance=ARITHMETIC_TOLERANCE, absolute=2048 * runtime_ms / 1000):
            failures.append(
                CheckFailure(
                    "bytes_runtime",
                    REJECT,
                    f"{raw_file} $.jobs[{index}].{direction}: io_bytes {io_bytes:.0f} B, but bw × runtime = "
                    f"{expected:.0f} B",
                )
            )
    if declared_runtime_s and longest_ms and longest_ms / 1000 < declared_runtime_s * (1 - RUNTIME_TOLERANCE):
        failures.append(
            CheckFailure(
                "bytes_runtime",
                REJECT,
                f"{raw_file}: fio ran {longest_ms / 1000:g} s of the {declared_runtime_s:g} s the plan declared",
            )
        )
    return failures


def _mapping(value) -> Mapping:
    """fio writes options as an object; anything else in their place holds no option."""
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def job_options(doc: Mapping, job_file_text: str | None = None) -> dict[str, str]:
    """The options fio ran with: the job file's, then fio's echo of global and per-job options on top."""
    options = job_file_options(job_file_text)
    options.update({str(k): str(v) for k, v in _mapping(doc.get("global options")).items()})
    # fio in client/server mode reports each job under client_stats, with its options there
    for entry in _entries(doc):
        if isinstance(entry, Mapping):
            options.update({str(k): str(v) for k, v in _mapping(entry.get("job options")).items()})
    return options


def check_job_file_matches_output(
    *, file_options: Mapping[str, str], doc: Mapping, raw_file: str, echoed: Mapping[str, str] | None = None
) -> list[CheckFailure]:
    """The job file in the bundle is the one fio ran: its block size and pattern are those fio's output echoes
    (`echoed`: job_options(doc), when the caller has it)."""
    echoed = job_options(doc) if echoed is None else echoed
    failures = []
    for key in ("bs", "rw"):
        mine, theirs = file_options.get(key), echoed.get(key)
        if mine is None or theirs is None:
            continue
        same = parse_size(mine) == parse_size(theirs) if key == "bs" else mine.strip() == theirs.strip()
        if not same:
            failures.append(
                CheckFailure(
                    "job_options", REJECT, f"{raw_file}: the job file says {key}={mine}, fio ran {key}={theirs}"
                )
            )
    return failures


def _percent(text: str) -> int | None:
    """A percentage option (rwmixread=70); None when it is not one, which then differs from every declared mix."""
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if 0 <= value <= 100 else None


_RW_READS = {"read": 100, "randread": 100, "write": 0, "randwrite": 0, "trim": 0, "randtrim": 0}


def check_job_options(*, run: Mapping, options: Mapping[str, str], raw_file: str) -> list[CheckFailure]:
    """The fio job must be the run the plan declared: block size, pattern, mix, depth, threads, runtime."""
    failures: list[CheckFailure] = []

    def differ(what: str, declared, actual) -> None:
        failures.append(
            CheckFailure("job_options", REJECT, f"{raw_file}: the plan declared {what} {declared}, fio ran {actual}")
        )

    if "bs" in options and run.get("block_size_bytes") is not None:
        size = parse_size(options["bs"], kb_base=1000 if str(options.get("kb_base", "")).strip() == "1000" else 1024)
        if size is not None and size != _number(run["block_size_bytes"]):
            differ("block size", run["block_size_bytes"], f"bs={options['bs']}")
    rw = options.get("rw") or options.get("readwrite")
    if rw and run.get("pattern") and rw != run["pattern"]:
        differ("pattern", run["pattern"], f"rw={rw}")
    if rw and run.get("read_pct") is not None:
        if rw in _RW_READS:
            actual_read = _RW_READS[rw]
        elif "rwmixread" in options:
            actual_read = _percent(options["rwmixread"])
        elif "rwmixwrite" in options:
            written = _percent(options["rwmixwrite"])
            actual_read = None if written is None else 100 - written
        else:
            actual_read = 50  # fio's default mix for rw/randrw
        if actual_read != _number(run["read_pct"]):
            differ("read share", f"{run['read_pct']}%", f"{actual_read}% reads")
    for key, option in (("iodepth", "iodepth"), ("threads", "numjobs")):
        if run.get(key) is not None and option in options:
            try:
                actual = int(float(options[option]))
            except (ValueError, OverflowError):
                differ(key, run[key], f"{option}={options[option]}")
                continue
            if actual != _number(run[key]):
                differ(key, run[key], f"{option}={options[option]}")
    if run.get("runtime_s") and "runtime" in options:
        seconds = parse_seconds(options["runtime"])
        declared = _number(run["runtime_s"])
        if seconds is not None and (declared is None or abs(seconds - declared) > 0.5):
            differ("runtime", f"{run['runtime_s']} s", f"runtime={options['runtime']}")
    return failures


def check_timestamps(
    *,
    started_at: datetime | None,
    finished_at: datetime | None,
    runs: Sequence[Mapping],
    fio_end_times: Mapping[str, float] | None = None,
) -> list[CheckFailure]:
    """Runs happen one after another, inside the bundle's own start and finish, and fio's clock agrees.

    `runs` carry `id`, `started_at` and `finished_at` as datetimes; `fio_end_times` maps a run id to fio's own
    `timestamp` (epoch seconds when fio finished).
    """
    failures = []

    def bad(reason: str) -> None:
        failures.append(CheckFailure("timestamps", REJECT, reason))

    previous_end: datetime | None = started_at
    previous_id = "the bundle's start"
    for run in runs:
        start, end = run.get("started_at"), run.get("finished_at")
        if start is None or end is None:
            continue
        if end < start:
            bad(f"run {run['id']} finished ({end.isoformat()}) before it started ({start.isoformat()})")
        if previous_end is not None and (start - previous_end).total_seconds() < -CLOCK_SLACK_S:
            bad(
                f"run {run['id']} started ({start.isoformat()}) before {previous_id} ended ({previous_end.isoformat()})"
            )
        fio_end = (fio_end_times or {}).get(run["id"])
        if fio_end is not None and not (
            start.timestamp() - CLOCK_SLACK_S <= fio_end <= end.timestamp() + CLOCK_SLACK_S
        ):
            bad(
                f"run {run['id']}: fio's own timestamp {fio_end:.0f} is outside the run's {start.isoformat()} – "
                f"{end.isoformat()}"
            )
        previous_end, previous_id = end, f"run {run['id']}"
    if (
        finished_at is not None
        and previous_end is not None
        and previous_id != "the bundle's start"
        and (finished_at - previous_end).total_seconds() < -CLOCK_SLACK_S
    ):
        bad(f"the bundle says it finished ({finished_at.isoformat()}) before {previous_id} ended")
    return failures


def _counter(smart: Mapping | None, key: str) -> float | None:
    if not smart or smart.get(key) is None:
        return None
    try:
        return float(smart[key])
    except (TypeError, ValueError):
        return None


def check_smart_counters(
    *, before: Mapping | None, after: Mapping | None, read_bytes: float, write_bytes: float, label: str
) -> list[CheckFailure]:
    """The drive's data-unit counters must have moved as much as fio says it read and wrote (see the tolerances)."""
    failures = []
    for direction, moved in (("read", read_bytes), ("written", write_bytes)):
        key = f"data_units_{direction}"
        first, last = _counter(before, key), _counter(after, key)
        if first is None or last is None:
            continue
        seen = (last - first) * DATA_UNIT_BYTES
        low = moved * SMART_LOWER_RATIO - SMART_ROUNDING_BYTES
        high = moved * SMART_UPPER_RATIO + SMART_ROUNDING_BYTES + SMART_OTHER_IO_BYTES
        if seen < low:
            failures.append(
                CheckFailure(
                    "smart_counters",
                    HOLD,
                    f"{label}: fio {direction.replace('written', 'wrote').replace('read', 'read')} {moved:.0f} bytes "
                    f"but the drive's {key} moved by only {seen:.0f} bytes",
                )
            )
        elif seen > high:
            failures.append(
                CheckFailure(
                    "smart_counters",
                    HOLD,
                    f"{label}: the drive's {key} moved by {seen:.0f} bytes, far more than the {moved:.0f} bytes fio "
                    f"{'read' if direction == 'read' else 'wrote'}",
                )
            )
    return failures


def _objects(value) -> list[Mapping]:
    if not isinstance(value, list):
        return []
    return [item for item in value if type(item) is dict or isinstance(item, Mapping)]


def _number(value) -> float | None:
    kind = type(value)  # the usual cases first, as the general path below would give them
    if kind is int:
        try:
            return float(value)  # finite whenever it does not overflow
        except OverflowError:
            return None
    if kind is float:
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def check_run_against_plan(*, run: Mapping, plan: Mapping, cells: PlanCells | None = None) -> list[CheckFailure]:
    """The run entry must be one the declared plan contains: its test, phase, cell, threads, depth and runtime."""
    cells = cells or PlanCells()
    blocks = [b for b in _objects(_mapping(plan).get("blocks")) if b.get("test") == run.get("test")]
    if not blocks:
        return [CheckFailure("plan", REJECT, f"run {run.get('id')}: the plan has no {run.get('test')} test")]
    if run.get("phase") == "wipc":
        if not any(b.get("wipc") for b in blocks):
            return [CheckFailure("plan", REJECT, f"run {run.get('id')}: the plan has no preconditioning for it")]
        return []
    captured = pts_captures.capture_of(run, blocks)  # a DIRTH capture: its TC/QD is decided after the sweep
    if captured is not None:
        problems = pts_captures.capture_problems(run, *captured)
        return [CheckFailure("plan", REJECT, f"run {run.get('id')}: " + "; ".join(problems))] if problems else []
    prewrite = pts_prewrites.prewrite_of(run, blocks)  # a DIRTH pre-write: writes, no cell of the sweep
    if prewrite is not None:
        problems = pts_prewrites.prewrite_problems(run, *prewrite)
        return [CheckFailure("plan", REJECT, f"run {run.get('id')}: " + "; ".join(problems))] if problems else []
    segment = pts_segments.segment_of(run, blocks)  # a HIR/XSR timed run, not a round of a series
    if segment is not None:
        problems = pts_segments.segment_problems(run, segment)
        return [CheckFailure("plan", REJECT, f"run {run.get('id')}: " + "; ".join(problems))] if problems else []
    cell = (run.get("pattern"), run.get("block_size_bytes"), run.get("read_pct"))
    problems = []
    for block in blocks:
        for series in _objects(block.get("series")):
            if series.get("phase") != run.get("phase"):
                continue
            planned_cells = cells.with_depth(series)
            own_depth = (cell + (run.get("threads"), run.get("iodepth"))) in planned_cells  # a TC x QD sweep's cell
            if not own_depth and (cell + (None, None)) not in planned_cells:
                continue
            problems = []
            for key in ("threads", "iodepth"):
                if not own_depth and run.get(key) != series.get(key):
                    problems.append(f"{key} {run.get(key)} where the plan says {_shown(series.get(key))}")
            declared, planned = _number(run.get("runtime_s")), _number(series.get("runtime_s"))
            if (
                declared is not None
                and series.get("runtime_s") is not None
                and (planned is None or abs(declared - planned) > 0.5)
            ):
                problems.append(f"runtime {run['runtime_s']} s where the plan says {_shown(series['runtime_s'])} s")
            max_rounds = _number(series.get("max_rounds"))
            if series.get("max_rounds") and (max_rounds is None or (_number(run.get("round")) or 0) > max_rounds):
                problems.append(f"round {run.get('round')} beyond the plan's {_shown(series['max_rounds'])} rounds")
            if not problems:
                return []
    if not problems:
        problems = [f"cell {cell[0]} {cell[1]} B {cell[2]}% reads is not in the plan's {run.get('phase')} series"]
    return [CheckFailure("plan", REJECT, f"run {run.get('id')}: " + "; ".join(problems))]


def _shown(value) -> str:
    """A value from the bundle, as a reason quotes it (short: a reason is stored in a 300-character column)."""
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."
