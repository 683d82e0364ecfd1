"""The measurements CSV read from the export rows (datasets.export_rows) is byte for byte the CSV the join
query gave, on data crafted to break it, on SQLite and PostgreSQL; the rows follow a submission's status changes."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.db import connection

from analysis.models import ExportMeasurementRow, Measurement, TestRun
from analysis.services import runs_follow_status
from analysis.tests.factories import FlagFactory, HostFactory, SubmissionFactory, UserFactory, iops_run
from datasets import export_rows, pg_copy, writers
from datasets.exports import export_stream
from datasets.filters import Filters, rows_queryset
from datasets.tables import TABLES
from submissions import services as submission_services
from submissions.models import Submission

TABLE = TABLES["measurements"]
SHAPE = {"rounds": 2, "mixes": (100, 0), "block_sizes": (4096, 131072)}
HOSTILE = [
    "=cmd|'/c calc'!A1",
    "<script>alert(1)</script>",
    '+1, "two"\nthree',
    "-",
    "@x",
    "\t=1",
    "\r=2",
    "'=3",
    "C:\\n\\t\\\\x\x0b\x08",  # backslashes and the control characters COPY's text format escapes
]


@pytest.fixture
def crafted(db):
    """Public runs with hostile text in every text column a bundle fills, flags, a missing value and an empty one; and
    runs that must never show: withdrawn, hidden, held, rejected, and two kinds of trial (file target, quick profile)
    of an owner who may see them."""
    owner = UserFactory()
    host = HostFactory(cpu_model=HOSTILE[0], os_name="", kernel=HOSTILE[2])
    evil = iops_run(
        **SHAPE,
        drive_model__name=HOSTILE[0],
        drive_model__vendor__name=HOSTILE[1],
        firmware__revision=HOSTILE[3],
        host=host,
        pcie_link=None,
        compliant=False,
    )
    for i, measurement in enumerate(Measurement.objects.filter(test_run=evil).order_by("pk")):
        Measurement.objects.filter(pk=measurement.pk).update(
            raw_file=HOSTILE[i % len(HOSTILE)], json_path=HOSTILE[(i + 3) % len(HOSTILE)], lat_p99_ns=None
        )
    first = evil.measurements.order_by("pk").first()
    # numbers each database spells its own way: integral, a large exponent, a small one
    Measurement.objects.filter(pk=first.pk).update(read_iops=1e15, write_bw_bytes_per_s=1.2345e16, lat_mean_ns=1.5e-05)
    FlagFactory(test_run=evil, submission=evil.submission, measurement=first, kind="bus_bound")
    FlagFactory(test_run=evil, submission=evil.submission, measurement=first, kind="thermal_throttle")
    second = evil.measurements.order_by("pk")[1]  # a kind a spreadsheet would run: the flag_kinds cell made safe too
    FlagFactory(test_run=evil, submission=evil.submission, measurement=second, kind=HOSTILE[4])
    plain = iops_run(**SHAPE, drive_model__name=HOSTILE[1])
    shared = {"drive_model": plain.drive_model}
    unseen = [
        iops_run(**SHAPE, **shared, submission=SubmissionFactory(status="withdrawn")),
        iops_run(**SHAPE, **shared, submission=SubmissionFactory(hidden=True)),
        iops_run(**SHAPE, **shared, submission=SubmissionFactory(status="held", published_at=None)),
        iops_run(**SHAPE, **shared, submission=SubmissionFactory(status="rejected")),
        iops_run(**SHAPE, **shared, target_kind="file", submission=SubmissionFactory(uploader=owner)),
        iops_run(**SHAPE, **shared, profile="quick", compliant=False, submission=SubmissionFactory(uploader=owner)),
    ]
    export_rows.rebuild_all()
    return {"evil": evil, "plain": plain, "unseen": unseen, "owner": owner}


def join_query_csv(filters: Filters) -> bytes:
    """The CSV as the export wrote it before the export rows: COPY of the join query on PostgreSQL, the Python writer
    over the same query elsewhere."""
    if connection.vendor == "postgresql":
        return b"".join(pg_copy.stream_csv(TABLE, filters))
    return b"".join(writers.write_csv(TABLE.columns, rows_queryset(TABLE, filters).iterator()))


def export_csv(filters: Filters) -> bytes:
    return b"".join(export_stream(TABLE, filters, "csv"))


FILTERS = [
    {},
    {"drive": ["drive-does-not-exist"]},
    {"compliance": "pts"},
    {"compliance": "quick"},
    {"compliance": "imported"},
    {"read_pct": [0]},
    {"block_size_bytes": [131072], "in_steady_window": True},
    {"test": ["iops"], "pcie_generation": 4},
]


@pytest.mark.parametrize("values", FILTERS, ids=[",".join(v) or "all" for v in FILTERS])
def test_the_csv_from_export_rows_is_byte_for_byte_the_join_querys(crafted, values):
    filters = Filters(values=dict(values))
    assert export_csv(filters) == join_query_csv(filters)


def test_drive_vendor_and_firmware_filters_and_size_match_the_join_query(crafted):
    evil = crafted["evil"]
    for values in (
        {"drive": [evil.drive_model.slug]},
        {"vendor": [evil.drive_model.vendor.slug]},
        {"firmware": [evil.firmware.revision]},
    ):
        filters = Filters(values=values, size=3)
        content = export_csv(filters)
        assert content == join_query_csv(filters)
        assert len(list(csv.reader(io.StringIO(content.decode(), newline="")))) == 4  # the header and 3 rows


def test_an_owner_sees_their_trials_exactly_as_the_join_query_shows_them(crafted):
    filters = Filters(trials_of=crafted["owner"].pk)
    content = export_csv(filters)
    assert content == join_query_csv(filters)
    shown = {int(r["run_id"]) for r in csv.DictReader(io.StringIO(content.decode(), newline=""))}
    assert shown == {crafted["evil"].id, crafted["plain"].id, *(run.id for run in crafted["unseen"][4:])}


def test_hostile_text_is_inert_and_hidden_runs_never_show(crafted):
    content = export_csv(Filters())
    records = list(csv.DictReader(io.StringIO(content.decode(), newline="")))
    evil = [r for r in records if r["run_id"] == str(crafted["evil"].id)]
    assert {r["drive_name"] for r in evil} == {"'" + HOSTILE[0]}
    assert {r["vendor"] for r in evil} == {HOSTILE[1]}  # '<' is no formula
    assert {r["firmware"] for r in evil} == {"'-"} and {r["host_os"] for r in evil} == {""}
    assert "'\r=2" in {r["raw_file"] for r in evil} and "'=3" in {r["raw_file"] for r in evil}
    assert evil[0]["flag_kinds"] == "bus_bound;thermal_throttle" and evil[2]["flag_kinds"] == ""
    assert evil[1]["flag_kinds"] == "'" + HOSTILE[4]
    assert {int(r["run_id"]) for r in records} == {crafted["evil"].id, crafted["plain"].id}


def test_status_changes_reach_the_export_without_a_rebuild_call(crafted):
    plain = crafted["plain"]
    staff = UserFactory(is_staff=True)
    submission_services.submission_hide(submission=plain.submission, reason="test", by=staff)
    assert str(plain.id) not in {r["run_id"] for r in csv.DictReader(io.StringIO(export_csv(Filters()).decode()))}
    assert export_csv(Filters()) == join_query_csv(Filters())


def test_a_status_that_lowers_compliant_rewrites_the_rows(crafted):
    plain = crafted["plain"]
    TestRun.objects.filter(pk=plain.pk).update(derived_compliant=True)  # what ingest derived from the bundle
    assert ExportMeasurementRow.objects.filter(run=plain, compliant=True).exists()
    runs_follow_status(submission=plain.submission, status="held", reasons=["looked odd"])
    assert not TestRun.objects.get(pk=plain.pk).compliant
    assert not ExportMeasurementRow.objects.filter(run=plain, compliant=True).exists()
    runs_follow_status(submission=plain.submission, status="published")
    assert ExportMeasurementRow.objects.filter(run=plain, compliant=True).exists()


@pytest.mark.postgres
def test_a_submissions_rows_are_written_by_the_statement_built_for_that_submission(crafted, monkeypatch):
    """The INSERT … SELECT built once for every submission is, with a submission's id (a UUID or its text), the one
    Django builds for that submission's measurements."""
    executed = []
    monkeypatch.setattr(export_rows, "_execute", lambda sql, params: executed.append((sql, list(params))) or 0)
    for submission_id in (crafted["evil"].submission_id, str(crafted["plain"].submission_id)):
        export_rows.rebuild_for_submission(submission_id)
        measurements = export_rows._pts_measurements().filter(test_run__submission_id=submission_id)
        sql, params = export_rows._insert_statement(measurements)
        assert executed.pop() == (sql, list(params))


