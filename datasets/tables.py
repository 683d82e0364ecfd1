"""The published tables: their columns (stable names, types, units, meaning) and the query that yields their rows.

A column's name carries its unit when it has one (`bw_bytes_per_s`, `lat_mean_ns`); values are SI base units
(bytes, bytes/s, ns, s, kelvin, IOPS). Missing values stay missing (null / empty cell). Names and meanings are part of
the v1 promise: a documented column is never removed or renamed, only added to.

Types are Frictionless Table Schema types: integer, number, boolean, string, datetime.

TABLES, in publishing order: the tables every core test shares (declared here), each PTS test's own (HIR, XSR, ECW
and DIRTH: reports.registry), the factor effects and run results (across tests), then the nvmedb extensions'
(surface).
"""

from __future__ import annotations

from django.db.models import (
    BooleanField,
    ExpressionWrapper,
    Q,
    QuerySet,
)

from analysis.models import DriveModel, DriveModelAggregate
from analysis.selectors import (
    public_measurements,
    public_pts_runs,
    public_submissions,
    public_test_runs,
    public_windows,
)
from datasets import tables_factor_effects, tables_run_results
from reports import registry
from reports.table_kit import RUN_COLUMNS, drive_columns, run_columns
from reports.table_types import Column, Table
from submissions.models import Submission


def _c(name, type_, description, source=None, unit=""):
    return Column(name=name, type=type_, description=description, source=source or name, unit=unit)


MEASUREMENT_COLUMNS: tuple[Column, ...] = (
    _c("measurement_id", "integer", "This row's stable id.", "pk"),
    _c("submission_id", "string", "The submission (bundle) the row came from (UUID).", "test_run__submission_id"),
    _c("run_id", "integer", "The test run (see the runs table).", "test_run_id"),
    *drive_columns("drive_model__"),
    *run_columns("test_run__"),
    _c("phase", "string", "Test phase: wipc, wdpc (a test's rounds), tp-write, tp-read, wsat; hir-pc, hir-wait, "
       "hir-base (HIR); xsr-g1, xsr-g2, xsr-g3 (XSR); prewrite and capture (DIRTH's pre-writes and histogram "
       "captures, not cells of its curve).", "round__phase"),
    _c("series", "string", "Rounds that count independently (e.g. a throughput block size); empty when one series.",
       "round__series"),
    _c("round", "integer", "Round number within the phase and series, from 1.", "round__number"),
    _c("block_size_bytes", "integer", "I/O block size; 0 for a mix of block sizes (ws-comp).", unit="bytes"),
    _c("read_pct", "integer", "Read share of the R/W mix, 0..100 (100 = all reads).", unit="%"),
    _c("threads", "integer", "Thread count (TC)."),
    _c("iodepth", "integer", "Outstanding I/O per thread (QD)."),
    _c("read_iops", "number", "Read I/O operations per second.", unit="IOPS"),
    _c("write_iops", "number", "Write I/O operations per second.", unit="IOPS"),
    _c("total_iops", "number", "Read + write I/O operations per second.", unit="IOPS"),
    _c("read_bw_bytes_per_s", "number", "Read bandwidth.", unit="bytes/s"),
    _c("write_bw_bytes_per_s", "number", "Write bandwidth.", unit="bytes/s"),
    _c("total_bw_bytes_per_s", "number", "Read + write bandwidth.", unit="bytes/s"),
    _c("read_bytes", "integer", "Bytes read during the measurement.", unit="bytes"),
    _c("write_bytes", "integer", "Bytes written during the measurement.", unit="bytes"),
    _c("lat_mean_ns", "number", "Mean total latency (submission + completion, fio lat), all I/O: the PTS "
       "response time.", unit="ns"),
    _c("read_lat_mean_ns", "number", "Mean total latency of reads.", unit="ns"),
    _c("write_lat_mean_ns", "number", "Mean total latency of writes.", unit="ns"),
    _c("lat_max_ns", "number", "Maximum total latency.", unit="ns"),
    _c("lat_p99_ns", "number", "99th percentile total latency, worst direction (empty when fio was not asked for "
       "total-latency percentiles).", unit="ns"),
    _c("lat_p9999_ns", "number", "99.99th percentile total latency, worst direction.", unit="ns"),
    _c("clat_mean_ns", "number", "Mean completion latency (fio clat: submission to completion), all I/O.", unit="ns"),
    _c("clat_max_ns", "number", "Maximum completion latency.", unit="ns"),
    _c("clat_p99_ns", "number", "99th percentile completion latency, worst direction.", unit="ns"),
    _c("clat_p9999_ns", "number", "99.99th percentile completion latency, worst direction.", unit="ns"),
    _c("slat_mean_ns", "number", "Mean submission latency (fio slat), all I/O.", unit="ns"),
    _c("slat_max_ns", "number", "Maximum submission latency.", unit="ns"),
    _c("runtime_s", "number", "Measured run time.", unit="s"),
    _c("temperature_before_k", "number", "Drive composite temperature before the measurement.", unit="K"),
    _c("temperature_after_k", "number", "Drive composite temperature after the measurement.", unit="K"),
    _c("link_utilization", "number", "Measured bandwidth ÷ usable PCIe link bandwidth (0..1; near 1 = bus-bound)."),
    _c("in_steady_window", "boolean", "The round is inside the PTS steady-state measurement window."),
    _c("flag_kinds", "string", "Kinds of flags on this measurement, ';'-separated and sorted (e.g. bus_bound); "
       "run-wide flags are in runs.flag_kinds. Formerly named flags (renamed: pandas' DataFrame.flags shadowed it).",
       "flag_kinds__kinds"),
    _c("started_at", "datetime", "When the measurement started (UTC)."),
    _c("raw_file", "string", "Provenance: the fio output inside the submission's bundle this row was read from."),
    _c("json_path", "string", "Provenance: where in raw_file the values were read, e.g. $.jobs[*]."),
)  # fmt: skip

