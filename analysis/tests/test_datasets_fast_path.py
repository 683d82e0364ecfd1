"""PostgreSQL's fast export path (`COPY` of SQL that spells booleans, datetimes and formula-safe text itself; Arrow
reading that CSV for Parquet) gives the same content as the plain ORM rendering of the same rows
(`writers.write_csv` / `writers.write_parquet` over `rows_queryset`), on data crafted to break one of them."""

from __future__ import annotations

import csv
import io

import pytest

from analysis.models import Measurement, Round
from analysis.tests.factories import FlagFactory, HostFactory, SteadyStateWindowFactory, SubmissionFactory, iops_run
from analysis.tests.factories_dirth import add_results
from analysis.tests.recovery_rows import add_recovery_rows
from analysis.tests.surface_factory import surface_run
from datasets import export_rows, parquet, parquet_pipe, writers
from datasets.exports import export_stream
from datasets.filters import Filters, rows_queryset
from datasets.tables import TABLES

pytestmark = pytest.mark.postgres

DRIVE = 'Evil, "Drive"\nline two\r\n日本語 é <b>'
SHAPE = {"rounds": 3, "mixes": (100, 0), "block_sizes": (4096,)}


@pytest.fixture
def crafted(db):
    """A public run full of awkward text and missing values, a plain public run, and runs that must never show:
    withdrawn, hidden, held, and two kinds of trial (file target, quick profile)."""
    host = HostFactory(cpu_model="=cmd|' /C calc'!A0", os_name="", kernel='-rc1, "quoted"')
    awkward = iops_run(
        **SHAPE,
        drive_model__name=DRIVE,
        drive_model__vendor__name="@Vendör; \\ back\\slash",
        firmware__revision="+FW\t1",
        host=host,
        pcie_link=None,
        compliant=False,
    )
    Measurement.objects.filter(test_run=awkward).update(
        raw_file='@fio\\iops, "r1".json', json_path="\r$.jobs[*]", lat_p99_ns=None, read_iops=-0.0
    )
    Round.objects.filter(test_run=awkward, number=2).update(series="-bs=4k\nnext")
    first = awkward.measurements.order_by("pk").first()
    FlagFactory(test_run=awkward, submission=awkward.submission, measurement=first, kind="bus_bound")
    FlagFactory(test_run=awkward, submission=awkward.submission, measurement=first, kind="thermal_throttling")
    FlagFactory(test_run=awkward, submission=awkward.submission, kind="non_compliant")
    SteadyStateWindowFactory(test_run=awkward, note='=SUM(A1), "steady"\nnot really')
    plain = iops_run(**SHAPE)
    SteadyStateWindowFactory(test_run=plain)
    hidden = [
        iops_run(**SHAPE, drive_model=plain.drive_model, submission=SubmissionFactory(status="withdrawn")),
        iops_run(**SHAPE, drive_model=plain.drive_model, submission=SubmissionFactory(hidden=True)),
        iops_run(
            **SHAPE,
            drive_model=plain.drive_model,
            submission=SubmissionFactory(status="held", published_at=None),
        ),
        iops_run(**SHAPE, drive_model=plain.drive_model, target_kind="file"),
        iops_run(**SHAPE, drive_model=plain.drive_model, profile="quick", compliant=False),
    ]
    keys = ("submission", "drive_model", "firmware", "unit", "host", "pcie_link")
    for run in (awkward, plain, *hidden):  # rows of the HIR/XSR, demand-intensity and surface tables too
        add_recovery_rows(run)
        add_results(run)
        surface_run(
            **{k: getattr(run, k) for k in keys}, profile=run.profile, target_kind=run.target_kind,
            repetitions=1 if run is plain else 3,  # a surface from before repeated cells: its spread is missing
        )  # fmt: skip
    from analysis.factor_effects import refresh_factor_effects
    from analysis.tests.factories import DriveModelAggregateFactory

    for run in (awkward, plain):  # the aggregates and factor_effects tables (drive-level rows)
        DriveModelAggregateFactory(drive_model=run.drive_model, level='=1+1, "x"')
        type(run).objects.filter(pk=run.pk).update(headline={"iops_4k_read": 5e5})
        refresh_factor_effects(run.drive_model)
    export_rows.rebuild_all()  # the measurements CSV's rows, as ingest writes them
    return {"awkward": awkward, "plain": plain, "hidden": hidden}


def cells(table: str, content: bytes) -> list[list]:
    """CSV records with numbers as floats and everything else as text."""
    types = [column.type for column in TABLES[table].columns]
    header, *records = csv.reader(io.StringIO(content.decode(), newline=""))
    assert header == TABLES[table].column_names
    return [
        [float(cell) if type_ == "number" and cell else cell for cell, type_ in zip(record, types, strict=True)]
        for record in records
    ]