def test_a_failed_rebuild_leaves_the_old_rows(crafted, monkeypatch):
    plain = crafted["plain"]
    before = sorted(ExportMeasurementRow.objects.filter(submission=plain.submission).values_list("pk", "drive_name"))

    def killed(measurements):
        raise RuntimeError("worker killed mid-write")

    monkeypatch.setattr(export_rows, "_write", killed)
    with pytest.raises(RuntimeError):
        export_rows.rebuild_for_submission(plain.submission_id)
    after = sorted(ExportMeasurementRow.objects.filter(submission=plain.submission).values_list("pk", "drive_name"))
    assert after == before and len(before) == 8


def test_the_command_builds_missing_rows_only_where_missing(crafted):
    evil = crafted["evil"]
    ExportMeasurementRow.objects.filter(submission=evil.submission).delete()
    assert list(export_rows.missing_submissions()) == [evil.submission]
    out = io.StringIO()
    call_command("rebuild_export_rows", "--missing", stdout=out)
    assert out.getvalue().startswith("1 submissions rebuilt, 8 export rows written")
    assert export_csv(Filters()) == join_query_csv(Filters())


@pytest.mark.postgres
def test_the_postgresql_csv_query_reads_only_the_export_rows(crafted):
    """No join to measurements, runs, drives, hosts or flags: the export table, and the submissions deciding who sees
    a row (a semi-join on a small table)."""
    sql, params = export_rows.records(Filters(values={"compliance": "pts", "read_pct": [0]})).query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    nodes, stack = [], [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.get("Plans", ()))
    relations = {node["Relation Name"] for node in nodes if "Relation Name" in node}
    assert relations == {ExportMeasurementRow._meta.db_table, Submission._meta.db_table}


