"""A Parquet export on PostgreSQL is written by a process of its own (datasets.parquet_pipe): the web worker never
imports pyarrow, a failing writer is an error rather than a short file, and a download left early ends the process."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from analysis.tests.factories import iops_run
from datasets import export_rows, parquet, parquet_pipe
from datasets.exports import export_stream
from datasets.filters import Filters, rows_queryset
from datasets.tables import TABLES

COLUMNS = [
    SimpleNamespace(name="n", type="integer", description="a count", unit=""),
    SimpleNamespace(name="label", type="string", description="a label", unit=""),
]


def children() -> list[int]:
    found = []
    for task in Path("/proc/self/task").iterdir():
        try:
            found += [int(pid) for pid in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            continue
    return found


def test_the_child_writes_the_rows_it_is_given_with_their_schema():
    records = (chunk for chunk in [b'1,one\n2,"t', b'wo, ""quoted""\n"\n', b"3,\n"])  # cut inside a record
    table = parquet.read_table(b"".join(parquet_pipe.stream_parquet(COLUMNS, records)))
    assert table.to_pylist() == [
        {"n": 1, "label": "one"},
        {"n": 2, "label": 'two, "quoted"\n'},
        {"n": 3, "label": None},
    ]
    assert [(f.name, f.metadata[b"description"]) for f in table.schema] == [("n", b"a count"), ("label", b"a label")]


def test_a_child_that_fails_is_an_error_not_a_short_file():
    records = (chunk for chunk in [b"1,one\nnot a number,two\n"])
    with pytest.raises(parquet_pipe.ParquetProcessError, match="ended with status 1"):
        b"".join(parquet_pipe.stream_parquet(COLUMNS, records))
    assert not children()


def test_a_download_closed_early_ends_the_child():
    many = (f"{i},row {i}\n".encode() * 1000 for i in range(10_000))  # far more than the pipes hold
    stream = parquet_pipe.stream_parquet(COLUMNS, many)
    next(stream)
    assert children()
    stream.close()
    deadline = time.monotonic() + 10
    while children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not children()


@pytest.mark.postgres
def test_the_worker_never_imports_pyarrow_for_a_parquet_export(db, monkeypatch):
    run = iops_run(rounds=3, mixes=(100, 0), block_sizes=(4096,))
    export_rows.rebuild_for_submission(run.submission_id)
    spec = TABLES["measurements"]
    with monkeypatch.context() as blocked:  # an import of either in this process fails; the child is not affected
        blocked.setitem(sys.modules, "pyarrow", None)
        blocked.setitem(sys.modules, "datasets.arrow_export", None)
        content = b"".join(export_stream(spec, Filters(), "parquet"))
    rows = parquet.read_table(content).to_pylist()
    expected = [dict(zip(spec.column_names, row, strict=True)) for row in rows_queryset(spec, Filters())]
    assert len(rows) == len(expected) == 6
    assert [row["measurement_id"] for row in rows] == [row["measurement_id"] for row in expected]
    assert [row["total_iops"] for row in rows] == [row["total_iops"] for row in expected]
