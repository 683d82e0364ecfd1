"""The surface is an nvmedb extension, never mixed with PTS results: a surface run is in no PTS count, aggregate,
outlier vote, spread factor, run filter or PTS export, and its own tables carry its cells and its run's facts."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from analysis import explain
from analysis.factor_effects import refresh_factor_effects
from analysis.models import DriveModelAggregate, DrivePageSummary, Flag, SurfaceCell
from analysis.outliers import outlier_flags
from analysis.pts.surface import NOT_PTS
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from analysis.tests.factories import (
    DriveModelFactory,
    MeasurementFactory,
    PcieLinkFactory,
    PhysicalUnitFactory,
    RoundFactory,
    SubmissionFactory,
    UserFactory,
)
from analysis.tests.surface_factory import surface_run
from browse import queries
from datasets import parquet

pytestmark = pytest.mark.django_db

RUN_KEYS = ("submission", "drive_model", "firmware", "unit", "host", "pcie_link")
FORMATS = ("csv", "json", "ndjson", "parquet")  # csv and parquet take the COPY path, json and ndjson the ORM one


def export(client, table: str, fmt: str, **params) -> list[dict]:
    response = client.get(f"/datasets/{table}.{fmt}", params)
    assert response.status_code == 200, response
    content = b"".join(response.streaming_content)
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(content.decode(), newline="")))
    if fmt == "json":
        return json.loads(content)
    if fmt == "ndjson":
        return [json.loads(line) for line in content.decode().splitlines()]
    return parquet.read_table(content).to_pylist()


def run_ids(rows: list[dict]) -> set[int]:
    return {int(row["run_id"]) for row in rows}


def page_text(client, url: str, **params) -> str:
    response = client.get(url, params)
    assert response.status_code == 200, url
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


@pytest.fixture
def surface_only():
    """A drive whose one public run is a surface run, on a PCIe Gen5 link."""
    drive = DriveModelFactory(name="Lone Surface 2TB", slug="lone-surface-2tb")
    run = surface_run(drive_model=drive, pcie_link=PcieLinkFactory(generation=5, speed_gts=32.0))
    refresh_and_summarise(drive_model=drive)
    return run


@pytest.fixture
def mixed():
    """A drive with one submission of the four PTS tests and a surface run beside them, the surface run with a fio
    measurement row of its own (as ingest stores each cell's fio run)."""
    drive = DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    pts = list(drive.test_runs.order_by("pk"))
    run = surface_run(**{k: getattr(pts[0], k) for k in RUN_KEYS})
    measurement = MeasurementFactory(round=RoundFactory(test_run=run, phase="surface"), run_key="surface-read-bs4096")
    refresh_and_summarise(drive_model=drive)
    return {"drive": drive, "pts": pts, "surface": run, "measurement": measurement}


def test_a_drive_with_only_a_surface_run_has_no_pts_run_no_headline_and_keeps_its_page(client, surface_only):
    drive = surface_only.drive_model
    assert not DriveModelAggregate.objects.filter(drive_model=drive).exists()
    row = DrivePageSummary.objects.get(drive_model=drive)
    assert (row.n_runs, row.n_submissions, row.n_units) == (0, 0, 0) and row.summary["n_surface_runs"] == 1
    assert row.summary["representative"] == {} and row.pcie_generations == "" and row.run_kinds == ""

    text = page_text(client, f"/drives/{drive.slug}/")
    assert "0 public PTS test runs from 0 submissions on 0 units · 1 surface run (nvmedb extension" in text
    assert 'id="test-surface"' in client.get(f"/drives/{drive.slug}/").content.decode()
    listed = client.get("/drives/").content.decode()
    assert drive.name in listed, "the list names every drive with a public page"
    assert re.search(r">\s*0 / 0<br><small class=\"surface-only\"[^>]*>surface only<", listed)
    assert drive.name not in client.get("/drives/", {"pcie_generation": 5}).content.decode()

    detail = client.get(f"/api/v1/drives/{drive.slug}/").json()
    assert (detail["public_runs"], detail["public_surface_runs"], detail["aggregates"]) == (0, 1, [])
    assert client.get("/api/v1/drives/", {"pcie_generation": 5}).json()["results"] == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_surface_only_drive_has_no_row_in_the_pts_exports_and_its_rows_in_the_surface_tables(
    client, surface_only, fmt
):
    for table in ("runs", "measurements", "steady_state"):
        assert export(client, table, fmt) == [], table
    (run_row,) = export(client, "surface_runs", fmt)
    assert int(run_row["run_id"]) == surface_only.id and run_row["test"] == "surface"
    assert run_row["drive_slug"] == "lone-surface-2tb" and int(run_row["pcie_generation"]) == 5
    assert run_row["compliance_reasons"] == NOT_PTS
    cells = export(client, "surface", fmt)
    assert len(cells) == SurfaceCell.objects.count() and run_ids(cells) == {surface_only.id}
    assert run_ids(export(client, "surface_patterns", fmt)) == {surface_only.id}
    assert [row["drive_slug"] for row in export(client, "drives", fmt)] == ["lone-surface-2tb"]


def test_pts_and_surface_runs_count_apart_on_the_drive_page_and_the_list(client, mixed):
    drive = mixed["drive"]
    row = DrivePageSummary.objects.get(drive_model=drive)
    assert (row.n_runs, row.n_submissions, row.n_units, row.summary["n_surface_runs"]) == (4, 1, 1, 1)
    assert "surface" not in row.summary["representative"] and "surface" in row.summary["tests"]
    assert set(row.summary["steady_runs"]) == {"iops", "tp", "lat", "wsat"}
    text = page_text(client, f"/drives/{drive.slug}/")
    assert "4 public PTS test runs from 1 submission on 1 unit · 1 surface run (nvmedb extension" in text
    assert re.search(r">\s*1 / 4\s*<", client.get("/drives/").content.decode()), "units / PTS runs"
    # the per-request computation (a drive without a stored summary) counts the same
    computed, _ = queries.compute_summaries([drive.pk], {drive.pk: []})
    assert (computed[drive.pk].n_runs, computed[drive.pk].n_surface_runs) == (4, 1)
    assert mixed["surface"].id not in {r["id"] for r in queries.factor_runs(drive.pk)}


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_runs_and_measurements_exports_carry_only_the_pts_rows(client, mixed, fmt):
    pts_ids = {run.id for run in mixed["pts"]}
    assert run_ids(export(client, "runs", fmt)) == pts_ids
    measurements = export(client, "measurements", fmt)
    assert run_ids(measurements) == pts_ids
    assert mixed["measurement"].id not in {int(r["measurement_id"]) for r in measurements}
    assert export(client, "runs", fmt, test="surface") == []
    assert export(client, "measurements", fmt, test="surface") == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_surface_runs_table_carries_the_run_facts_of_the_surface_rows(client, mixed, fmt):
    run = mixed["surface"]
    (row,) = export(client, "surface_runs", fmt)
    assert int(row["run_id"]) == run.id and row["submission_id"] == str(run.submission_id)
    assert row["firmware"] == "FW2" and row["host_cpu_model"] == run.host.cpu_model
    assert int(row["pcie_generation"]) == 4 and row["purge_method"] == run.purge_method
    assert str(row["compliant"]).lower() == "false" and row["compliance_reasons"] == NOT_PTS
    assert run_ids(export(client, "surface", fmt)) == {run.id}
    assert export(client, "surface_runs", fmt, test="iops") == []


def test_the_home_page_counts_no_surface_measurement(client, mixed):
    html = client.get("/").content.decode()
    pts_rows = sum(run.measurements.count() for run in mixed["pts"])
    assert re.search(rf'id="count-measurements">{pts_rows}<', html)


def test_a_surface_run_s_headline_never_enters_the_aggregates(mixed):
    drive = mixed["drive"]
    before = DriveModelAggregate.objects.get(drive_model=drive, metric="iops_4k_read", factor="all")
    mixed["surface"].headline = {"iops_4k_read": 1e9, "bw_1m_read": 1e12}  # a row that should never say so
    mixed["surface"].save(update_fields=["headline"])
    refresh_and_summarise(drive_model=drive)
    after = DriveModelAggregate.objects.get(drive_model=drive, metric="iops_4k_read", factor="all")
    assert (after.n_runs, after.median) == (before.n_runs, before.median) == (1, before.median)


def test_surface_runs_neither_vote_nor_are_voted_on_as_outliers(settings):
    settings.NVMEDB_REVIEW_FIRST_N = 0
    drive = DriveModelFactory()
    for value in (690_000.0, 695_000.0, 700_000.0, 700_000.0, 705_000.0, 710_000.0):  # six contributors' surface
        surface_run(drive_model=drive, submission=SubmissionFactory(uploader=UserFactory()),
                    unit=PhysicalUnitFactory(drive_model=drive), headline={"iops_4k_read": value})  # fmt: skip
    candidate = surface_run(
        drive_model=drive,
        submission=SubmissionFactory(uploader=UserFactory(), status="ingesting", published_at=None),
        headline={"iops_4k_read": 70_000.0},
    )
    assert outlier_flags([candidate]) == []


def test_a_unit_with_only_a_surface_run_is_no_peer_in_the_explanation(mixed):
    drive = mixed["drive"]
    other_unit = PhysicalUnitFactory(drive_model=drive)
    surface_run(drive_model=drive, unit=other_unit, headline={"iops_4k_read": 1.0})
    peers = explain._peers([mixed["pts"][0]])
    assert other_unit.pk not in peers


def test_a_release_keeps_the_surface_out_of_runs_and_measurements(mixed, releases_dir):
    from datasets.releases import build_release

    release = build_release()

    def rows(table: str) -> list[dict]:
        with open(releases_dir / str(release.number) / f"{table}.csv", newline="") as handle:
            return list(csv.DictReader(handle))

    pts_ids, surface_id = {run.id for run in mixed["pts"]}, mixed["surface"].id
    assert run_ids(rows("runs")) == pts_ids and run_ids(rows("measurements")) == pts_ids
    assert run_ids(rows("surface_runs")) == run_ids(rows("surface")) == {surface_id}
    package = json.loads((releases_dir / str(release.number) / "datapackage.json").read_text())
    assert {"surface_runs.csv", "surface_runs.parquet"} <= {resource["path"] for resource in package["resources"]}


def test_the_test_filter_finds_the_surface_s_drives_and_submissions_but_no_pts_row(client, surface_only, mixed):
    surface_ids = {surface_only.id, mixed["surface"].id}
    assert run_ids(export(client, "surface_runs", "json", test="surface")) == surface_ids
    drives = export(client, "drives", "json", test="surface")
    assert {row["drive_slug"] for row in drives} == {"lone-surface-2tb", "acme-990-1tb"}
    assert [row["drive_slug"] for row in export(client, "drives", "json", test="iops")] == ["acme-990-1tb"]
    submissions = {row["submission_id"] for row in export(client, "submissions", "json", test="surface")}
    assert submissions == {str(surface_only.submission_id), str(mixed["surface"].submission_id)}


def test_the_submission_explanation_reads_no_surface_run_flag_or_fio_run(surface_only, mixed):
    assert explain.explain_submission(surface_only.submission) is None, "a surface run has no figure to place"
    link = mixed["pts"][0].pcie_link
    link.below_capability = True
    link.save(update_fields=["below_capability"])
    mixed["measurement"].link_utilization = 0.987  # the surface cell moved more than any PTS cell
    mixed["measurement"].save(update_fields=["link_utilization"])
    for kind in ("bus_bound", "thermal_throttle"):
        Flag.objects.create(submission=mixed["surface"].submission, test_run=mixed["surface"],
                            measurement=mixed["measurement"], kind=kind, reason="surface cell")  # fmt: skip
    refresh_factor_effects(mixed["pts"][0].drive_model)  # the refit task, as after the commit
    found = explain.explain_submission(mixed["surface"].submission)
    assert not {f["kind"] for f in found["factors"]} & {"bus_bound", "thermal_throttle"}, "no surface flag is read"
    # the factor model's rows are the PTS runs of the one unit: the surface run is no row of it
    assert found["metrics"] and {m["model_units"] for m in found["metrics"]} == {1}


def test_the_drive_page_counts_and_lists_no_flag_of_the_surface_run(client, mixed):
    surface = mixed["surface"]
    Flag.objects.create(submission=surface.submission, test_run=surface, kind="surface_claim_differs", reason="x")
    Flag.objects.create(submission=surface.submission, test_run=surface, measurement=mixed["measurement"],
                        kind="thermal_throttle", reason="a surface cell ran hot")  # fmt: skip
    refresh_and_summarise(drive_model=mixed["drive"])
    kinds = {row["kind"] for row in DrivePageSummary.objects.get(drive_model=mixed["drive"]).summary["flag_counts"]}
    assert kinds and not kinds & {"surface_claim_differs", "thermal_throttle"}
    page = client.get(f"/drives/{mixed['drive'].slug}/").content.decode()
    assert "Surface figures claim differs" not in page
    assert not re.search(r'class="flag flag-thermal_throttle"', page), "the surface cell's flag is not listed"
    computed, _ = queries.compute_summaries([mixed["drive"].pk], {mixed["drive"].pk: []})
    assert not {row["kind"] for row in computed[mixed["drive"].pk].flag_counts} & {"surface_claim_differs"}


def test_compare_keeps_a_surface_only_drive_out_of_the_pts_figures_and_shows_its_surface_apart(
    client, surface_only, mixed
):
    response = client.get("/compare/", {"drives": f"{mixed['drive'].slug},lone-surface-2tb"})
    assert response.status_code == 200
    html = response.content.decode()
    _, _, surface_part = html.partition('id="compare-surface"')
    assert surface_part and "nvmedb extension" in surface_part, "the surface is shown in its own section"

    def points(figures) -> int:
        return sum(points(v) for v in figures.values()) if isinstance(figures, dict) else len(figures)

    assert points(DrivePageSummary.objects.get(drive_model=surface_only.drive_model).compare) == 0
    assert points(DrivePageSummary.objects.get(drive_model=mixed["drive"]).compare) > 0


def test_compliance_reasons_are_one_cell_neutralised_in_csv_and_verbatim_elsewhere(client):
    run = surface_run()
    run.compliance_reasons = [NOT_PTS, '=HYPERLINK("x")', 'a; b, "quoted"\nnext']
    run.save(update_fields=["compliance_reasons"])
    expected = "; ".join(run.compliance_reasons)
    (row,) = export(client, "surface_runs", "csv")
    assert row["compliance_reasons"] == expected, "the first reason does not start like a formula"
    run.compliance_reasons = ['=HYPERLINK("x")', NOT_PTS]
    run.save(update_fields=["compliance_reasons"])
    for fmt in ("csv", "json", "parquet"):
        (row,) = export(client, "surface_runs", fmt)
        neutral = "'" if fmt == "csv" else ""
        assert row["compliance_reasons"] == neutral + '=HYPERLINK("x"); ' + NOT_PTS, fmt
    run.compliance_reasons = []
    run.save(update_fields=["compliance_reasons"])
    assert [row["compliance_reasons"] for fmt in FORMATS for row in export(client, "surface_runs", fmt)] == [""] * 4
