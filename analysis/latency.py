"""Latency columns of a measurement, and their re-derivation from the stored raw fio outputs.

`lat_*` is the PTS response time: fio's total latency (submission + completion). `clat_*` and `slat_*` are its two
parts. Rows written before this distinction held completion latency under `lat_*`; `rederive_latency` re-reads each
row's own fio output from the stored bundle and writes every latency column again, re-judges the latency test's
steady state (its tracking variable is the mean latency) and its headline. Nothing is typed in: a row whose raw file
cannot be read keeps its completion figures under the `clat_*` names and records why its total latency is unknown.

The functions take the model classes as arguments so the data migration can pass its historical models.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from analysis.headline import worst_percentile
from analysis.steady import judge_series
from nvmedb.storage import StorageUnavailable
from nvmedb_client.bundle import BundleError, verify_bundle_stream
from nvmedb_client.fio_output import FioOutputError, FioSummary, parse_fio_output, summarize
from submissions.storage import open_bundle

logger = logging.getLogger(__name__)

P99, P9999 = "99.000000", "99.990000"
NO_TOTAL_PERCENTILES = (
    "the fio output has no total-latency percentiles (the job did not set lat_percentiles=1); "
    "completion-latency percentiles are in clat_p99_ns / clat_p9999_ns"
)
LATENCY_FIELDS = (
    "lat_mean_ns", "read_lat_mean_ns", "write_lat_mean_ns", "lat_max_ns", "read_lat_max_ns", "write_lat_max_ns",
    "lat_p99_ns", "lat_p9999_ns", "percentiles_ns", "clat_mean_ns", "read_clat_mean_ns", "write_clat_mean_ns",
    "clat_max_ns", "clat_p99_ns", "clat_p9999_ns", "clat_percentiles_ns", "slat_mean_ns", "read_slat_mean_ns",
    "write_slat_mean_ns", "slat_max_ns",
)  # fmt: skip
LAT_HEADLINES = {"lat_4k_mean": "lat_mean_ns", "lat_4k_p9999": "lat_p9999_ns"}


def latency_columns(summary: FioSummary | None) -> dict:
    """Every latency column of a Measurement from one fio summary (all None, percentile maps empty, without one)."""
    if summary is None:
        return {name: ({} if name.endswith("percentiles_ns") else None) for name in LATENCY_FIELDS}
    return {
        "lat_mean_ns": summary.lat_mean_ns,
        "read_lat_mean_ns": summary.read_lat_mean_ns,
        "write_lat_mean_ns": summary.write_lat_mean_ns,
        "lat_max_ns": summary.lat_max_ns,
        "read_lat_max_ns": summary.read_lat_max_ns,
        "write_lat_max_ns": summary.write_lat_max_ns,
        "lat_p99_ns": worst_percentile(summary.percentiles_ns, P99),
        "lat_p9999_ns": worst_percentile(summary.percentiles_ns, P9999),
        "percentiles_ns": summary.percentiles_ns,
        "clat_mean_ns": summary.clat_mean_ns,
        "read_clat_mean_ns": summary.read_clat_mean_ns,
        "write_clat_mean_ns": summary.write_clat_mean_ns,
        "clat_max_ns": summary.clat_max_ns,
        "clat_p99_ns": worst_percentile(summary.clat_percentiles_ns, P99),
        "clat_p9999_ns": worst_percentile(summary.clat_percentiles_ns, P9999),
        "clat_percentiles_ns": summary.clat_percentiles_ns,
        "slat_mean_ns": summary.slat_mean_ns,
        "read_slat_mean_ns": summary.read_slat_mean_ns,
        "write_slat_mean_ns": summary.write_slat_mean_ns,
        "slat_max_ns": summary.slat_max_ns,
    }


def latency_missing(summary: FioSummary | None) -> dict[str, str]:
    """Why a latency column is empty although fio's output was read."""
    if summary is None or summary.percentiles_ns or summary.lat_mean_ns is None:
        return {}
    return {"lat_p99_ns": NO_TOTAL_PERCENTILES, "lat_p9999_ns": NO_TOTAL_PERCENTILES}


# -- re-derivation of stored rows -------------------------------------------------------------------------------


@contextmanager
def stored_bundle_reader(storage, name: str) -> Iterator[Callable[[str], bytes] | None]:
    """A reader of files/<path> from the stored bundle `name`, verified again (hashes, signature) in one read of its
    stream, the way the worker verifies an upload (nothing is copied to disk first); None when the bundle is gone or
    no longer verifies."""
    try:
        with open_bundle(name, storage=storage) as stream:
            bundle = verify_bundle_stream(stream, name=Path(name).name, spill_prefix="nvmedb-rederive-")
    except StorageUnavailable:
        raise  # storage is away, not the bundle: stop rather than record every row as unreadable
    except (BundleError, OSError) as exc:
        logger.warning("stored bundle %s cannot be re-read: %s", name, exc)
        yield None
        return
    with bundle:
        yield bundle.read_bytes


def rederive_latency(*, models: dict, storage) -> dict[str, int]:
    """Rewrite every measurement's latency columns from its raw fio output; re-judge latency-test steady state and
    headlines. `models` maps "Submission", "TestRun", "Measurement", "SteadyStateWindow" to model classes.
    Returns counts: measurements re-read, measurements without a readable raw file, test runs re-judged."""
    counts = {"reread": 0, "unreadable": 0, "rejudged": 0}
    Submission, TestRun = models["Submission"], models["TestRun"]
    for submission in Submission.objects.filter(test_runs__isnull=False).distinct().iterator():
        name = submission.storage_name
        with stored_bundle_reader(storage, name) if name else nullcontext() as reader:
            for test_run in TestRun.objects.filter(submission=submission):
                reread, unreadable = _rederive_test_run(test_run, reader, models)
                counts["reread"] += reread
                counts["unreadable"] += unreadable
                if test_run.test == "lat":
                    rejudge_latency_test(test_run, models)
                    counts["rejudged"] += 1
    return counts


