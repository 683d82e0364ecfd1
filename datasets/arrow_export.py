"""Apache Parquet files from row batches or from CSV, with pyarrow; nothing here imports Django.

On PostgreSQL a web worker never imports this module: a Parquet export runs `csv_to_parquet` in a process of its own
(datasets.parquet_child, fed by datasets.parquet_pipe), since a worker that had loaded pyarrow would keep it (its
libraries cannot be unloaded). The row-batch writer (`write_parquet`) serves the other databases in-process
(datasets.writers), and the tests' reference rendering.

Columns are anything with `name`, `type` (a Frictionless type), `description` and `unit` (datasets.table_types.Column,
or the plain records the child process reads).
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterable, Iterator, Sequence

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

# Memory per row group grows with its rows, and the footer's metadata, built in memory at the end, with the number of
# row groups: peak RSS of a download (bench/export_benchmark.py) at 100 k / 1 M rows was 145 / 170 MB with 4096 rows,
# 150 / 160 MB with 6144 and 155 / 159 MB with 8192, which also gives the smallest files.
PARQUET_ROW_GROUP_ROWS = 8192

ARROW_TYPES = {
    "integer": pa.int64(),
    "number": pa.float64(),
    "boolean": pa.bool_(),
    "string": pa.string(),
    "datetime": pa.timestamp("us", tz="UTC"),
}


# Dictionary-encode only text: numbers are mostly distinct, and a dictionary per numeric column would cost memory
# (up to a page per column) for nothing.
def parquet_options(columns: Sequence) -> dict:
    return {"compression": "zstd", "use_dictionary": [c.name for c in columns if c.type == "string"]}


def arrow_schema(columns: Sequence) -> pa.Schema:
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


class Drain(io.RawIOBase):
    """A write-only file that keeps what was written until `take()` hands it out."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        data = bytes(data)
        self._parts.append(data)
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def _arrow_batch(schema: pa.Schema, columns: Sequence, batch: list[tuple]) -> pa.Table:
    arrays = []
    for column, values, arrow_field in zip(columns, zip(*batch, strict=True), schema, strict=True):
        if column.type == "string" and any(isinstance(v, uuid.UUID) for v in values[:1]):
            values = [None if v is None else str(v) for v in values]
        arrays.append(pa.array(values, type=arrow_field.type))
    return pa.Table.from_batches([pa.RecordBatch.from_arrays(arrays, schema=schema)], schema=schema)


def _row_groups(columns: Sequence, parts: Iterable[pa.Table]) -> Iterator[bytes]:
    """Parquet (zstd) of the tables in `parts`, in row groups of PARQUET_ROW_GROUP_ROWS rows (the last one smaller)
    whatever the parts' sizes, so the same rows make the same file; column descriptions and units are in each field's
    metadata. The file's bytes as they are written."""
    group = PARQUET_ROW_GROUP_ROWS
    sink = Drain()
    writer = pq.ParquetWriter(sink, arrow_schema(columns), **parquet_options(columns))
    try:
        yield sink.take()
        pending: list[pa.Table] = []
        pending_rows = 0
        for part in parts:
            pending.append(part)
            pending_rows += part.num_rows
            if pending_rows >= group:
                table = pa.concat_tables(pending)
                whole = pending_rows // group * group
                writer.write_table(table.slice(0, whole), row_group_size=group)
                pending, pending_rows = [table.slice(whole)], pending_rows - whole
                yield sink.take()
        if pending_rows:
            writer.write_table(pa.concat_tables(pending))
    finally:
        writer.close()
    yield sink.take()


def write_parquet(columns: Sequence, batches: Iterable[list[tuple]]) -> Iterator[bytes]:
    """Parquet of row tuples (in column order), given in batches."""
    schema = arrow_schema(columns)
    return _row_groups(columns, (_arrow_batch(schema, columns, batch) for batch in batches))


def csv_to_parquet(columns: Sequence, chunks: Iterable[bytes], *, block_bytes: int) -> Iterator[bytes]:
    """Parquet of CSV records without a header, spelled as datasets.pg_copy has PostgreSQL write them (booleans
    true/false, ISO 8601 UTC datetimes, NULL an empty cell, an empty string `""`), in chunks cut anywhere; Arrow
    parses about `block_bytes` of whole records at a time."""
    schema = arrow_schema(columns)
    read_options = pa_csv.ReadOptions(column_names=[c.name for c in columns], use_threads=False)
    convert_options = pa_csv.ConvertOptions(
        column_types=schema,
        true_values=["true"],
        false_values=["false"],
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
    )
    parts = (
        pa_csv.read_csv(io.BytesIO(block), read_options=read_options, convert_options=convert_options)
        for block in whole_records(chunks, block_bytes)
    )
    return _row_groups(columns, parts)


def whole_records(chunks: Iterable[bytes], block_bytes: int) -> Iterator[bytes]:
    """Regroup CSV chunks into blocks of about `block_bytes` that end on a record boundary: a newline with an even
    number of quote characters before it (quotes inside a quoted field come in pairs, so a newline within one has an
    odd count before it)."""
    pending = bytearray()
    for chunk in chunks:
        pending += chunk
        if len(pending) < block_bytes:
            continue
        end = pending.rfind(b"\n")
        while end >= 0 and pending.count(b'"', 0, end) % 2:
            end = pending.rfind(b"\n", 0, end)
        if end >= 0:
            yield bytes(pending[: end + 1])
            del pending[: end + 1]
    if pending:
        yield bytes(pending)
