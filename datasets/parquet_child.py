"""The process that writes a Parquet export: `python -m datasets.parquet_child`, started by datasets.parquet_pipe.

Standard input: one line of JSON, {"columns": [{name, type, description, unit}, ...], "block_bytes": the CSV parsed
at a time}, then the table's rows as CSV records without a header (PostgreSQL's `COPY … WITH (FORMAT csv)`,
datasets.pg_copy). Standard output: the Parquet file (datasets.arrow_export.csv_to_parquet), written as each row
group is done. Exit status 0 when the file is complete; anything else (a traceback on standard error) means the file
is not.

It imports neither Django nor the rest of the site, only pyarrow and datasets.arrow_export: the web worker that
started it never loads Arrow, and Arrow's memory goes back to the system when this process ends.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from types import SimpleNamespace

from datasets.arrow_export import csv_to_parquet

READ_BYTES = 64 << 10


def _chunks(stream) -> Iterator[bytes]:
    while data := stream.read1(READ_BYTES):
        yield data


def main() -> int:
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    header = json.loads(source.readline())
    columns = [SimpleNamespace(**column) for column in header["columns"]]
    for data in csv_to_parquet(columns, _chunks(source), block_bytes=header["block_bytes"]):
        if data:
            sink.write(data)
            sink.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
