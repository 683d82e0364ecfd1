"""One table in one format as a stream of bytes: the single entry point for live exports and release files."""

from __future__ import annotations

from collections.abc import Iterator

from django.db import connection

from datasets import export_rows, pg_copy, writers
from datasets.filters import Filters, rows_queryset
from datasets.tables import Table

CHUNK_ROWS = 1000  # rows per server-side cursor fetch (writers.BATCH_ROWS)


def export_stream(table: Table, filters: Filters, fmt: str) -> Iterator[bytes]:
    """Bytes of `table` in `fmt`, rows fetched lazily: nothing is queried until the first chunk after the header."""
    if table.name == "measurements" and fmt == "csv":
        return export_rows.stream_csv(filters)
    if connection.vendor == "postgresql" and fmt == "csv":
        return pg_copy.stream_csv(table, filters)
    if connection.vendor == "postgresql" and fmt == "parquet":
        # why: pyarrow costs a web worker ~35 MB of memory (arrow_export); only Parquet loads it
        from datasets import arrow_export

        return arrow_export.stream_copy_parquet(table, filters)
    rows = rows_queryset(table, filters).iterator(chunk_size=CHUNK_ROWS)
    return writers.stream(fmt, table.columns, rows)
