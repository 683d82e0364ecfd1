"""CSV and Parquet exports on PostgreSQL through `COPY (query) TO STDOUT`.

Turning ~50 columns of a million rows into Python objects costs more than PostgreSQL spends writing them as CSV, so
on PostgreSQL the CSV export is PostgreSQL's own CSV of the ORM-built query, passed on chunk by chunk, and Parquet is
that CSV parsed by Arrow in blocks of whole records, in a process of its own (datasets.parquet_pipe). The query is
the same `values_list` SQL the other formats use, with booleans spelled true/false and datetimes as ISO 8601 UTC,
exactly as `writers.write_csv` spells them.

PostgreSQL writes NULL as an empty cell and an empty string as `""`, so CSV keeps the difference here. Leaving the
`COPY` early (the client went away) makes psycopg cancel it on the server.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from django.db import connection
from django.db.models import CharField, F, Func

from datasets import csv_lines, writers
from datasets.filters import Filters, filtered_queryset
from datasets.spreadsheet import SpreadsheetSafeText
from datasets.tables import Column, Table
from nvmedb.env import env_int

# PostgreSQL sends one COPY message per row; passed on one by one, each became its own HTTP chunk and write call
# (41 % of the server's time at 1 M rows). Records are gathered into writes of at least this size.
CHUNK_BYTES = 128 << 10
# PostgreSQL's parallel workers for one export's query (NVMEDB_EXPORT_PARALLEL_WORKERS, default 0). Each is one more
# process that keeps a core busy for the whole download: three exports with PostgreSQL's default of 2 ran nine, on a
# 2-core machine where pages need a core for their own queries. Several exports at once were no slower without them
# (three 1 M-row CSVs in 22-32 s against 27-33 s with 2); one export alone on an idle machine is (about 1.2 x).
PARALLEL_WORKERS = env_int("NVMEDB_EXPORT_PARALLEL_WORKERS", 0)


class CsvBoolean(Func):
    # the expression once: a computed boolean (n_contributors <= 1) carries parameters, which a second copy would lack
    template = "CASE (%(expressions)s) WHEN TRUE THEN 'true' WHEN FALSE THEN 'false' END"
    output_field = CharField()


class CsvDatetime(Func):
    template = """to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""
    output_field = CharField()


def _csv_expression(column: Column, *, for_spreadsheets: bool):
    source = F(column.source) if isinstance(column.source, str) else column.source
    if column.type == "boolean":
        return CsvBoolean(source)
    if column.type == "datetime":
        return CsvDatetime(source)
    if column.type == "string" and for_spreadsheets:
        return SpreadsheetSafeText(source)
    return source


def copy_query(table: Table, filters: Filters, *, for_spreadsheets: bool = False) -> tuple[str, tuple]:
    """The export query as SQL; `for_spreadsheets` neutralises formula-like text (the CSV file, not Parquet)."""
    columns = [_csv_expression(c, for_spreadsheets=for_spreadsheets) for c in table.columns]
    queryset = filtered_queryset(table, filters).values_list(*columns)
    if filters.size is not None:
        queryset = queryset[: filters.size]
    return queryset.query.sql_with_params()


def copy_csv_records(table: Table, filters: Filters, *, for_spreadsheets: bool = False) -> Iterator[bytes]:
    """The table's rows as CSV records (no header), chunked as `copy_records` does."""
    sql, params = copy_query(table, filters, for_spreadsheets=for_spreadsheets)
    return copy_records(sql, params)


def copy_records(sql: str, params, *, options: str = "FORMAT csv") -> Iterator[bytes]:
    """`COPY (sql) TO STDOUT` (as CSV records unless `options` say otherwise) in chunks of whole records of at least
    CHUNK_BYTES (the last one smaller)."""
    pending = bytearray()
    with connection.cursor() as cursor:
        cursor.execute("SET max_parallel_workers_per_gather = %s", [PARALLEL_WORKERS])
        try:
            with cursor.copy(f"COPY ({sql}) TO STDOUT WITH ({options})", params) as copy:
                for data in copy:
                    pending += data
                    if len(pending) >= CHUNK_BYTES:
                        yield bytes(pending)
                        pending.clear()
        finally:
            if not connection.connection.closed:  # a cancelled COPY leaves the connection usable
                cursor.execute("RESET max_parallel_workers_per_gather")
    if pending:
        yield bytes(pending)


def copy_stored_records(sql: str, params) -> Iterator[bytes]:
    """`COPY (sql) TO STDOUT` of a query of one text column holding CSV records (datasets.csv_lines), in text format:
    PostgreSQL sends each stored record as it is, plus a line end, with only its escapes to undo."""
    for chunk in copy_records(sql, params, options="FORMAT text"):
        yield csv_lines.unescape_copy_text(chunk)


def stream_csv(table: Table, filters: Filters) -> Iterator[bytes]:
    return _with_header(table.columns, copy_csv_records(table, filters, for_spreadsheets=True))


def stream_copy_records(columns: Sequence[Column], sql: str, params) -> Iterator[bytes]:
    """A CSV file (header first) of `sql`, whose one column holds the stored records of rows with `columns`."""
    return _with_header(columns, copy_stored_records(sql, params))


def _with_header(columns: Sequence[Column], records: Iterator[bytes]) -> Iterator[bytes]:
    try:
        yield writers.csv_header(columns)
        yield from records
    finally:
        records.close()
