"""The export tables of the queue-depth x block-size surface (an nvmedb extension, not a PTS test): one row per cell,
one row per access pattern, and the surface runs' own facts. Listed in reports.registry."""

from __future__ import annotations

from django.db.models import CharField, Func, QuerySet

from analysis.models import SurfaceCell, SurfacePattern
from analysis.selectors import extension_q, public_runs_q, public_test_runs
from reports.table_kit import RUN_COLUMNS, column, drive_columns, run_columns
from reports.table_types import Column, Table

EXTENSION = "nvmedb extension, not a test of the SNIA PTS, never PTS-compliant"

_PATTERN = (
    column("pattern", "string", "fio access pattern: read, randread, write or randwrite."),
    column("access", "string", "sequential or random."),
    column("direction", "string", "read or write."),
)

SURFACE_COLUMNS: tuple[Column, ...] = (
    column("surface_cell_id", "integer", "This row's stable id.", "pk"),
    column("run_id", "integer", "The surface run (see the surface_runs table).", "test_run_id"),
    column("submission_id", "string", "The submission (bundle) the row came from (UUID).", "test_run__submission_id"),
    *drive_columns("drive_model__"),
    *run_columns("test_run__"),
    column("target_kind", "string", "device, or file (then the surface measures the file system path, not a drive).",
       "test_run__target_kind"),
    column("ioengine", "string", "fio I/O engine (libaio or io_uring keep the queue depth in flight).",
       "test_run__ioengine"),
    *_PATTERN,
    column("block_size_bytes", "integer", "I/O block size.", unit="bytes"),
    column("iodepth", "integer", "Queue depth: I/Os in flight, one job."),
    column("bytes_in_flight", "integer", "block_size_bytes × iodepth.", unit="bytes"),
    column("bw_bytes_per_s", "number", "Median bandwidth of the cell's repetitions, in the pattern's direction (decimal: "
       "1 MB/s = 10^6 bytes/s).", unit="bytes/s"),
    column("iops", "number", "Median I/O operations per second of the cell's repetitions, in the pattern's direction.",
       unit="IOPS"),
    column("n_repetitions", "integer", "Repetitions of the cell with a figure (run interleaved: repetition 1 of every "
       "cell of the pattern, then repetition 2, ...); 1 for a surface from before repeated cells."),
    column("bw_min_bytes_per_s", "number", "Lowest bandwidth of the repetitions; empty with one repetition (see "
       "spread_reason).", unit="bytes/s"),
    column("bw_max_bytes_per_s", "number", "Highest bandwidth of the repetitions; empty with one repetition.",
       unit="bytes/s"),
    column("bw_cv", "number", "Coefficient of variation of the repetitions' bandwidth: sample standard deviation ÷ mean "
       "(0.1 = 10 %); empty with one repetition or a zero mean (see spread_reason)."),
    column("noisy", "boolean", "bw_cv is above 0.10; empty when there is no bw_cv."),
    column("spread_reason", "string", "Why bw_min_bytes_per_s, bw_max_bytes_per_s or bw_cv is empty."),
    column("speedup", "number", "Parallelism speedup: median iops ÷ median iops of the QD 1 cell of the same pattern and block size; "
       "empty when that cell is missing or measured zero (see speedup_reason)."),
    column("speedup_reason", "string", "Why speedup is empty."),
    column("reaches_90pct_of_peak", "boolean", "bw_bytes_per_s (the median) is at least 90 % of the pattern's peak "
       "median bandwidth."),
    column("knee", "boolean", "The smallest cell reaching 90 % of the peak of the medians: fewest bytes in flight, ties to "
       "the lower QD."),
    column("lat_mean_ns", "number", "Mean total latency of the median repetition (of an even count, the lower middle).",
       "measurement__lat_mean_ns", "ns"),
    column("runtime_s", "number", "Measured run time of the median repetition.", "measurement__runtime_s", "s"),
    column("raw_file", "string", "Provenance: the median repetition's fio output inside the submission's bundle.",
       "measurement__raw_file"),
)  # fmt: skip