STEADY_STATE_COLUMNS: tuple[Column, ...] = (
    _c("run_id", "integer", "The test run (see the runs table).", "test_run_id"),
    _c("submission_id", "string", "The submission (bundle) the run came from (UUID).", "test_run__submission_id"),
    *drive_columns("test_run__drive_model__"),
    _c("test", "string", "PTS test: iops, tp, lat, wsat, ecw or dirth.", "test_run__test"),
    _c("variable", "string", "The tracking variable, e.g. iops.total_iops.rw000.bs4096."),
    _c("phase", "string", "Test phase of the tracked rounds."),
    _c("metric", "string", "The tracked measurement column, e.g. total_iops (same unit as that column)."),
    _c("block_size_bytes", "integer", "Block size of the tracked cell.", unit="bytes"),
    _c("read_pct", "integer", "Read share of the tracked cell's R/W mix, 0..100.", unit="%"),
    _c("window_first_round", "integer", "First round of the measurement window.", "first_round"),
    _c("window_last_round", "integer", "Last round of the measurement window.", "last_round"),
    _c("average", "number", "Mean of the tracked metric over the window (unit of the metric)."),
    _c("data_excursion", "number", "Max − min of the tracked metric in the window (unit of the metric)."),
    _c("data_excursion_limit", "number", "PTS limit for the data excursion: 20 % of the average."),
    _c("slope", "number", "Least-squares slope of the metric over the window, per round."),
    _c("slope_excursion", "number", "Slope × window width (unit of the metric)."),
    _c("slope_excursion_limit", "number", "PTS limit for the slope excursion: 10 % of the average."),
    _c("steady", "boolean", "Steady state as re-derived by nvmedb from the raw data."),
    _c("steady_round", "integer", "First round at which the window was steady."),
    _c("claimed_steady", "boolean", "The client's or imported tool's own verdict; empty when it gave none."),
    _c("claim_differs", "boolean", "nvmedb's verdict differs from the claimed one."),
    _c("note", "string", "Why the verdict is what it is, or how it differs from the claim."),
)  # fmt: skip

DRIVE_COLUMNS: tuple[Column, ...] = (
    *drive_columns(""),
    _c("model_number", "string", "Model number as the drive reports it (id-ctrl mn)."),
    _c("capacity_bytes", "integer", "Raw capacity (id-ctrl tnvmcap).", unit="bytes"),
    _c("interface", "string", "nvme, sata, sas or unknown."),
    _c("form_factor", "string", "Form factor, e.g. M.2 2280."),
    _c("controller", "string", "Controller."),
    _c("nand_type", "string", "NAND type."),
    _c("dram", "string", "DRAM cache."),
    _c("spec_seq_read_bytes_per_s", "number", "Vendor spec sheet: sequential read (approved contributor proposal).",
       unit="bytes/s"),
    _c("spec_seq_write_bytes_per_s", "number", "Vendor spec sheet: sequential write.", unit="bytes/s"),
    _c("spec_rand_read_iops", "number", "Vendor spec sheet: 4 KiB random read.", unit="IOPS"),
    _c("spec_rand_write_iops", "number", "Vendor spec sheet: 4 KiB random write.", unit="IOPS"),
    _c("spec_source_url", "string", "Where the spec-sheet figures come from."),
)  # fmt: skip

