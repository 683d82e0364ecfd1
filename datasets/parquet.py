"""Reading Parquet back in-process (tests, scripts) in the one way that lets the interpreter exit cleanly.

Arrow's thread pools can drop the last reference to memory or a file object that Python owns (a `bytes`, a
`BytesIO`) after `pyarrow.parquet.read_table` has returned. When that happens while the interpreter shuts down, the
pool thread asks for the GIL, CPython 3.11 ends it with `pthread_exit`, the unwind meets a `noexcept` destructor and
the process aborts ("terminate called without an active exception", exit 134): about 1 run in 10 on two cores, with
pyarrow 25 and 26 alike, whatever the allocator or `set_cpu_count`. Bytes copied into Arrow's own memory (or a file
read by path) leave Arrow nothing to hand back to Python.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq


def arrow_owned(data: bytes | bytearray | memoryview) -> pa.Buffer:
    """A copy of `data` in memory Arrow allocated (pa.py_buffer would keep a reference to the Python object)."""
    owned = pa.allocate_buffer(len(data))
    if len(data):
        memoryview(owned).cast("B")[:] = memoryview(data).cast("B")
    return owned


def read_table(source) -> pa.Table:
    """The whole Parquet file `source` (a path, bytes, or a binary file object) as an Arrow table."""
    if isinstance(source, str | os.PathLike):
        return pq.read_table(source)
    data = source if isinstance(source, bytes | bytearray | memoryview) else source.read()
    return pq.read_table(pa.BufferReader(arrow_owned(data)))