@pytest.mark.postgres
def test_postgresqls_insert_select_writes_the_rows_the_python_path_writes(crafted):
    fields = [f.attname for f in ExportMeasurementRow._meta.concrete_fields]
    by_sql = list(ExportMeasurementRow.objects.order_by("pk").values_list(*fields))
    ExportMeasurementRow.objects.all().delete()
    written = export_rows._insert_from_python(export_rows._pts_measurements())
    assert written == len(by_sql) == Measurement.objects.count()
    by_python = list(ExportMeasurementRow.objects.order_by("pk").values_list(*fields))
    line = fields.index("csv_line")
    assert [row[:line] + row[line + 1 :] for row in by_python] == [row[:line] + row[line + 1 :] for row in by_sql]
    # the records differ only where Python and PostgreSQL spell a number differently (808000.0 and 808000)
    for python_row, sql_row in zip(by_python, by_sql, strict=True):
        python_cells, sql_cells = (next(csv.reader([row[line]])) for row in (python_row, sql_row))
        assert len(python_cells) == len(sql_cells) == len(export_rows.FIELDS)
        for a, b in zip(python_cells, sql_cells, strict=True):
            assert a == b or float(a) == float(b)


def test_a_rows_record_is_spelled_again_from_its_own_columns(crafted):
    """Migration 0023 fills the records of rows written before they were stored: from the rows' own columns."""
    written = list(ExportMeasurementRow.objects.order_by("pk").values_list("csv_line", flat=True))
    ExportMeasurementRow.objects.update(csv_line="")
    export_rows.fill_records()
    assert list(ExportMeasurementRow.objects.order_by("pk").values_list("csv_line", flat=True)) == written
    assert any("\\" in line for line in written) and any("\r" in line for line in written)


def test_a_full_rebuild_writes_the_submissions_in_measurement_order(crafted, monkeypatch):
    """The CSV reads the rows by measurement id; submission keys are random UUIDs. Rebuilt in key order, the rows lay
    in the table in random order, and PostgreSQL's read by measurement id visited a table page per row (3.4 s against
    0.9 s for a million rows)."""
    visited = []
    monkeypatch.setattr(export_rows, "rebuild_for_submission", lambda pk: visited.append(pk) or 0)
    export_rows.rebuild_all()
    first_measurement = {}
    for submission_id, measurement_id in Measurement.objects.order_by("pk").values_list("test_run__submission", "pk"):
        first_measurement.setdefault(submission_id, measurement_id)
    assert len(visited) == len(first_measurement) >= 8
    assert visited == sorted(first_measurement, key=first_measurement.get)
    assert visited != sorted(visited)  # the keys' own order is another: the check above could fail


def test_renaming_a_drive_in_the_admin_rewrites_its_rows(crafted, admin_client):
    drive = crafted["plain"].drive_model
    form = {"name": "=Renamed drive", "interface": drive.interface, "form_factor": "", "controller": "",
            "nand_type": "", "dram": ""}  # fmt: skip
    response = admin_client.post(f"/admin/analysis/drivemodel/{drive.pk}/change/", form)
    assert response.status_code == 302, response.content[:2000]
    assert set(ExportMeasurementRow.objects.filter(drive_model=drive).values_list("drive_name", flat=True)) == {
        "'=Renamed drive"
    }
    assert export_csv(Filters()) == join_query_csv(Filters())


@pytest.mark.postgres
def test_no_table_has_two_indexes_on_the_same_columns(db):
    """Every index costs each write; two alike (same columns, operator classes, expressions and condition) cost it
    twice for nothing. The export rows had two such pairs (migration 0024)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT indrelid::regclass::text, array_agg(indexrelid::regclass::text ORDER BY indexrelid)
               FROM pg_index JOIN pg_class ON pg_class.oid = indrelid
               WHERE pg_class.relnamespace = 'public'::regnamespace
               GROUP BY indrelid, indkey::text, indclass::text, coalesce(pg_get_expr(indexprs, indrelid), ''),
                        coalesce(pg_get_expr(indpred, indrelid), '')
               HAVING count(*) > 1"""
        )
        assert cursor.fetchall() == []
