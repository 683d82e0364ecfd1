"""The rows the browse pages read of public runs and their measurements: which columns, the light run rows with
their charted metrics extracted by the database and the representative run of a test (the measurement window the
charts read of its rows is reports.windows)."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Case, F, FloatField, IntegerField, Q, QuerySet, When
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from analysis.models import (
    DriveModelAggregate,
)
from analysis.selectors import (
    public_test_runs,
)
from browse.counts import pts_runs
from browse.factors import FACTOR_METRICS

TEST_ORDER = ("iops", "tp", "lat", "wsat")
STATISTICS_SECONDS = 24 * 3600
PRIMARY_METRIC = {"iops": "iops_4k_read", "tp": "bw_1m_read", "lat": "lat_4k_mean"}
RUN_FIELDS = (
    "id",
    "test",
    "submission_id",
    "submission__published_at",
    "firmware__revision",
    "pcie_link__generation",
    "pcie_link__width",
    "pcie_link__usable_bandwidth_bytes_per_s",
    "unit_id",
    "profile",
    "edition",
    "compliant",
    "source",
    "steady",
    "steady_round",
    "threads",
    "iodepth",
    "started_at",
    "warning_temperature_k",
    "critical_temperature_k",
)
# Every public run of a drive is read for the statistics; only these columns, the metrics extracted by the database.
LIGHT_RUN_FIELDS = ("id", "test", "submission_id", "submission__published_at", "firmware__revision",
                    "pcie_link__generation", "unit_id", "steady", "compliant")  # fmt: skip
CHARTED_METRICS = ("iops_4k_read", "bw_1m_read", "lat_4k_mean")


def metric_column(key: str) -> str:
    return f"m_{key}"


class HeadlineFloat(Cast):
    """A headline metric as a float, extracted by the database. psycopg returns a double precision as a float
    already, so on PostgreSQL the rows skip Django's float() of every value (a converter call per value: most of the
    Python time of reading a drive's few thousand light rows); other databases keep it."""

    def __init__(self, key: str):
        super().__init__(KT(f"headline__{key}"), FloatField())

    def get_db_converters(self, connection):
        if connection.vendor == "postgresql":
            return self.output_field.get_db_converters(connection)
        return super().get_db_converters(connection)


class Meets(Case):
    """1 when the row meets `condition`, else 0 (also when SQL says it is unknown). On PostgreSQL the integer comes
    back as an int already, so, as with HeadlineFloat, the rows skip Django's int() of every value."""

    def __init__(self, condition: Q):
        super().__init__(When(condition, then=1), default=0, output_field=IntegerField())

    def get_db_converters(self, connection):
        if connection.vendor == "postgresql":
            return self.output_field.get_db_converters(connection)
        return super().get_db_converters(connection)


def light_runs(queryset: QuerySet, *extra_fields: str, fields: tuple[str, ...] = LIGHT_RUN_FIELDS) -> QuerySet:
    """Runs as small dicts with the charted headline metrics as floats (JSON parsed by the database, not Python)."""
    metrics = {metric_column(key): HeadlineFloat(key) for key in CHARTED_METRICS}
    return queryset.annotate(**metrics).values(*fields, *extra_fields, *metrics)


def row_dicts(queryset: QuerySet, names: tuple[str, ...]) -> Iterator[dict]:
    """The dicts `queryset.values(*names)` yields, keys in the same order, built from values_list's tuples: one
    dict(zip()) per row rather than Django's dict comprehension (for a drive's few thousand runs, a third of their
    conversion)."""
    return (dict(zip(names, row, strict=True)) for row in queryset.values_list(*names))


MEASUREMENT_FIELDS = (
    "id",
    "test_run_id",
    "round__phase",
    "round__series",
    "round__number",
    "run_key",
    "block_size_bytes",
    "read_pct",
    "total_iops",
    "read_iops",
    "write_iops",
    "read_bw_bytes_per_s",
    "write_bw_bytes_per_s",
    "total_bw_bytes_per_s",
    "lat_mean_ns",
    "lat_p9999_ns",
    "lat_max_ns",
    "temperature_before_k",
    "temperature_after_k",
    "cumulative_write_bytes",
    "in_steady_window",
    "started_at",
    "raw_file",
)