def orm_csv(table: str, filters: Filters) -> bytes:
    return b"".join(writers.write_csv(TABLES[table].columns, rows_queryset(TABLES[table], filters)))


def fast_csv(table: str, filters: Filters) -> bytes:
    return b"".join(export_stream(TABLES[table], filters, "csv"))


@pytest.mark.parametrize("table", list(TABLES))
def test_the_fast_csv_holds_the_same_cells_as_the_orm_rendering(crafted, table):
    fast, orm = cells(table, fast_csv(table, Filters())), cells(table, orm_csv(table, Filters()))
    assert fast == orm
    assert fast, "the crafted data has public rows in every table"
    # and the same bytes: Python's writers spell floats as PostgreSQL does (datasets.float_text)
    assert fast_csv(table, Filters()) == orm_csv(table, Filters())


@pytest.mark.parametrize(
    "values",
    [{"drive": ["drive-does-not-exist"]}, {"compliance": "pts"}, {"read_pct": [0]}, {"in_steady_window": True}],
    ids=["no-drive", "compliant", "reads", "steady"],
)
def test_the_fast_csv_applies_the_same_filters_as_the_orm_rendering(crafted, values):
    filters = Filters(values=dict(values), size=4)
    assert cells("measurements", fast_csv("measurements", filters)) == cells(
        "measurements", orm_csv("measurements", filters)
    )


def test_the_fast_csv_keeps_awkward_text_byte_for_byte_and_shows_no_hidden_or_trial_run(crafted):
    content = fast_csv("measurements", Filters())
    records = list(csv.DictReader(io.StringIO(content.decode(), newline="")))
    awkward = [r for r in records if r["run_id"] == str(crafted["awkward"].id)]
    assert len(awkward) == 6 and {r["drive_name"] for r in awkward} == {DRIVE}
    assert {r["vendor"] for r in awkward} == {"'@Vendör; \\ back\\slash"}
    assert {r["firmware"] for r in awkward} == {"'+FW\t1"}
    assert {r["host_cpu_model"] for r in awkward} == {"'=cmd|' /C calc'!A0"}
    assert {r["host_kernel"] for r in awkward} == {'\'-rc1, "quoted"'}
    assert {r["raw_file"] for r in awkward} == {'\'@fio\\iops, "r1".json'}
    assert {r["json_path"] for r in awkward} == {"'\r$.jobs[*]"}
    assert {r["series"] for r in awkward} == {"", "'-bs=4k\nnext"}
    assert {r["pcie_generation"] for r in awkward} == {""} and {r["lat_p99_ns"] for r in awkward} == {""}
    assert awkward[0]["flag_kinds"] == "bus_bound;thermal_throttling" and awkward[1]["flag_kinds"] == ""
    # An empty string is written quoted, a missing value as nothing: the difference survives.
    assert b',"",' in content
    shown = {int(r["run_id"]) for r in records}
    assert shown == {crafted["awkward"].id, crafted["plain"].id}
    assert not shown & {run.id for run in crafted["hidden"]}


@pytest.mark.parametrize("table", ["measurements", "runs", "steady_state"])
def test_the_fast_parquet_holds_the_same_table_as_the_orm_rendering(crafted, monkeypatch, table):
    monkeypatch.setattr(parquet_pipe, "BLOCK_BYTES", 200)  # many Arrow blocks, records split across COPY chunks
    spec = TABLES[table]
    fast = parquet.read_table(b"".join(export_stream(spec, Filters(), "parquet")))
    orm = parquet.read_table(b"".join(writers.write_parquet(spec.columns, rows_queryset(spec, Filters()))))
    assert fast.schema == orm.schema
    assert fast.to_pylist() == orm.to_pylist()
    assert fast.num_rows > 0


def test_the_python_csv_writer_quotes_a_bare_carriage_return_and_tells_empty_from_missing():
    from datasets.tables import Column

    columns = [Column("a", "string", "", "a"), Column("b", "string", "", "b"), Column("n", "number", "", "n")]
    content = b"".join(writers.write_csv(columns, [("x\ry", "", None), (None, 'say "hi"', 1.5)]))
    assert content == b'a,b,n\n"x\ry","",\n,"say ""hi""",1.5\n'
    assert list(csv.reader(io.StringIO(content.decode(), newline=""))) == [
        ["a", "b", "n"],
        ["x\ry", "", ""],
        ["", 'say "hi"', "1.5"],
    ]
