"""Apache Parquet exports, the only ones that need pyarrow: imported when a Parquet file is asked for, so a web worker
that serves pages, CSV and JSON never loads Arrow (about 35 MB of memory with the numpy it brings).

`write_parquet` turns row tuples into Parquet (any database); `stream_copy_parquet` parses PostgreSQL's own CSV of the
table's query (datasets.pg_copy) with Arrow, block by block of whole records.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterable, Iterator, Sequence

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from datasets import pg_copy
from datasets.filters import Filters
from datasets.tables import Column, Table
from datasets.writers import Drain, batches

# Memory per row group grows with its rows, and the footer's metadata, built in memory at the end, with the number of
# row groups: peak RSS of a download (bench/export_benchmark.py) at 100 k / 1 M rows was 145 / 170 MB with 4096 rows,
# 150 / 160 MB with 6144 and 155 / 159 MB with 8192, which also gives the smallest files.
PARQUET_ROW_GROUP_ROWS = 8192


# Dictionary-encode only text: numbers are mostly distinct, and a dictionary per numeric column would cost memory
# (up to a page per column) for nothing.
def parquet_options(columns: Sequence[Column]) -> dict:
    return {"compression": "zstd", "use_dictionary": [c.name for c in columns if c.type == "string"]}


ARROW_TYPES = {
    "integer": pa.int64(),
    "number": pa.float64(),
    "boolean": pa.bool_(),
    "string": pa.string(),
    "datetime": pa.timestamp("us", tz="UTC"),
}


def arrow_schema(columns: Sequence[Column]) -> pa.Schema:
    return pa.schema(
        [
            pa.field(
                column.name,
                ARROW_TYPES[column.type],
                metadata={"description": column.description, "unit": column.unit},
            )
            for column in columns
        ]
    )


def _arrow_batch(schema: pa.Schema, columns: Sequence[Column], batch: list[tuple]) -> pa.RecordBatch:
    arrays = []
    for column, values, arrow_field in zip(columns, zip(*batch, strict=True), schema, strict=True):
        if column.type == "string" and any(isinstance(v, uuid.UUID) for v in values[:1]):
            values = [None if v is None else str(v) for v in values]
        arrays.append(pa.array(values, type=arrow_field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def write_parquet(columns: Sequence[Column], rows: Iterable[tuple]) -> Iterator[bytes]:
    """Apache Parquet (zstd), one row group per PARQUET_ROW_GROUP_ROWS rows; column descriptions and units are in
    each field's metadata."""
    schema = arrow_schema(columns)
    sink = Drain()
    writer = pq.ParquetWriter(sink, schema, **parquet_options(columns))
    try:
        yield sink.take()
        pending: list[pa.RecordBatch] = []
        pending_rows = 0
        for batch in batches(rows):
            pending.append(_arrow_batch(schema, columns, batch))
            pending_rows += len(batch)
            if pending_rows >= PARQUET_ROW_GROUP_ROWS:
                writer.write_table(pa.Table.from_batches(pending, schema=schema))
                pending, pending_rows = [], 0
                yield sink.take()
        if pending:
            writer.write_table(pa.Table.from_batches(pending, schema=schema))
    finally:
        writer.close()
    yield sink.take()


def stream_copy_parquet(table: Table, filters: Filters) -> Iterator[bytes]:
    schema = arrow_schema(table.columns)
    read_options = pa_csv.ReadOptions(column_names=table.column_names, use_threads=False)
    convert_options = pa_csv.ConvertOptions(
        column_types=schema,
        true_values=["true"],
        false_values=["false"],
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
    )
    sink = Drain()
    writer = pq.ParquetWriter(sink, schema, **parquet_options(table.columns))
    records = pg_copy.copy_csv_records(table, filters)
    try:
        yield sink.take()
        pending: list[pa.Table] = []
        pending_rows = 0
        for block in pg_copy.whole_records(records):
            part = pa_csv.read_csv(io.BytesIO(block), read_options=read_options, convert_options=convert_options)
            pending.append(part)
            pending_rows += part.num_rows
            if pending_rows >= PARQUET_ROW_GROUP_ROWS:
                writer.write_table(pa.concat_tables(pending))
                pending, pending_rows = [], 0
                yield sink.take()
        if pending:
            writer.write_table(pa.concat_tables(pending))
    finally:
        records.close()
        writer.close()
    yield sink.take()