# what the drive page's charts read (fewer columns: the page reads several hundred rows on every request)
CHARTED_MEASUREMENT_FIELDS = ("test_run_id", "round__phase", "round__number", "run_key", "block_size_bytes", "read_pct",
                              "total_iops", "read_bw_bytes_per_s", "write_bw_bytes_per_s", "lat_mean_ns",
                              "lat_p9999_ns", "lat_max_ns", "temperature_after_k", "cumulative_write_bytes",
                              "in_steady_window", "started_at")  # fmt: skip


def public_runs_of(
    drive_ids: list[int],
    runs_of: QuerySet | None = None,
    extra_metrics: tuple[str, ...] = (),
    dated: bool = True,
    met: dict[str, Q] | None = None,
) -> dict[int, list[dict]]:
    """Every public run of these drives (of `runs_of`, by default the public runs) as light rows, newest first (a
    submission being published in this transaction has no date yet: it is the newest), in one query; with
    `extra_metrics`, those headline metrics too (as m_<key> floats) and the run's overprovisioning. Not `dated`:
    without the submission's date (still in that order), which costs most of the read (parsing a timestamp). With
    `met`, whether the run meets each condition, as 1 or 0 under its name (a condition SQL says is unknown: 0)."""
    runs: dict[int, list[dict]] = {pk: [] for pk in drive_ids}
    source = public_test_runs() if runs_of is None else runs_of
    ordered = source.filter(drive_model_id__in=drive_ids).order_by(
        F("submission__published_at").desc(nulls_first=True), "test", "id"
    )
    extra = {metric_column(key): HeadlineFloat(key) for key in extra_metrics}
    extra_fields = ("overprovisioning", *extra) if extra_metrics else ()
    fields = LIGHT_RUN_FIELDS if dated else tuple(f for f in LIGHT_RUN_FIELDS if f != "submission__published_at")
    metrics = {metric_column(key): HeadlineFloat(key) for key in CHARTED_METRICS}  # light_runs' columns
    meets = {name: Meets(condition) for name, condition in (met or {}).items()}
    rows = ordered.annotate(**extra).annotate(**metrics).annotate(**meets)
    for run in row_dicts(rows, (*fields, "drive_model_id", *extra_fields, *metrics, *meets)):
        runs[run["drive_model_id"]].append(run)
    return runs


def representative_run(runs: list[dict], test: str, overall: dict[str, DriveModelAggregate]) -> dict | None:
    candidates = [r for r in runs if r["test"] == test]  # newest first
    if not candidates:
        return None
    key = PRIMARY_METRIC.get(test)
    aggregate = overall.get(key) if key else None
    if aggregate is None:
        return candidates[0]
    column = metric_column(key)
    with_value = [r for r in candidates if r[column] is not None]
    if not with_value:
        return candidates[0]
    return min(with_value, key=lambda r: abs(r[column] - aggregate.median))


FACTOR_RUN_FIELDS = ("id", "unit_id", "overprovisioning")


def factor_runs(drive_id: int, runs_of: QuerySet | None = None) -> list[dict]:
    """Every public PTS run of a drive with what the over-provisioning figures read (browse.factors), in one
    query: the headline metrics they break down as floats. (The factor model reads its own rows:
    analysis.factor_rows.)"""

    metrics = {metric_column(key): HeadlineFloat(key) for key in FACTOR_METRICS}
    rows = (
        pts_runs(public_test_runs() if runs_of is None else runs_of)
        .filter(drive_model_id=drive_id)
        .annotate(**metrics)
        .order_by("id")
        .values(*FACTOR_RUN_FIELDS, *metrics)
    )
    return list(rows)
