"""One table in one format as a stream of bytes: the single entry point for live exports and release files."""

from __future__ import annotations

from collections.abc import Iterator

from django.db import connection

from datasets import export_rows, parquet_pipe, pg_copy, writers
from datasets.filters import Filters, rows_queryset
from datasets.tables import Table

CHUNK_ROWS = 1000  # rows per server-side cursor fetch (writers.BATCH_ROWS)


def export_stream(table: Table, filters: Filters, fmt: str) -> Iterator[bytes]:
    """Bytes of `table` in `fmt`, rows fetched lazily: nothing is queried until the first chunk after the header."""
    if table.name == "measurements" and fmt == "csv":
        return export_rows.stream_csv(filters)
    if connection.vendor == "postgresql" and fmt == "csv":
        return pg_copy.stream_csv(table, filters)
    if connection.vendor == "postgresql" and fmt == "parquet":  # pyarrow in a process of its own, not the worker
        return parquet_pipe.stream_parquet(table.columns, pg_copy.copy_csv_records(table, filters))
    rows = rows_queryset(table, filters).iterator(chunk_size=CHUNK_ROWS)
    return writers.stream(fmt, table.columns, rows)
