"""The compare page's data: each drive's headline aggregates and the figures of its representative runs, written with
its summary (browse.summaries) or, for a drive without one, read from those runs' measurements."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise

from analysis.models import DriveModel, DriveModelAggregate, DrivePageSummary, Measurement
from browse.queries import SUMMARY_FORMAT, DriveData, cached_summaries
from reports.windows import window_cells, window_mean

COMPARED_TESTS = ("iops", "tp", "lat")
COMPARE_MEASUREMENT_FIELDS = ("test_run_id", "round__phase", "round__number", "block_size_bytes", "read_pct",
                              "total_iops", "read_bw_bytes_per_s", "write_bw_bytes_per_s", "lat_mean_ns",
                              "lat_p9999_ns", "in_steady_window")  # fmt: skip


@dataclass
class CompareData:
    drives: list[DriveModel]
    overall: dict[int, dict[str, DriveModelAggregate]]
    figures: dict[int, dict]  # drive id -> compare_figures of its representative runs


def compare_data(*, drives: list[DriveModel]) -> CompareData:
    """Headline aggregates and the figures of each drive's representative runs: two queries when every drive's
    summary was written with its data; for a drive without one its runs' measurements are read here."""
    ids = [d.pk for d in drives]
    overall: dict[int, dict[str, DriveModelAggregate]] = defaultdict(dict)
    for aggregate in DriveModelAggregate.objects.filter(drive_model_id__in=ids, factor="all"):
        overall[aggregate.drive_model_id][aggregate.metric] = aggregate
    figures = dict(
        DrivePageSummary.objects.filter(drive_model_id__in=ids, format=SUMMARY_FORMAT).values_list(
            "drive_model_id", "compare"
        )
    )
    missing = [pk for pk in ids if pk not in figures]
    if missing:
        summaries, _ = cached_summaries(missing, {pk: list(overall[pk].values()) for pk in missing})
        figures.update(computed_compare_figures({pk: summaries[pk].representative for pk in missing}))
    return CompareData(drives=drives, overall=dict(overall), figures=figures)


def computed_compare_figures(representative: dict[int, dict[str, int]]) -> dict[int, dict]:
    """Drive id -> the compare figures of its representative runs (test -> run id), from their measurements."""
    run_ids = {run_id: test for by_test in representative.values() for test, run_id in by_test.items()
               if test in COMPARED_TESTS}  # fmt: skip
    measurements: dict[int, list[dict]] = defaultdict(list)
    rows = (
        Measurement.objects.filter(test_run_id__in=list(run_ids))
        .order_by("test_run_id", "round__number", "block_size_bytes", "read_pct")
        .values(*COMPARE_MEASUREMENT_FIELDS)
    )
    for row in rows:
        measurements[row["test_run_id"]].append(row)
    return {
        pk: compare_figures({test: measurements.get(run_id, []) for test, run_id in by_test.items()})
        for pk, by_test in representative.items()
    }


def charted_compare_figures(data: DriveData) -> dict:
    """The compare figures of the drive's representative runs (`data` of its default page) from the measurements its
    charts read (DriveData.measurements: every column the compare reads, in another order), instead of reading them
    again: each run's rows put in computed_compare_figures' order, which is the order it reads them in only when no
    two rows of a run share a place in it. When two do (or a run is not charted), they are read as it reads them."""
    representative = data.summary.representative
    compared = {test: run_id for test, run_id in representative.items() if test in COMPARED_TESTS}
    charted = {run["id"] for run in data.selected.values()}
    if not data.is_default_selection or not charted.issuperset(compared.values()):
        return computed_compare_figures({data.drive.pk: representative})[data.drive.pk]
    rows_of = {test: sorted(data.measurements.get(run_id, []), key=_compare_place) for test, run_id in compared.items()}
    if any(_share_a_place(rows) for rows in rows_of.values()):
        return computed_compare_figures({data.drive.pk: representative})[data.drive.pk]
    return compare_figures(rows_of)


def _compare_place(row: dict) -> tuple[int, int, int]:
    """A measurement's place in computed_compare_figures' order within its run."""
    return row["round__number"], row["block_size_bytes"], row["read_pct"]


def _share_a_place(rows: list[dict]) -> bool:
    """Whether two of a run's rows, in order, share a place: the database returns such rows in either order."""
    return any(_compare_place(a) == _compare_place(b) for a, b in pairwise(rows))


def compare_figures(rows_of: dict[str, list[dict]]) -> dict:
    """What the compare page plots of one drive, from the measurements of its representative runs by test: the IOPS
    by block size at 100% and 0% reads, sequential throughput by block size, latency (mean, 99.99%) by cell; each a
    measurement-window mean. JSON-shaped (lists, string keys) so a summary can store it."""
    iops = window_cells([r for r in rows_of.get("iops", []) if r["round__phase"] == "wdpc"])
    tp = window_cells(rows_of.get("tp", []))
    lat = window_cells(rows_of.get("lat", []))
    return {
        "iops": {str(mix): [[bs, window_mean(c, "total_iops")] for (_, bs, m), c in iops.items() if m == mix]
                 for mix in (100, 0)},
        "tp": {"read": [[bs, window_mean(c, "read_bw_bytes_per_s")] for (p, bs, _), c in tp.items() if p == "tp-read"],
               "write": [[bs, window_mean(c, "write_bw_bytes_per_s")] for (p, bs, _), c in tp.items()
                         if p == "tp-write"]},
        "lat": [[p, bs, mix, window_mean(c, "lat_mean_ns"), window_mean(c, "lat_p9999_ns")]
                for (p, bs, mix), c in lat.items()],
    }  # fmt: skip
