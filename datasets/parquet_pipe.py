"""A Parquet export written by a process of its own (datasets.parquet_child), so the web worker never loads pyarrow.

A worker that wrote one Parquet file kept pyarrow loaded for the rest of its life: its libraries cannot be unloaded.
With the pages it had served, that put a long-lived production worker at 164 MB after a 2,000-row Parquet export
(125 MB before it), above the 150 MB memory goal whatever the file's size (bench/export_benchmark.py). Here the worker
runs the export's query as before and passes its CSV records to a child process through a pipe, and passes the
child's Parquet bytes on to the client; pyarrow and its memory live and end with the child.

The worker writes to the child and reads from it in the same thread (the database connection belongs to the request's
thread), never blocking on one pipe while the other is full: `select` tells which of the two is ready.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CHILD_MODULE = "datasets.parquet_child"
READ_BYTES = 64 << 10
BLOCK_BYTES = 128 << 10  # CSV the child parses with Arrow at a time; larger blocks cost memory, not speed


class ParquetProcessError(RuntimeError):
    """The child process ended without writing the whole file."""


def stream_parquet(columns: Sequence, records: Generator[bytes]) -> Iterator[bytes]:
    """The Parquet file of the CSV `records` (no header; datasets.pg_copy.copy_csv_records) whose columns are
    `columns`, as the child writes it. The child starts when the first chunk is asked for and is killed if the stream
    is closed before the end (the client went away)."""
    described = [{"name": c.name, "type": c.type, "description": c.description, "unit": c.unit} for c in columns]
    header = json.dumps({"columns": described, "block_bytes": BLOCK_BYTES})
    pipe = _Pipe()
    try:
        yield pipe.send(header.encode() + b"\n")
        for chunk in records:
            if data := pipe.send(chunk):
                yield data
        yield from pipe.finish()
    finally:
        records.close()
        pipe.close()


def _child_env() -> dict[str, str]:
    """The worker's environment, with the project importable whatever the child's working directory."""
    paths = [str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


class _Pipe:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", CHILD_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=PROJECT_ROOT,
            env=_child_env(),
        )
        self.stdin, self.stdout = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(self.stdin, False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout, selectors.EVENT_READ)

    def send(self, data: bytes) -> bytes:
        """Write all of `data` to the child; what the child wrote meanwhile."""
        received, view = [], memoryview(data)
        self.selector.register(self.stdin, selectors.EVENT_WRITE)
        try:
            while view:
                for key, _ in self.selector.select():
                    if key.fd == self.stdout:
                        received.append(self._read())
                    elif view:
                        try:
                            view = view[os.write(self.stdin, view) :]
                        except BrokenPipeError:
                            raise self._failed() from None
        finally:
            self.selector.unregister(self.stdin)
        return b"".join(received)

    def _read(self) -> bytes:
        data = os.read(self.stdout, READ_BYTES)
        if not data:  # the child closed its output before it had all its input: it failed
            raise self._failed()
        return data

    def finish(self) -> Iterator[bytes]:
        """No more input: the rest of the file, then the child's exit status checked."""
        self.process.stdin.close()
        while data := os.read(self.stdout, READ_BYTES):
            yield data
        if self.process.wait() != 0:
            raise self._failed()

    def _failed(self) -> ParquetProcessError:
        status = self.process.wait()
        return ParquetProcessError(f"the Parquet export process ended with status {status}; see its error in the log")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.selector.close()
        for stream in (self.process.stdin, self.process.stdout):
            if not stream.closed:
                stream.close()
