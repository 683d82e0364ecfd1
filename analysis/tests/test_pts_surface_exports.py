"""The surface's export tables (nvmedb extension): every format, filters, releases, labelled as not the PTS."""

import csv
import io
import json
import statistics

import pytest

from analysis.models import SurfaceCell, SurfacePattern
from datasets import parquet
from datasets.releases import build_release
from datasets.tables import TABLES

pytestmark = pytest.mark.django_db


def export(client, table, fmt, **params) -> bytes:
    response = client.get(f"/datasets/{table}.{fmt}", params)
    assert response.status_code == 200, response
    return b"".join(response.streaming_content)


@pytest.mark.parametrize("fmt", ["csv", "json", "ndjson", "parquet"])
def test_every_format_carries_each_cell_s_bandwidth_iops_speedup_and_knee(client, dataset_runs, fmt):
    content = export(client, "surface", fmt)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(content.decode())))
    elif fmt == "json":
        rows = json.loads(content)
    elif fmt == "ndjson":
        rows = [json.loads(line) for line in content.decode().splitlines()]
    else:
        rows = parquet.read_table(content).to_pylist()
    cells = {c.pk: c for c in SurfaceCell.objects.all()}
    assert len(rows) == len(cells) == 2 * 4 * 3 * 3
    for row in rows:
        cell = cells[int(row["surface_cell_id"])]
        assert float(row["bw_bytes_per_s"]) == cell.bw_bytes_per_s and float(row["iops"]) == cell.iops
        assert float(row["speedup"]) == pytest.approx(cell.speedup)
        assert str(row["knee"]).lower() == str(cell.knee).lower()
        assert row["test"] == "surface" and str(row["compliant"]).lower() == "false"
        assert row["access"] in ("sequential", "random")


def test_the_patterns_table_names_the_smallest_cell_reaching_90_percent_of_the_peak(client, dataset_runs):
    rows = json.loads(export(client, "surface_patterns", "json"))
    assert len(rows) == 8
    for row in rows:
        pattern = SurfacePattern.objects.get(pk=row["surface_pattern_id"])
        knee = SurfaceCell.objects.get(test_run_id=row["run_id"], pattern=row["pattern"], knee=True)
        assert (row["knee_block_size_bytes"], row["knee_iodepth"]) == (knee.block_size_bytes, knee.iodepth)
        assert row["knee_bw_bytes_per_s"] >= 0.9 * row["peak_bw_bytes_per_s"]
        smaller = SurfaceCell.objects.filter(
            test_run_id=row["run_id"], pattern=row["pattern"], bytes_in_flight__lt=knee.bytes_in_flight
        )
        assert all(c.bw_bytes_per_s < 0.9 * pattern.peak_bw_bytes_per_s for c in smaller)
        assert row["claim_differs"] is False


def test_the_run_filters_and_the_block_size_filter_apply(client, dataset_runs):
    public, other = dataset_runs["public"]
    by_drive = json.loads(export(client, "surface", "json", drive=other.drive_model.slug))
    assert {row["run_id"] for row in by_drive} == {dataset_runs["surface"][1].id}
    small = json.loads(export(client, "surface", "json", block_size_bytes=4096))
    assert small and {row["block_size_bytes"] for row in small} == {4096}
    assert json.loads(export(client, "surface", "json", test="iops")) == []
    assert json.loads(export(client, "runs", "json", test="surface")) == []  # the runs table holds PTS runs only
    assert len(json.loads(export(client, "surface_runs", "json", test="surface"))) == 2


def test_a_release_carries_both_surface_tables(dataset_runs, releases_dir):
    build_release()
    package = json.loads((releases_dir / "1" / "datapackage.json").read_text())
    rows = {r["path"]: r.get("rows") for r in package["resources"]}
    assert rows["surface.csv"] == SurfaceCell.objects.count()
    assert rows["surface_patterns.csv"] == SurfacePattern.objects.count()
    assert {"surface.parquet", "surface_patterns.parquet"} <= set(rows)
    assert "not a test of the SNIA PTS" in TABLES["surface"].description


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_every_cell_s_median_min_max_cv_and_repetitions_are_exported(client, dataset_runs, fmt):
    content = export(client, "surface", fmt)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(content.decode())))
    elif fmt == "json":
        rows = json.loads(content)
    else:
        rows = parquet.read_table(content).to_pylist()
    assert rows
    for row in rows:
        cell = SurfaceCell.objects.get(pk=int(row["surface_cell_id"]))
        bws = sorted(r["bw_bytes_per_s"] for r in cell.repetitions)
        assert int(row["n_repetitions"]) == len(bws) == 3
        assert [float(row[k]) for k in ("bw_min_bytes_per_s", "bw_bytes_per_s", "bw_max_bytes_per_s")] == bws
        assert float(row["bw_cv"]) == pytest.approx(statistics.stdev(bws) / statistics.fmean(bws))
        assert str(row["noisy"]).lower() == str(float(row["bw_cv"]) > 0.1).lower()
        assert row["spread_reason"] in ("", None)
    patterns = json.loads(export(client, "surface_patterns", "json"))
    assert patterns and all(p["repetitions"] == 3 and p["repeatable"] for p in patterns)
    assert all(
        0 <= p["knee_agreeing_repetitions"] <= 3 and p["noisy_cells"] == 1 for p in patterns if p["pattern"] == "read"
    )
