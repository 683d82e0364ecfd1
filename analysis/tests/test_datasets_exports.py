"""Live exports: every format reads back with a standard reader, filters narrow, only public data, rows stream."""

from __future__ import annotations

import csv
import io
import json
import os
import uuid
from datetime import datetime

import pytest
from django.core.signals import request_finished
from django.db import close_old_connections, connection
from django.http import StreamingHttpResponse

from analysis.models import Measurement
from analysis.tests.factories import iops_run
from datasets import export_rows, parquet
from datasets.filters import Filters, rows_queryset
from datasets.tables import TABLES

pytestmark = pytest.mark.django_db


def export(client, table, fmt, **params):
    return client.get(f"/datasets/{table}.{fmt}", params)


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def expected_rows(table: str) -> list[dict]:
    spec = TABLES[table]
    return [dict(zip(spec.column_names, row, strict=True)) for row in rows_queryset(spec, Filters())]


def plain(value):
    """A database value as JSON shows it."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return value
    return value


def from_csv_cell(cell: str, type_: str):
    if cell == "":
        return None
    return {
        "integer": int,
        "number": float,
        "boolean": {"true": True, "false": False}.__getitem__,
        "datetime": datetime.fromisoformat,
        "string": str,
    }[type_](cell)


def parsed(table: str, fmt: str, content: bytes) -> list[dict]:
    spec = TABLES[table]
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(content.decode()))
        assert reader.fieldnames == spec.column_names
        return [{c.name: from_csv_cell(row[c.name], c.type) for c in spec.columns} for row in reader]
    if fmt == "json":
        return json.loads(content)
    if fmt == "ndjson":
        return [json.loads(line) for line in content.decode().splitlines()]
    return parquet.read_table(content).to_pylist()


def normalise(table: str, fmt: str, row: dict) -> dict:
    """What each format can carry: CSV has no empty-vs-missing distinction; JSON has no datetime type."""
    out = {}
    for column in TABLES[table].columns:
        value = plain(row[column.name])
        if fmt == "csv" and value == "":
            value = None
        if fmt in ("json", "ndjson") and isinstance(value, datetime):
            value = datetime.fromisoformat(value.isoformat())
        out[column.name] = value
    return out


def json_datetimes(table: str, row: dict) -> dict:
    for column in TABLES[table].columns:
        if column.type == "datetime" and row[column.name] is not None:
            row[column.name] = datetime.fromisoformat(row[column.name])
    return row


@pytest.mark.parametrize("fmt", ["csv", "json", "ndjson", "parquet"])
@pytest.mark.parametrize("table", list(TABLES))
def test_each_format_reads_back_to_the_same_rows_and_types(client, dataset_runs, table, fmt):
    response = export(client, table, fmt)
    assert response.status_code == 200
    rows = parsed(table, fmt, body(response))
    if fmt in ("json", "ndjson"):
        rows = [json_datetimes(table, row) for row in rows]
    expected = [normalise(table, fmt, row) for row in expected_rows(table)]
    assert expected, "the fixture must give every table rows"
    assert rows == expected
    for row in rows:
        for column in TABLES[table].columns:
            value = row[column.name]
            if value is not None:
                assert isinstance(value, {"integer": int, "number": (float, int), "boolean": bool,
                                          "string": str, "datetime": (datetime, str)}[column.type])  # fmt: skip


def test_measurements_export_holds_every_public_measurement_and_its_values(client, dataset_runs):
    public = dataset_runs["public"]
    rows = parsed("measurements", "parquet", body(export(client, "measurements", "parquet")))
    expected_ids = set(Measurement.objects.filter(test_run__in=public).values_list("id", flat=True))
    assert {row["measurement_id"] for row in rows} == expected_ids
    one = Measurement.objects.select_related("test_run__pcie_link", "drive_model").get(id=rows[0]["measurement_id"])
    assert rows[0]["total_iops"] == one.total_iops
    assert rows[0]["total_bw_bytes_per_s"] == one.total_bw_bytes_per_s
    assert rows[0]["drive_slug"] == one.drive_model.slug
    assert rows[0]["pcie_generation"] == one.test_run.pcie_link.generation
    assert rows[0]["submission_id"] == str(one.test_run.submission_id)
    flagged = next(row for row in rows if row["flag_kinds"])
    assert flagged["flag_kinds"] == "bus_bound"


@pytest.mark.parametrize("table", list(TABLES))
def test_withdrawn_hidden_and_held_submissions_never_appear(client, dataset_runs, table):
    hidden_ids = {str(run.submission_id) for run in dataset_runs["not_public"]}
    public_ids = {str(run.submission_id) for run in dataset_runs["public"]}
    rows = json.loads(body(export(client, table, "json")))
    assert rows
    if table in ("drives", "aggregates", "factor_effects"):  # rows of a drive model, not of a submission
        hidden_slugs = {run.drive_model.slug for run in dataset_runs["not_public"]}
        assert not hidden_slugs & {row["drive_slug"] for row in rows}
    else:
        assert {row["submission_id"] for row in rows} == public_ids
    assert not hidden_ids & {row.get("submission_id") for row in rows}


def ids(client, table, **params) -> list:
    response = export(client, table, "json", **params)
    assert response.status_code == 200, response.content
    key = TABLES[table].columns[0].name
    return [row[key] for row in json.loads(body(response))]


def test_filters_narrow_the_rows(client, dataset_runs):
    public, other = dataset_runs["public"]
    everything = ids(client, "measurements")
    by_drive = ids(client, "measurements", drive=public.drive_model.slug)
    assert set(by_drive) == set(public.measurements.values_list("id", flat=True))
    assert set(ids(client, "measurements", vendor=other.drive_model.vendor.slug)) == set(
        other.measurements.values_list("id", flat=True)
    )
    assert set(ids(client, "measurements", pcie_generation=3)) == set(other.measurements.values_list("id", flat=True))
    assert ids(client, "measurements", compliance="quick") == []  # quick runs are trials, never public
    assert set(ids(client, "measurements", compliance="pts")) == set(by_drive)
    assert ids(client, "measurements", compliance="imported") == []
    assert ids(client, "measurements", firmware="no-such-firmware") == []
    small = ids(client, "measurements", block_size_bytes=4096)
    assert small and set(small) < set(everything)
    assert set(small) == set(
        Measurement.objects.filter(id__in=everything, block_size_bytes=4096).values_list("id", flat=True)
    )
    both = ids(client, "measurements", block_size_bytes=[4096, 131072])
    assert set(both) == set(everything)
    reads = ids(client, "measurements", read_pct=100, test="iops")
    assert set(reads) == set(Measurement.objects.filter(id__in=everything, read_pct=100).values_list("id", flat=True))
    window = ids(client, "measurements", in_steady_window="true")
    assert set(window) == set(
        Measurement.objects.filter(id__in=everything, in_steady_window=True).values_list("id", flat=True)
    )
    assert 0 < len(window) < len(everything)
    assert ids(client, "measurements", test="tp") == []
    assert len(ids(client, "measurements", _size=3)) == 3
    assert ids(client, "drives", pcie_generation=3) == [other.drive_model.slug]
    assert ids(client, "submissions", compliance="quick") == []
    assert ids(client, "runs", drive=other.drive_model.slug) == [other.id]  # its surface run is in surface_runs
    assert ids(client, "surface_runs", drive=other.drive_model.slug) == [dataset_runs["surface"][1].id]
    assert ids(client, "steady_state", read_pct=0) == [public.id]
    assert ids(client, "steady_state", read_pct=100) == [other.id]
    assert ids(client, "steady_state", read_pct=50) == []


@pytest.mark.parametrize(
    ("table", "params", "message"),
    [
        ("measurements", {"block_size_bytes": "4k"}, "block_size_bytes must be a whole number of bytes"),
        ("measurements", {"read_pct": "101"}, "read_pct must be between 0 and 100"),
        ("measurements", {"test": "<script>"}, "test must be one of iops, tp, lat, wsat"),
        ("measurements", {"in_steady_window": "maybe"}, "in_steady_window must be true or false"),
        ("measurements", {"pcie_generation": ["3", "4"]}, "pcie_generation may be given only once"),
        ("measurements", {"blocksize": "4096"}, "Unknown parameter 'blocksize'"),
        ("measurements", {"_size": "0"}, "_size must be between 1"),
        ("runs", {"block_size_bytes": "4096"}, "block_size_bytes does not apply to the runs table"),
        ("drives", {"drive": ""}, "drive must not be empty"),
    ],
)
def test_bad_filter_values_are_a_400_with_a_clear_message(client, table, params, message):
    response = export(client, table, "csv", **params)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert "<script>" not in response.content.decode() or response["Content-Type"].startswith("text/plain")


def test_unknown_table_or_format_is_404(client, db):
    assert client.get("/datasets/secrets.csv").status_code == 404
    assert client.get("/datasets/measurements.xlsx").status_code == 404


def test_export_streams_and_sends_the_header_before_querying(client, dataset_runs, django_assert_num_queries):
    response = export(client, "measurements", "csv")
    assert isinstance(response, StreamingHttpResponse)
    chunks = iter(response.streaming_content)
    with django_assert_num_queries(0):
        header = next(chunks)
    assert header.decode().startswith("measurement_id,submission_id,run_id,")
    first_rows = next(chunks)
    assert first_rows.count(b"\n") >= 1
    response.close()


@pytest.mark.postgres
def test_closing_the_stream_early_closes_the_server_side_cursor(rf, dataset_runs, monkeypatch):
    from datasets import exports, views, writers

    monkeypatch.setattr(exports, "CHUNK_ROWS", 5)
    monkeypatch.setattr(writers, "BATCH_ROWS", 5)

    def open_cursors() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_cursors")
            return cursor.fetchone()[0]

    response = views.export(rf.get("/datasets/measurements.ndjson"), "measurements", "ndjson")
    chunks = iter(response.streaming_content)
    next(chunks)
    assert next(chunks).count(b"\n") == 5
    assert open_cursors() == 1, "rows come from a server-side cursor, a batch at a time"
    # What the WSGI server does when the client goes away; keep the connection open to look at it afterwards.
    request_finished.disconnect(close_old_connections)
    try:
        response.close()
    finally:
        request_finished.connect(close_old_connections)
    assert open_cursors() == 0, "closing the response (client gone) closes the cursor: the query stops"


def test_datasets_page_explains_every_table_and_column(client, db):
    page = client.get("/datasets/").content.decode()
    for table in TABLES.values():
        assert f'id="table-{table.name}"' in page
        for column in table.columns:
            assert f"<code>{column.name}</code>" in page
    assert "No release has been published yet" in page


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_awkward_text_survives_every_format(client, db, monkeypatch, fmt):
    from datasets import parquet_pipe

    monkeypatch.setattr(parquet_pipe, "BLOCK_BYTES", 64)  # split PostgreSQL's CSV into many blocks
    name = 'Evil, "Drive"\nline two <b>é</b>'
    run = iops_run(rounds=2, mixes=(0,), block_sizes=(4096,), drive_model__name=name, firmware__revision="")
    export_rows.rebuild_for_submission(run.submission_id)  # as ingest does
    rows = parsed("runs", fmt, body(export(client, "runs", fmt)))
    assert [row["drive_name"] for row in rows] == [name]
    # an empty firmware string is not a missing one, except in CSV where the two may look alike
    assert rows[0]["firmware"] in ("",) + ((None,) if fmt == "csv" else ())
    measurements = parsed("measurements", fmt, body(export(client, "measurements", fmt)))
    assert [m["drive_name"] for m in measurements] == [name, name]
    assert {m["run_id"] for m in measurements} == {run.id}


def test_record_blocks_end_only_between_records():
    from datasets.arrow_export import whole_records

    text = b'1,"a\nb",x\n2,"c ""q"" \nd",y\n3,plain,z\n'
    chunks = [text[i : i + 3] for i in range(0, len(text), 3)]
    blocks = list(whole_records(iter(chunks), block_bytes=5))
    assert b"".join(blocks) == text
    assert [list(csv.reader(io.StringIO(block.decode()))) for block in blocks] == [
        [["1", "a\nb", "x"]],
        [["2", 'c "q" \nd', "y"]],
        [["3", "plain", "z"]],
    ]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_closing_a_csv_download_early_cancels_the_copy_on_the_server(rf, monkeypatch):
    import psycopg

    from datasets import pg_copy, views

    # Each row costs the server 5 ms, so the COPY is certainly still running after the first rows have arrived,
    # however fast the machine and however large its socket buffers.
    real_copy_records = pg_copy.copy_records

    def slow_copy_records(sql, params, **options):
        # the sleep reads the row, so it runs for each one: PostgreSQL may run a condition on no column only once
        sleep = "pg_sleep(0.005 + 0 * length(slow::text)) IS NOT NULL"
        return real_copy_records(f"SELECT slow.* FROM ({sql}) AS slow WHERE {sleep}", params, **options)

    monkeypatch.setattr(pg_copy, "copy_records", slow_copy_records)
    monkeypatch.setattr(pg_copy, "CHUNK_BYTES", 1)  # the first rows leave at once, long before the COPY ends
    export_rows.rebuild_for_submission(iops_run(rounds=5).submission_id)  # as ingest does
    pid = connection.cursor().connection.info.backend_pid
    response = views.export(rf.get("/datasets/measurements.csv"), "measurements", "csv")
    chunks = iter(response.streaming_content)
    request_finished.disconnect(close_old_connections)
    try:
        next(chunks)  # the header
        next(chunks)  # the first rows
        with psycopg.connect(
            os.environ["DATABASE_URL"].rsplit("/", 1)[0] + f"/{connection.settings_dict['NAME']}", autocommit=True
        ) as watcher:
            query = "SELECT state, query FROM pg_stat_activity WHERE pid = %s"
            state, sql = watcher.execute(query, [pid]).fetchone()
            assert state == "active" and sql.startswith("COPY"), "the COPY is still sending rows"
            response.close()
            after = watcher.execute(query, [pid]).fetchone()
    finally:
        response.close()  # never leave the connection inside a COPY, even when an assertion failed
        request_finished.connect(close_old_connections)
    # The client went away: the COPY was cancelled (its backend idle) or its connection closed (no backend left).
    assert after is None or after[0] == "idle", after
    with connection.cursor() as cursor:  # and the next request's queries work
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "ndjson"])
def test_every_format_applies_the_same_filters(client, dataset_runs, fmt):
    params = {"block_size_bytes": 4096, "in_steady_window": "true", "_size": 7}
    rows = parsed("measurements", fmt, body(export(client, "measurements", fmt, **params)))
    assert [row["measurement_id"] for row in rows] == ids(client, "measurements", **params)
    assert len(rows) == 7 and all(row["block_size_bytes"] == 4096 and row["in_steady_window"] for row in rows)
