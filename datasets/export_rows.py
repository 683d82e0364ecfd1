"""The `measurements` table's CSV, prepared when the data changes rather than on every download.

`rebuild_for_submission` writes the export rows (analysis.models.ExportMeasurementRow) of one submission's PTS runs:
the values the nine-join export query would select, text made spreadsheet-safe and `started_at` spelled as the CSV
spells it. It runs in the transaction that stores a submission or changes its status (analysis.services), and
replaces a submission's rows in one transaction, so a killed worker leaves the old rows or the new, never half.
Who may see a row is decided at export time (`visible_q`), so hiding or withdrawing needs no rewrite; a rewrite
follows anything that changes a row's values (ingest, a status change that lowers or restores `compliant`, a
re-derivation, a drive's new name: `rebuild_for_drive_model`).

Each row also stores its own CSV record (`csv_line`, datasets.csv_lines), so a CSV export sends stored text: the
records of the matching rows, on PostgreSQL by `COPY (SELECT csv_line FROM it WHERE …) TO STDOUT`; both databases
give exactly the bytes the join query gave.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from datetime import UTC

from django.db import connection, transaction
from django.db.models import BooleanField, CharField, ExpressionWrapper, F, Min, OuterRef, Q, QuerySet, Subquery

from analysis.models import ExportMeasurementRow, Measurement, MeasurementFlagKinds, TestRun
from analysis.selectors import OWN_TRIAL_STATUSES, PUBLIC_STATUS, TRIAL_PROFILE, TRIAL_TARGET_KIND, pts_q, trial_q
from datasets import csv_lines, pg_copy, writers
from datasets.filters import Filters
from datasets.spreadsheet import SpreadsheetSafeText, spreadsheet_safe
from datasets.tables import MEASUREMENT_COLUMNS
from submissions.models import Submission

BATCH_ROWS = 2000
# the model's fields (measurement_id, submission_id and run_id are its references' columns), in the export's order
FIELDS = tuple(column.name for column in MEASUREMENT_COLUMNS)
# besides the exported columns: what the filters read and who may see the row
FILTER_SOURCES = {
    "drive_model_id": "test_run__drive_model_id",
    "firmware_ref_id": "test_run__firmware_id",
    "target_kind": "test_run__target_kind",
    "_profile": "test_run__profile",
}


def _stored(value, column_type: str):
    if value is None:
        return None
    if column_type == "string" and not isinstance(value, uuid.UUID):
        return spreadsheet_safe(value)
    if column_type == "datetime":
        return value.astimezone(UTC).strftime(writers.CSV_DATETIME)
    return value


def _record_fields(model=ExportMeasurementRow) -> list:
    """The model fields of the exported columns, in the CSV's order (what a record spells)."""
    return [model._meta.get_field(name) for name in FIELDS]


def _rows(measurements: QuerySet) -> Iterator[ExportMeasurementRow]:
    sources = [c.source for c in MEASUREMENT_COLUMNS] + list(FILTER_SOURCES.values())
    n = len(MEASUREMENT_COLUMNS)
    record_fields = _record_fields()
    for values in measurements.order_by("pk").values_list(*sources).iterator(chunk_size=BATCH_ROWS):
        stored = [_stored(value, column.type) for value, column in zip(values[:n], MEASUREMENT_COLUMNS, strict=True)]
        drive_model_id, firmware_id, target_kind, profile = values[n:]
        yield ExportMeasurementRow(
            **dict(zip(FIELDS, stored, strict=True)),
            csv_line=csv_lines.record(stored, record_fields),
            drive_model_id=drive_model_id,
            firmware_ref_id=firmware_id,
            target_kind=target_kind,
            trial=target_kind == TRIAL_TARGET_KIND or profile == TRIAL_PROFILE,
        )


def _flag_kinds_of_each_measurement() -> Subquery:
    """The flag_kinds column's stored value for one measurement: the same view, read for that measurement alone,
    made spreadsheet-safe inside the subquery. Joined, the view was aggregated over every flagged measurement of the
    dataset for each submission written (84 ms of a publish's 96 ms INSERT at 1 M rows); a condition on its group key
    reaches the flags' measurement index. Made safe outside, the subquery ran once for each time SpreadsheetSafeText
    writes its argument (twice a row)."""
    kinds = MeasurementFlagKinds.objects.filter(measurement_id=OuterRef("pk"))
    return Subquery(kinds.values(safe=SpreadsheetSafeText("kinds")), output_field=CharField())


def _stored_sql(column):
    """`_stored` in SQL (PostgreSQL): the expressions the old COPY query wrote, minus the boolean spelling."""
    if column.name == "flag_kinds":
        return _flag_kinds_of_each_measurement()
    source = F(column.source) if isinstance(column.source, str) else column.source
    if column.type == "string" and column.name != "submission_id":  # a UUID column: never neutralised
        return SpreadsheetSafeText(source)
    if column.type == "datetime":
        return pg_copy.CsvDatetime(source)
    return source


