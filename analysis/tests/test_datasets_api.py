"""The read API: drives, published submissions, cursor-paginated measurements and releases; public data only."""

from __future__ import annotations

import pytest

from analysis.models import Measurement
from analysis.tests.factories import DriveModelAggregateFactory
from datasets.releases import build_release
from datasets.tables import TABLES

pytestmark = pytest.mark.django_db


def test_drive_list_shows_public_drives_with_the_drive_list_filters(client, dataset_runs):
    public, other = dataset_runs["public"]
    data = client.get("/api/v1/drives/").json()
    assert {d["slug"] for d in data["results"]} == {public.drive_model.slug, other.drive_model.slug}
    assert data["count"] == 2
    gen3 = client.get("/api/v1/drives/", {"pcie_generation": 3}).json()
    assert [d["slug"] for d in gen3["results"]] == [other.drive_model.slug]
    search = client.get("/api/v1/drives/", {"q": public.drive_model.model_number}).json()
    assert [d["slug"] for d in search["results"]] == [public.drive_model.slug]
    bad = client.get("/api/v1/drives/", {"pcie_generation": "nine"})
    assert bad.status_code == 400
    assert "pcie_generation" in bad.json()


def test_drive_detail_has_aggregates_and_hidden_drives_are_absent(client, dataset_runs):
    public = dataset_runs["public"][0]
    DriveModelAggregateFactory(drive_model=public.drive_model, metric="iops_4k_read", median=512_000.0)
    data = client.get(f"/api/v1/drives/{public.drive_model.slug}/").json()
    assert data["public_runs"] == 1  # its IOPS run; the surface run of the same bundle is counted apart
    assert data["public_surface_runs"] == 1
    assert data["aggregates"][0]["median"] == 512_000.0
    assert data["aggregates"][0]["unit"] == "IOPS"
    for run in dataset_runs["not_public"]:
        assert client.get(f"/api/v1/drives/{run.drive_model.slug}/").status_code == 404


def test_published_submissions_are_only_the_public_ones(client, dataset_runs):
    data = client.get("/api/v1/published-submissions/").json()
    assert {s["id"] for s in data["results"]} == {str(r.submission_id) for r in dataset_runs["public"]}
    one = dataset_runs["public"][0]
    detail = client.get(f"/api/v1/published-submissions/{one.submission_id}/").json()
    surface = dataset_runs["surface"][0]
    assert detail["runs"] == [
        {"run_id": one.id, "test": "iops", "drive_slug": one.drive_model.slug},
        {"run_id": surface.id, "test": "surface", "drive_slug": one.drive_model.slug},
    ]
    for run in dataset_runs["not_public"]:
        assert client.get(f"/api/v1/published-submissions/{run.submission_id}/").status_code == 404


def test_measurements_walk_every_public_row_by_cursor_in_id_order(client, dataset_runs):
    expected = list(
        Measurement.objects.filter(test_run__in=dataset_runs["public"]).order_by("id").values_list("id", flat=True)
    )
    seen, url, pages = [], "/api/v1/measurements/?page_size=7", 0
    while url:
        data = client.get(url).json()
        seen += [row["measurement_id"] for row in data["results"]]
        url, pages = data["next"], pages + 1
    assert seen == expected
    assert pages == -(-len(expected) // 7)
    row = client.get("/api/v1/measurements/", {"page_size": 1}).json()["results"][0]
    assert list(row) == TABLES["measurements"].column_names


def test_measurement_filters_narrow_and_bad_values_are_400(client, dataset_runs):
    public = dataset_runs["public"][0]
    data = client.get(
        "/api/v1/measurements/", {"drive": public.drive_model.slug, "block_size_bytes": 4096, "page_size": 1000}
    ).json()
    assert {r["measurement_id"] for r in data["results"]} == set(
        public.measurements.filter(block_size_bytes=4096).values_list("id", flat=True)
    )
    bad = client.get("/api/v1/measurements/", {"read_pct": "half"})
    assert bad.status_code == 400
    assert "read_pct must be a whole percentage" in bad.json()["detail"]
    assert client.get("/api/v1/measurements/", {"colour": "red"}).status_code == 400


def test_releases_are_listed_with_files_checksums_and_citation(client, dataset_runs, releases_dir):
    assert client.get("/api/v1/releases/").json() == []
    build_release()
    (release,) = client.get("/api/v1/releases/").json()
    assert release["number"] == 1
    assert "release 1 [Data set]" in release["citation"]
    files = {f["name"]: f for f in release["files"]}
    assert files["measurements.csv"]["rows"] == files["measurements.parquet"]["rows"] > 0
    assert files["measurements.csv"]["url"].endswith("/datasets/releases/1/measurements.csv")
    assert client.get("/api/v1/releases/1/").json()["files"] == release["files"]
    assert client.get("/api/v1/releases/2/").status_code == 404


def test_openapi_schema_documents_the_read_api(client, db):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    for path in (
        "/api/v1/drives/",
        "/api/v1/drives/{slug}/",
        "/api/v1/published-submissions/",
        "/api/v1/published-submissions/{submission_id}/",
        "/api/v1/measurements/",
        "/api/v1/releases/",
        "/api/v1/releases/{number}/",
    ):
        assert path in schema["paths"], path
        assert "Stable within v1" in schema["paths"][path]["get"]["description"]
    parameters = {p["name"] for p in schema["paths"]["/api/v1/measurements/"]["get"]["parameters"]}
    assert {"cursor", "block_size_bytes", "read_pct", "in_steady_window", "compliance"} <= parameters
    row = schema["components"]["schemas"]["MeasurementsRow"]["properties"]
    assert "Unit: bytes/s" in row["total_bw_bytes_per_s"]["description"]
