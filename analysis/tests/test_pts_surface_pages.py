"""The drive page's surface section (nvmedb extension): bounded queries, labels, units, and every chart drawn with
data in a real browser (chromium through Playwright)."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.browse import charts_surface
from analysis.models import SurfaceCell, SurfacePattern
from analysis.tests.conftest import make_browse_submission
from analysis.tests.factories import DriveModelFactory
from analysis.tests.surface_factory import surface_run
from analysis.tests.test_browse_browser import ARTIFACTS, browser  # noqa: F401 -- the module's shared browser

CHART_KEYS = ("surface-knee", "surface-bandwidth", "surface-iops", "surface-speedup")


def drive_with_surface():
    drive = DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    pts_run = drive.test_runs.first()
    keys = ("submission", "drive_model", "firmware", "unit", "host", "pcie_link")
    surface_run(**{k: getattr(pts_run, k) for k in keys})
    return drive


def figure(page_html: str, key: str) -> dict:
    match = re.search(rf'<script id="chart-{key}-data" type="application/json">(.*?)</script>', page_html, re.S)
    assert match, key
    return json.loads(match.group(1))


@pytest.mark.django_db
def test_the_loader_reads_a_surface_in_three_queries_whatever_its_size(client):
    drive = drive_with_surface()
    with CaptureQueriesContext(connection) as queries:
        data = charts_surface.load(drive)
    assert len(queries) == 3
    assert len(data.cells) == SurfaceCell.objects.count() and len(data.patterns) == 4


@pytest.mark.django_db
def test_the_drive_page_has_the_surface_section_labelled_as_an_extension_with_its_four_charts(client):
    drive = drive_with_surface()
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert 'id="test-surface"' in html and "nvmedb extension, not part of the PTS" in html
    assert "not a PTS result" in html
    bandwidth = figure(html, "surface-bandwidth")
    assert bandwidth["layout"]["coloraxis"]["colorbar"]["title"]["text"] == "MB/s (10⁶ bytes/s)"
    cell = SurfaceCell.objects.get(pattern="read", block_size_bytes=65536, iodepth=4)
    trace = next(t for t in bandwidth["data"] if t["name"] == "Sequential read")
    row, column = trace["y"].index("64 KiB"), trace["x"].index("QD 4")
    assert trace["z"][row][column] == round(cell.bw_bytes_per_s / 1e6, 1)
    assert trace["text"][row][column].endswith("B/s")
    knee = figure(html, "surface-knee")
    stars = knee["data"][-1]
    read = SurfacePattern.objects.get(pattern="read")
    assert read.knee_bytes_in_flight in stars["x"]
    assert any(shape["y0"] == 90 for shape in knee["layout"]["shapes"])
    speedup = figure(html, "surface-speedup")
    assert all(row[0] == 1.0 for trace in speedup["data"] for row in trace["z"])  # QD 1 column


@pytest.mark.django_db
def test_a_drive_without_a_surface_has_no_surface_section(client):
    drive = DriveModelFactory(name="Plain NVMe", slug="plain-nvme")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=4)
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert 'id="test-surface"' not in html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_each_surface_chart_is_drawn_with_data_in_a_real_browser(live_server, browser):  # noqa: F811
    drive = drive_with_surface()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{live_server.url}/drives/{drive.slug}/")
    page.click("#test-surface > summary")  # collapsed (the IOPS section is the one open): opening draws it
    for key in CHART_KEYS:
        plot = page.locator(f"#test-surface figure[id*='{key}'] .js-plotly-plot")
        plot.wait_for()
        drawn = plot.evaluate(
            "p => p.data.map(t => (t.z || t.y || []).flat().filter(v => v !== null && v !== undefined).length)"
        )
        assert drawn and min(drawn) > 0, (key, drawn)
        if key != "surface-knee":
            assert plot.locator(".heatmaplayer image, .heatmaplayer .hm").count() > 0, key
        else:
            assert plot.locator(".scatterlayer .point").count() > 0
    page.locator("#test-surface").screenshot(path=str(ARTIFACTS / "drivepage-surface.png"))
    assert not problems, problems
    context.close()
