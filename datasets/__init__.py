"""Downloads: live filtered exports, versioned releases, and the read API."""

import os

# Arrow's memory for Parquet exports from jemalloc rather than its default mimalloc, which keeps the pages a row group
# used: peak RSS of a Parquet download (bench/export_benchmark.py) was 141 / 152 MB at 100 k / 1 M rows with jemalloc,
# 152 / 158 MB with mimalloc. Arrow reads the variable once, when it first allocates, so it is set before any module
# here imports pyarrow; an operator's own setting wins.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