def _insert_select(measurements: QuerySet) -> int:
    """`INSERT … SELECT` of the rows: PostgreSQL builds them without a round trip through Python (a million rows in
    seconds, where the Python path takes minutes)."""
    return _execute(*_insert_statement(measurements))


def _insert_select_of_submission(submission_id) -> int:
    """`_insert_select` of the PTS measurements of submission `submission_id`: the statement of every submission is
    the same but for the submission's id, so it is built once (Django spent 4 ms of CPU building it per ingest)."""
    sql, params, at = _submission_statement()
    params = list(params)
    params[at] = _SUBMISSION_ID.get_db_prep_value(submission_id, connection)
    return _execute(sql, params)


_SUBMISSION_ID = TestRun._meta.get_field("submission")  # what the filter on it gives PostgreSQL
_MARK = uuid.UUID("6e766d65-6462-4000-8000-000000000000")  # a submission id no other parameter equals


@functools.cache
def _submission_statement() -> tuple[str, tuple, int]:
    """`_insert_statement` of a submission's PTS measurements, and where its parameters hold the submission's id."""
    sql, params = _insert_statement(_pts_measurements().filter(test_run__submission_id=_MARK))
    marked = [i for i, param in enumerate(params) if param == _MARK]
    if len(marked) != 1:
        raise ValueError(f"the submission's id is {len(marked)} of the statement's parameters, not one")
    return sql, tuple(params), marked[0]


def _insert_statement(measurements: QuerySet) -> tuple[str, tuple]:
    """The `INSERT … SELECT` of the export rows of `measurements`, and its parameters."""
    trial = ExpressionWrapper(trial_q("test_run__"), output_field=BooleanField())
    expressions = [_stored_sql(c) for c in MEASUREMENT_COLUMNS] + list(FILTER_SOURCES.values())[:3] + [trial]
    # in measurement order: the export reads the rows by measurement id, and rows written in the join's order (strided
    # by run) made it visit each table page once per row, ~1 M buffer visits for 1 M rows instead of ~90 k
    sql, params = measurements.order_by("pk").values_list(*expressions).query.sql_with_params()
    model = ExportMeasurementRow._meta
    names = [model.get_field(n).column for n in FIELDS] + ["drive_model_id", "firmware_ref_id", "target_kind", "trial"]
    names = [connection.ops.quote_name(name) for name in names] + ["csv_line"]
    # the record spells each cell as stored, so from the selected values cast to their columns' types
    record_fields = _record_fields()
    aliases = [f"c{i}" for i in range(len(expressions))]
    # the exported columns are the first len(FIELDS) of the selected values; the filter columns follow
    cells = [f"CAST(s.{alias} AS {f.db_type(connection)})" for alias, f in zip(aliases, record_fields, strict=False)]
    record = csv_lines.record_sql(cells, record_fields)
    select = f"SELECT s.*, {record} FROM ({sql}) AS s ({', '.join(aliases)})"  # noqa: S608 (names, Django's SQL)
    return f"INSERT INTO {model.db_table} ({', '.join(names)}) {select}", params


def _execute(sql: str, params) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _insert_from_python(measurements: QuerySet) -> int:
    written = 0
    batch: list[ExportMeasurementRow] = []
    for row in _rows(measurements):
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            written += len(ExportMeasurementRow.objects.bulk_create(batch))
            batch = []
    return written + len(ExportMeasurementRow.objects.bulk_create(batch))


def _pts_measurements() -> QuerySet:
    return Measurement.objects.filter(pts_q("test_run__"))


def rebuild_for_submission(submission_id) -> int:
    """Replace the export rows of submission `submission_id` (all its PTS measurements, whatever its status) in one
    transaction. Returns the number of rows written."""
    with transaction.atomic():
        ExportMeasurementRow.objects.filter(submission_id=submission_id).delete()
        return _write(submission_id)


def _write(submission_id) -> int:
    """Write the export rows of the PTS measurements of submission `submission_id`."""
    if connection.vendor == "postgresql":
        return _insert_select_of_submission(submission_id)
    return _insert_from_python(_pts_measurements().filter(test_run__submission_id=submission_id))


def rebuild_for_drive_model(drive_model_id: int) -> int:
    """Rewrite the rows of every submission with a run of drive model `drive_model_id` (after its name, slug or
    vendor changed). Returns the number of rows written."""
    submissions = Submission.objects.filter(test_runs__drive_model_id=drive_model_id).distinct().values_list("pk")
    return sum(rebuild_for_submission(pk) for (pk,) in submissions.order_by("pk"))