def _rederive_test_run(test_run, reader, models) -> tuple[int, int]:
    Measurement = models["Measurement"]
    rows = list(Measurement.objects.filter(test_run=test_run))
    reread = unreadable = 0
    for row in rows:
        summary, problem = _summary(reader, row.raw_file)
        missing = {k: v for k, v in (row.missing or {}).items() if k not in LATENCY_FIELDS}
        if summary is not None:
            columns = latency_columns(summary)
            missing.update(latency_missing(summary))
            reread += 1
        else:
            columns = _completion_only(row)
            reason = f"total latency unknown: {problem}; the stored figures were completion latency (clat_*)"
            missing.update({name: reason for name in ("lat_mean_ns", "lat_max_ns", "lat_p99_ns", "lat_p9999_ns")})
            unreadable += 1
        for name, value in columns.items():
            setattr(row, name, value)
        row.missing = missing
    Measurement.objects.bulk_update(rows, [*LATENCY_FIELDS, "missing"], batch_size=500)
    return reread, unreadable


def _summary(reader, raw_file: str) -> tuple[FioSummary | None, str]:
    if reader is None:
        return None, "the raw fio output is not stored on this site (imported results: import them again)"
    try:
        return summarize(parse_fio_output(reader(raw_file))), ""
    except (KeyError, OSError, FioOutputError) as exc:
        return None, f"the raw fio output {raw_file} cannot be read ({exc})"


def _completion_only(row) -> dict:
    """The figures of a row written before total latency existed: they were completion latency, so they move."""
    if row.clat_mean_ns is not None or row.lat_mean_ns is None:
        return {name: getattr(row, name) for name in LATENCY_FIELDS}  # already moved (a second run of this)
    columns = latency_columns(None)
    columns.update(
        clat_mean_ns=row.lat_mean_ns,
        read_clat_mean_ns=row.read_lat_mean_ns,
        write_clat_mean_ns=row.write_lat_mean_ns,
        clat_max_ns=row.lat_max_ns,
        clat_p99_ns=row.lat_p99_ns,
        clat_p9999_ns=row.lat_p9999_ns,
        clat_percentiles_ns=row.percentiles_ns or {},
    )
    return columns


def rejudge_latency_test(test_run, models: dict) -> None:
    """The latency test's tracking variable is the mean (total) latency: judge its windows again from the rows,
    mark the measurement window, and recompute the latency headlines over it."""
    Measurement, Window = models["Measurement"], models["SteadyStateWindow"]
    rows = list(Measurement.objects.filter(test_run=test_run).select_related("round"))
    windows = list(Window.objects.filter(test_run=test_run))
    for window in windows:
        cells = [
            r
            for r in rows
            if r.round.phase == window.phase
            and r.block_size_bytes == window.block_size_bytes
            and r.read_pct == window.read_pct
        ]
        points = [(r.round.number, getattr(r, window.metric)) for r in cells]
        missing = [r.run_key for r in cells if getattr(r, window.metric) is None]
        if missing:
            steady, steady_round, verdict, why = False, None, None, f"no {window.metric} for {', '.join(missing)}"
        else:
            steady, steady_round, verdict, why = judge_series([(n, float(v)) for n, v in points])
        _set_window(window, steady, steady_round, verdict or {}, why)
    Window.objects.bulk_update(windows, [*_WINDOW_FIELDS, "steady", "steady_round", "claim_differs", "note"])

    for row in rows:
        row.in_steady_window = any(
            w.steady and w.first_round is not None and w.phase == row.round.phase
            and w.first_round <= row.round.number <= w.last_round
            for w in windows
        )  # fmt: skip
    Measurement.objects.bulk_update(rows, ["in_steady_window"], batch_size=500)

    all_steady = bool(windows) and all(w.steady for w in windows)
    test_run.steady = all_steady if windows else None
    test_run.steady_round = max(w.steady_round for w in windows) if all_steady else None
    headline = {k: v for k, v in (test_run.headline or {}).items() if k not in LAT_HEADLINES}
    for key, column in LAT_HEADLINES.items():
        cells = sorted((r for r in rows if r.round.phase == "wdpc" and r.block_size_bytes == 4096 and r.read_pct == 0),
                       key=lambda r: r.round.number)  # fmt: skip
        chosen = [r for r in cells if r.in_steady_window] or cells[-5:]
        values = [getattr(r, column) for r in chosen if getattr(r, column) is not None]
        if values:
            headline[key] = sum(values) / len(values)
    test_run.headline = headline
    test_run.save(update_fields=["steady", "steady_round", "headline"])


_WINDOW_FIELDS = ("first_round", "last_round", "rounds", "values", "average", "data_excursion",
                  "data_excursion_limit", "slope", "intercept", "slope_excursion", "slope_excursion_limit")  # fmt: skip


def _set_window(window, steady: bool, steady_round: int | None, verdict: dict, why: str) -> None:
    for name in _WINDOW_FIELDS:
        value = verdict.get(name)
        setattr(window, name, value if value is not None or name not in ("rounds", "values") else [])
    window.steady = steady
    window.steady_round = steady_round
    window.claim_differs = window.claimed_steady is not None and window.claimed_steady != steady
    if window.claim_differs:
        found = f"steady at round {steady_round}" if steady else "not steady"
        claimed = "steady" if window.claimed_steady else "not steady"
        why = f"The client claimed {claimed}; the server finds {found} from the raw total latency, and its verdict stands."
    window.note = (why or "")[:300]