SURFACE_PATTERN_COLUMNS: tuple[Column, ...] = (
    column("surface_pattern_id", "integer", "This row's stable id.", "pk"),
    column("run_id", "integer", "The surface run (see the surface_runs table).", "test_run_id"),
    column("submission_id", "string", "The submission (bundle) the row came from (UUID).", "test_run__submission_id"),
    *drive_columns("test_run__drive_model__"),
    column("firmware", "string", "Firmware revision during the run.", "test_run__firmware__revision"),
    column("profile", "string", "pts or quick (a short grid for trying the tool).", "test_run__profile"),
    column("target_kind", "string", "device or file.", "test_run__target_kind"),
    column("ioengine", "string", "fio I/O engine.", "test_run__ioengine"),
    *_PATTERN,
    column("cells_measured", "integer", "Cells of this pattern with a figure."),
    column("peak_bw_bytes_per_s", "number", "Highest median bandwidth of any cell of the pattern.", unit="bytes/s"),
    column("peak_block_size_bytes", "integer", "Block size of the peak cell.", unit="bytes"),
    column("peak_iodepth", "integer", "Queue depth of the peak cell."),
    column("knee_block_size_bytes", "integer", "Block size of the smallest cell reaching 90 % of the peak bandwidth "
       "(fewest bytes in flight, ties to the lower QD).", unit="bytes"),
    column("knee_iodepth", "integer", "Queue depth of that cell."),
    column("knee_bytes_in_flight", "integer", "Its block size × queue depth.", unit="bytes"),
    column("knee_bw_bytes_per_s", "number", "Its bandwidth.", unit="bytes/s"),
    column("knee_reason", "string", "Why there is no knee (every cell measured zero bandwidth)."),
    column("repetitions", "integer", "Repetitions of the grid with a measured cell of this pattern."),
    column("repeatable", "boolean", "The plan ran every cell at least 3 times (fewer: a trial, not repeatable)."),
    column("knee_agreeing_repetitions", "integer", "Repetitions whose own 90 % point (their own peak, their own cells) "
       "is the knee of the medians; empty without a knee."),
    column("knee_moves", "boolean", "The repetitions' own 90 % points differ: the knee moves between repetitions."),
    column("noisy_cells", "integer", "Cells of this pattern whose bandwidth CV is above 10 %."),
    column("queue_depth_real", "boolean", "The fio engine kept the queue depth in flight (libaio, io_uring)."),
    column("target_note", "string", "What a file target measures."),
    column("claim_differs", "boolean", "The client's own figures for this pattern differ from nvmedb's re-derivation."),
    column("note", "string", "How the claim differs, when it does."),
)  # fmt: skip


class JsonTextList(Func):
    """A JSON array of strings as one '; '-separated string (empty for an empty array), the same in every format."""

    template = "array_to_string(ARRAY(SELECT jsonb_array_elements_text(%(expressions)s)), '; ')"
    output_field = CharField()

    def as_sqlite(self, compiler, connection, **extra):
        template = "COALESCE((SELECT group_concat(value, '; ') FROM json_each(%(expressions)s)), '')"
        return self.as_sql(compiler, connection, template=template, **extra)


# The runs table holds PTS runs only: a surface run's own facts (submission, host, firmware, link, purge, wear, why it
# is not compliant) are here, with the same column names and meanings; steady state is not judged for the surface.
_NOT_FOR_SURFACE = frozenset({"threads", "iodepth", "steady", "steady_round", "run_id", "flag_kinds"})
SURFACE_RUN_COLUMNS: tuple[Column, ...] = (
    column("run_id", "integer", "This surface run's stable id (run_id of the surface and surface_patterns tables).", "pk"),
    *(shared for shared in RUN_COLUMNS if shared.name not in _NOT_FOR_SURFACE),
    column("compliance_reasons", "string", "Why the run is not PTS-compliant, '; '-separated: always 'an nvmedb "
       "extension … not a test of the SNIA PTS', then any reason the bundle itself carries.",
       JsonTextList("compliance_reasons")),
    column("flag_kinds", "string", "Kinds of flags on the run or its submission (e.g. surface_claim_differs), "
       "';'-separated and sorted. Formerly named flags (renamed: pandas' DataFrame.flags shadowed it).",
       "flag_kinds__kinds"),
)  # fmt: skip


def _surface_runs(*, trials_of: int | None = None) -> QuerySet:
    return public_test_runs(trials_of=trials_of).filter(extension_q())


def _cells(*, trials_of: int | None = None) -> QuerySet[SurfaceCell]:
    return SurfaceCell.objects.filter(public_runs_q("test_run__", trials_of=trials_of))


def _patterns(*, trials_of: int | None = None) -> QuerySet[SurfacePattern]:
    return SurfacePattern.objects.filter(public_runs_q("test_run__", trials_of=trials_of))


SURFACE_TABLES = (
    Table(
        "surface_runs",
        "Surface runs (nvmedb extension)",
        f"One row per public surface run: the run-level facts of the surface and surface_patterns rows (the runs "
        f"table holds PTS runs only; {EXTENSION}).",
        SURFACE_RUN_COLUMNS,
        _surface_runs,
        run_prefix="",
    ),
    Table(
        "surface",
        "Surface (nvmedb extension)",
        f"One row per cell (access pattern × block size × queue depth) of every public surface run: its bandwidth, "
        f"IOPS and parallelism speedup ({EXTENSION}).",
        SURFACE_COLUMNS,
        _cells,
        run_prefix="test_run__",
        cell_filters=frozenset({"block_size_bytes"}),
    ),
    Table(
        "surface_patterns",
        "Surface peaks and knees (nvmedb extension)",
        f"One row per access pattern of every public surface run: the peak bandwidth and the smallest cell reaching "
        f"90 % of it ({EXTENSION}).",
        SURFACE_PATTERN_COLUMNS,
        _patterns,
        run_prefix="test_run__",
    ),
)


def tables() -> tuple[Table, ...]:
    return SURFACE_TABLES