def rebuild_all(submissions: QuerySet | None = None) -> tuple[int, int]:
    """Rebuild every submission with runs in measurement order (or those of `submissions`, in their order), one
    transaction each. Returns (submissions, rows written)."""
    if submissions is None:
        submissions = in_measurement_order(Submission.objects.filter(test_runs__isnull=False))
    keys = list(submissions.values_list("pk", flat=True))
    return len(keys), sum(rebuild_for_submission(pk) for pk in keys)


def missing_submissions() -> QuerySet:
    """Submissions with a PTS measurement that has no export row (never built, or built by older code), in the
    order a rebuild writes them (`in_measurement_order`)."""
    unbuilt = _pts_measurements().filter(export_row__isnull=True)
    return in_measurement_order(Submission.objects.filter(pk__in=unbuilt.values("test_run__submission_id")))


def in_measurement_order(submissions: QuerySet) -> QuerySet:
    """`submissions` ordered by their first measurement (submission keys are random UUIDs): rebuilt in this order,
    the table's rows lie in the export's own order, measurement id."""
    first = Min("test_runs__measurements__id")
    return submissions.annotate(first_measurement=first).order_by(F("first_measurement").asc(nulls_last=True), "pk")


# --- reading ---------------------------------------------------------------------------------------------------------


def visible_q(trials_of: int | None = None) -> Q:
    """Rows anyone may see, and with `trials_of` that user's own trial rows: analysis.selectors.public_runs_q on the
    stored `trial` and the submission's current status."""
    published = Submission.objects.filter(status=PUBLIC_STATUS, hidden=False).values("pk")
    q = Q(trial=False, submission_id__in=published)
    if trials_of is not None:
        own = Submission.objects.filter(uploader_id=trials_of, status__in=OWN_TRIAL_STATUSES).values("pk")
        q |= Q(trial=True, submission_id__in=own)
    return q


def run_q(filters: Filters) -> Q:
    """Filters.run_q on the stored columns. `test`, `profile` and `source` are stored spreadsheet-safe, which leaves
    their values (fixed words that start with a letter) as they are: an equality on them means what it meant."""
    q, v = Q(), filters.values
    if "drive" in v:
        q &= Q(drive_model__slug__in=v["drive"])
    if "vendor" in v:
        q &= Q(drive_model__vendor__slug__in=v["vendor"])
    if "test" in v:
        q &= Q(test__in=v["test"])
    if "firmware" in v:
        q &= Q(firmware_ref__revision__in=v["firmware"])
    if "pcie_generation" in v:
        q &= Q(pcie_generation=v["pcie_generation"])
    compliance = v.get("compliance")
    if compliance == "pts":
        q &= Q(profile="pts", compliant=True, target_kind="device")
    elif compliance == "quick":
        q &= Q(profile="quick")
    elif compliance == "imported":
        q &= ~Q(source="client")
    return q


def _matching(filters: Filters) -> QuerySet:
    return ExportMeasurementRow.objects.filter(visible_q(filters.trials_of), run_q(filters), filters.cell_q()).order_by(
        "pk"
    )


def records(filters: Filters) -> QuerySet:
    """The matching rows' stored CSV records (`csv_line`), in the export's order."""
    queryset = _matching(filters).values_list("csv_line", flat=True)
    return queryset if filters.size is None else queryset[: filters.size]


def stream_csv(filters: Filters) -> Iterator[bytes]:
    """The measurements CSV (header first): the stored records of the matching export rows."""
    if connection.vendor == "postgresql":
        sql, params = records(filters).query.sql_with_params()
        return pg_copy.stream_copy_records(MEASUREMENT_COLUMNS, sql, params)
    return writers.write_records(MEASUREMENT_COLUMNS, records(filters).iterator(chunk_size=BATCH_ROWS))


# --- the records of rows written before they were stored (migration 0023) ------------------------------------------


def fill_records(model=ExportMeasurementRow) -> None:
    """Spell `csv_line` for every row from its own stored columns (`model` may be a migration's historical model)."""
    record_fields = _record_fields(model)
    if connection.vendor == "postgresql":
        refs = [connection.ops.quote_name(f.column) for f in record_fields]
        record = csv_lines.record_sql(refs, record_fields)
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {model._meta.db_table} SET csv_line = {record}")  # noqa: S608 (column names only)
        return
    names = [f.attname for f in record_fields]
    batch = []
    for row in model.objects.order_by("pk").iterator(chunk_size=BATCH_ROWS):
        row.csv_line = csv_lines.record([getattr(row, name) for name in names], record_fields)
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            model.objects.bulk_update(batch, ["csv_line"])
            batch = []
    model.objects.bulk_update(batch, ["csv_line"])
