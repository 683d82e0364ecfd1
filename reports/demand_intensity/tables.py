"""The ECW and DIRTH export tables: the demand-intensity curve per TC x QD cell, and DIRTH's response-time
histograms at its operating points (one row per bucket). Listed in reports.registry."""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.models import DemandIntensityPoint, HistogramBucket
from analysis.selectors import public_runs_q
from reports.table_types import Column, Table


def _c(name, type_, description, source=None, unit=""):
    return Column(name=name, type=type_, description=description, source=source or name, unit=unit)


def _run_columns(run: str) -> tuple:
    return (
        _c("run_id", "integer", "The test run (see the runs table).", f"{run}id"),
        _c("submission_id", "string", "The submission (bundle) the run came from (UUID).", f"{run}submission_id"),
        _c("drive_slug", "string", "The drive model's stable identifier (used in URLs).", f"{run}drive_model__slug"),
        _c("drive_name", "string", "Canonical model name.", f"{run}drive_model__name"),
        _c("vendor", "string", "Vendor name.", f"{run}drive_model__vendor__name"),
        _c(
            "test",
            "string",
            "PTS test: ecw (enterprise composite workload) or dirth (demand intensity / response time histogram).",
            f"{run}test",
        ),  # fmt: skip
        _c(
            "compliant",
            "boolean",
            "The run followed the PTS exactly (see the run's compliance reasons).",
            f"{run}compliant",
        ),  # fmt: skip
    )


def demand_intensity_columns() -> tuple:
    curve = "curve__"
    return (
        _c("point_id", "integer", "This row's stable id.", "pk"),
        *_run_columns(f"{curve}test_run__"),
        _c("curve_round", "integer", "The round the curve is read from.", f"{curve}round_number"),
        _c(
            "round_basis",
            "string",
            "Why that round: the steady round, or the last round when steady state was not reached.",
            f"{curve}round_basis",
        ),  # fmt: skip
        _c("threads", "integer", "Thread count (TC) of the cell."),
        _c("iodepth", "integer", "Outstanding I/O per thread (QD) of the cell."),
        _c("outstanding_ios", "integer", "Demand intensity: TC × QD."),
        _c("total_iops", "number", "Read + write I/O operations per second.", unit="IOPS"),
        _c("lat_mean_ns", "number", "Mean response time (total latency, fio lat), all I/O.", unit="ns"),
        _c(
            "lat_p99999_ns",
            "number",
            "99.999th percentile response time from fio's json+ bins of every job and "
            "direction (fio's rule: the first bin reaching the share).",
            unit="ns",
        ),  # fmt: skip
        _c(
            "claim_differs",
            "boolean",
            "The client's own curve differs from the one derived here from the raw data.",
            f"{curve}claim_differs",
        ),  # fmt: skip
        _c("run_key", "string", "Provenance: the fio run of the cell in the submission's bundle."),
    )


def histogram_columns() -> tuple:
    point = "operating_point__"
    return (
        _c("bucket_id", "integer", "This row's stable id.", "pk"),
        *_run_columns(f"{point}curve__test_run__"),
        _c("operating_point", "string", "max (MaxIOPS), mid (MidIOPS) or min (MinIOPS, TC 1/QD 1).", f"{point}name"),
        _c("threads", "integer", "Thread count (TC) of the operating point.", f"{point}threads"),
        _c("iodepth", "integer", "Outstanding I/O per thread (QD) of the operating point.", f"{point}iodepth"),
        _c("total_iops", "number", "IOPS at the operating point.", f"{point}total_iops", "IOPS"),
        _c(
            "latency_kind",
            "string",
            "lat (total latency, the response time) or clat (completion latency, when the "
            "output had no total-latency bins).",
            f"{point}latency_kind",
        ),  # fmt: skip
        _c("total_ios", "integer", "I/Os in the whole histogram.", f"{point}total_ios"),
        _c(
            "histogram_source",
            "string",
            "capture: the operating point's own capture run after the sweep (checked to have run at the point's TC "
            "and QD); sweep cell: the point's cell of the curve's round (bundles of clients without captures).",
            f"{point}histogram_source",
        ),  # fmt: skip
        _c("lower_ns", "integer", "Bucket's lower bound (included).", unit="ns"),
        _c("upper_ns", "integer", "Bucket's upper bound (excluded); empty for the open last bucket.", unit="ns"),
        _c("io_count", "integer", "I/Os whose response time fell in the bucket."),
        _c(
            "run_key",
            "string",
            "Provenance: the fio run of the operating point in the submission's bundle.",
            f"{point}run_key",
        ),  # fmt: skip
        _c(
            "histogram_run_key",
            "string",
            "Provenance: the fio run the histogram was read from (the capture, or the sweep cell).",
            f"{point}histogram_run_key",
        ),  # fmt: skip
    )


def public_points(*, trials_of: int | None = None) -> QuerySet[DemandIntensityPoint]:
    return DemandIntensityPoint.objects.filter(public_runs_q("curve__test_run__", trials_of=trials_of))


def public_buckets(*, trials_of: int | None = None) -> QuerySet[HistogramBucket]:
    return HistogramBucket.objects.filter(public_runs_q("operating_point__curve__test_run__", trials_of=trials_of))


def tables() -> tuple:
    return (
        Table(
            "demand_intensity",
            "Demand intensity (ECW, DIRTH)",
            "One row per TC × QD cell of every public ECW or DIRTH run: IOPS against mean and 99.999th-percentile "
            "response time, from the steady round (or the last round).",
            demand_intensity_columns(),
            public_points,
            run_prefix="curve__test_run__",
            ordering=("pk",),
        ),
        Table(
            "response_time_histograms",
            "Response-time histograms (DIRTH)",
            "One row per histogram bucket at each operating point (MaxIOPS, MidIOPS, MinIOPS) of every public DIRTH "
            "run; buckets holding no I/O are left out.",
            histogram_columns(),
            public_buckets,
            run_prefix="operating_point__curve__test_run__",
            ordering=("pk",),
        ),
    )