SUBMISSION_COLUMNS: tuple[Column, ...] = (
    _c("submission_id", "string", "The submission's stable id (UUID).", "pk"),
    _c("sha256", "string", "SHA-256 of the bundle as uploaded."),
    _c("size_bytes", "integer", "Size of the bundle as uploaded (compressed).", "size", "bytes"),
    _c("published_at", "datetime", "When the submission was published (UTC)."),
    _c("signed", "boolean", "The bundle was signed with a registered key.",
       ExpressionWrapper(Q(signing_key__isnull=False), output_field=BooleanField())),
)  # fmt: skip


AGGREGATE_COLUMNS: tuple[Column, ...] = (
    *drive_columns("drive_model__"),
    _c("metric", "string", "Headline metric key, e.g. iops_4k_read (see the read API's label for its meaning)."),
    _c("factor", "string", "all (every public run of the drive), or the factor the level splits by: firmware, "
       "pcie_generation, pcie_width, edition."),
    _c("level", "string", "The factor's value, e.g. Gen4 or a firmware revision; empty for factor all."),
    _c("median", "number", "Median over physical units: each unit's runs count once, as their median, and a run "
       "with no unit id is its own unit. In the metric's unit (IOPS, bytes/s or ns)."),
    _c("q1", "number", "First quartile over the same units (linear interpolation)."),
    _c("q3", "number", "Third quartile over the same units."),
    _c("iqr", "number", "q3 − q1."),
    _c("n_runs", "integer", "Public runs of PTS tests behind the figure."),
    _c("n_units", "integer", "Distinct physical units (by serial) among them; runs of unknown units not counted."),
    _c("n_contributors", "integer", "Distinct uploader accounts behind the runs."),
    _c("unconfirmed", "boolean", "n_contributors ≤ 1: a single contributor backs the figure, and one account's "
       "bundles cannot prove their hardware.",
       ExpressionWrapper(Q(n_contributors__lte=1), output_field=BooleanField())),
)  # fmt: skip


def _aggregates(*, trials_of: int | None = None) -> QuerySet:
    """Every aggregate row: refresh_aggregates writes them from published PTS runs only (never a trial)."""
    return DriveModelAggregate.objects.all()


def _runs(*, trials_of: int | None = None) -> QuerySet:
    return public_pts_runs(trials_of=trials_of)


def _drives(*, trials_of: int | None = None) -> QuerySet:
    return DriveModel.objects.filter(pk__in=public_test_runs(trials_of=trials_of).values("drive_model_id"))


def _submissions(*, trials_of: int | None = None) -> QuerySet[Submission]:
    return public_submissions(trials_of=trials_of)


TABLES: dict[str, Table] = {
    table.name: table
    for table in (
        Table(
            "measurements",
            "Measurements",
            "One row per cell (block size × R/W mix) per round of every public run of a PTS test, PTS-compliant or "
            "not (the runs table's compliant column says which; the surface's cells, an nvmedb extension, are in the "
            "surface table).",
            MEASUREMENT_COLUMNS,
            public_measurements,
            run_prefix="test_run__",
            cell_filters=frozenset({"block_size_bytes", "read_pct", "in_steady_window"}),
        ),
        Table(
            "steady_state",
            "Steady state",
            "One row per tracking variable per run: the PTS steady-state window and its verdicts.",
            STEADY_STATE_COLUMNS,
            public_windows,
            run_prefix="test_run__",
            cell_filters=frozenset({"block_size_bytes", "read_pct"}),
        ),
        Table(
            "runs",
            "Runs",
            "One row per public run of a PTS test, PTS-compliant or not (the compliant column says which; surface "
            "runs, an nvmedb extension, are in the surface_runs table).",
            RUN_COLUMNS,
            _runs,
            run_prefix="",
        ),
        Table(
            "drives",
            "Drives",
            "Drive models with at least one public run (of a PTS test or the surface).",
            DRIVE_COLUMNS,
            _drives,
        ),  # fmt: skip
        Table("submissions", "Submissions", "Published submissions.", SUBMISSION_COLUMNS, _submissions),
        Table(
            "aggregates",
            "Aggregates",
            "Per drive model, headline metric and factor level: the median and quartiles over physical units (not "
            "runs), and how many runs, units and contributors stand behind them, as the drive pages show them.",
            AGGREGATE_COLUMNS,
            _aggregates,
            ordering=("drive_model_id", "metric", "factor", "level"),
            runs_key=("drive_model_id", "drive_model_id"),  # the aggregates of the drives with a matching run
        ),
        *registry.pts_tables(),
        tables_factor_effects.table(Table),
        tables_run_results.table(Table),
        *registry.extension_tables(),
    )
}
