"""The surface page (nvmedb extension, /drives/<slug>/surface/) and the drive page's summary of it: bounded queries,
labels, units, one answer sentence per pattern, and every chart drawn with data in a real browser (chromium through
Playwright), the answers inside the first 1400×900 screen."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.models import SurfaceCell, SurfacePattern
from analysis.tests.conftest import make_browse_submission
from analysis.tests.factories import DriveModelFactory
from analysis.tests.surface_factory import surface_run
from analysis.tests.test_browse_browser import ARTIFACTS, browser  # noqa: F401 -- the module's shared browser
from reports import units
from reports.surface import data as surface_data

CHART_KEYS = ("surface-bw-by-bs", "surface-bw-by-qd", "surface-knee", "surface-latency", "surface-bandwidth",
              "surface-iops", "surface-speedup", "surface-variation")  # fmt: skip
HEATMAPS = ("surface-bandwidth", "surface-iops", "surface-speedup", "surface-variation")
VIEWPORT = {"width": 1400, "height": 900}


def drive_with_surface(latency=False, repetitions=3):
    drive = DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    pts_run = drive.test_runs.first()
    keys = ("submission", "drive_model", "firmware", "unit", "host", "pcie_link")
    surface_run(latency=latency, repetitions=repetitions, **{k: getattr(pts_run, k) for k in keys})
    return drive


def figure(page_html: str, key: str) -> dict:
    match = re.search(rf'<script id="chart-{key}-data" type="application/json">(.*?)</script>', page_html, re.S)
    assert match, key
    return json.loads(match.group(1))


@pytest.mark.django_db
def test_the_loader_reads_a_surface_in_three_queries_whatever_its_size(client):
    drive = drive_with_surface()
    with CaptureQueriesContext(connection) as queries:
        data = surface_data.load(drive)
    assert len(queries) == 3
    assert len(data.cells) == SurfaceCell.objects.count() and len(data.patterns) == 4


@pytest.mark.django_db
def test_the_surface_page_answers_per_pattern_and_has_every_plot_labelled_as_an_extension(client):
    drive = drive_with_surface(latency=True)
    html = client.get(f"/drives/{drive.slug}/surface/").content.decode()
    assert "nvmedb extension, not part of the PTS" in html and "never a PTS result" in html
    answers = re.findall(r'<li class="surface-answer" data-pattern="(\w+)">(.*?)</li>', html)
    assert [pattern for pattern, _ in answers] == ["read", "randread", "write", "randwrite"]
    for pattern, sentence in answers:
        p = SurfacePattern.objects.get(pattern=pattern)
        at = f"{units.block_size(p.knee_block_size_bytes)} × QD {p.knee_iodepth}"
        assert f"peaks at {units.bandwidth(p.peak_bw_bytes_per_s)}" in sentence
        assert f"90% of that at {at} ({units.size_binary(p.knee_bytes_in_flight)} in flight" in sentence
        assert "QD 1 → peak: " in sentence
    for key in CHART_KEYS:
        assert figure(html, key)["data"], key
    bandwidth = figure(html, "surface-bandwidth")
    assert bandwidth["layout"]["coloraxis"]["colorbar"]["title"]["text"] == "MB/s (10⁶ bytes/s)"
    cell = SurfaceCell.objects.get(pattern="read", block_size_bytes=65536, iodepth=4)
    trace = next(t for t in bandwidth["data"] if t["name"] == "Sequential read")
    row, column = trace["y"].index("64 KiB"), trace["x"].index("QD 4")
    assert trace["z"][row][column] == round(cell.bw_bytes_per_s / 1e6, 1)
    assert trace["text"][row][column].endswith("B/s")
    # bandwidth over block size, one line per QD (a legend entry each), and over QD, one line per block size
    by_bs = figure(html, "surface-bw-by-bs")
    assert [t["name"] for t in by_bs["data"] if t["showlegend"]] == ["QD 1", "QD 4", "QD 16"]
    qd4 = next(t for t in by_bs["data"] if t["name"] == "QD 4" and t["xaxis"] == "x")  # the first panel: read
    assert qd4["y"][qd4["x"].index(65536)] == round(cell.bw_bytes_per_s / 1e6, 1)
    by_qd = figure(html, "surface-bw-by-qd")
    assert [t["name"] for t in by_qd["data"] if t["showlegend"]] == ["4 KiB", "64 KiB", "1 MiB"]
    # every knee marker carries its pattern
    knee = figure(html, "surface-knee")
    stars = [t for t in knee["data"] if t["marker"].get("symbol") == "star"]
    assert len(stars) == 4 and all("text" in t["mode"] for t in stars)
    read = SurfacePattern.objects.get(pattern="read")
    (read_star,) = [t for t in stars if t["text"][0].startswith("Sequential read: ")]
    assert read_star["x"] == [read.knee_bytes_in_flight] and "Sequential read" in read_star["name"]
    assert any(shape["y0"] == 90 for shape in knee["layout"]["shapes"])
    # latency: mean and 99th percentile at QD 1 (and at the 90% point's QD where it is not 1)
    latency = figure(html, "surface-latency")
    mean_qd1 = next(t for t in latency["data"] if t["name"] == "mean, QD 1" and t["xaxis"] == "x")
    qd1 = SurfaceCell.objects.select_related("measurement").get(pattern="read", block_size_bytes=4096, iodepth=1)
    assert mean_qd1["y"][0] == round(qd1.measurement.lat_mean_ns / 1e3, 2)
    assert {"99th percentile, QD 1", "mean, QD of the 90% point"} <= {t["name"] for t in latency["data"]}
    speedup = figure(html, "surface-speedup")
    assert all(row[0] == 1.0 for trace in speedup["data"] for row in trace["z"])  # QD 1 column


@pytest.mark.django_db
def test_the_page_shows_medians_with_min_max_bars_marks_noisy_cells_and_counts_the_repetitions_that_agree(client):
    drive = drive_with_surface()
    html = client.get(f"/drives/{drive.slug}/surface/").content.decode()
    answers = dict(re.findall(r'<li class="surface-answer" data-pattern="(\w+)">(.*?)</li>', html))
    for pattern in SurfacePattern.objects.all():
        assert pattern.repetitions == 3 and pattern.repeatable
        if pattern.knee_moves:
            expected = f"{pattern.knee_agreeing_repetitions} of 3 repetitions put it there, the knee moves"
        else:
            expected = "where all 3 repetitions put it"
        assert expected in answers[pattern.pattern]
    assert "Every cell ran 3 times, interleaved" in html and "1 noisy cell (CV above 10%)" in html
    noisy = SurfaceCell.objects.get(noisy=True)
    assert (noisy.pattern, noisy.block_size_bytes, noisy.iodepth, noisy.n_repetitions) == ("read", 4096, 1, 3)
    assert noisy.bw_cv > 0.1 and SurfaceCell.objects.filter(noisy=False).count() == SurfaceCell.objects.count() - 1
    by_bs = figure(html, "surface-bw-by-bs")
    qd1 = next(t for t in by_bs["data"] if t["name"] == "QD 1" and t["xaxis"] == "x")
    at = qd1["x"].index(4096)
    assert qd1["error_y"]["array"][at] == round((noisy.bw_max_bytes_per_s - noisy.bw_bytes_per_s) / 1e6, 2)
    assert qd1["error_y"]["arrayminus"][at] == round((noisy.bw_bytes_per_s - noisy.bw_min_bytes_per_s) / 1e6, 2)
    assert qd1["marker"]["symbol"][at] == "x" and qd1["marker"]["symbol"].count("x") == 1
    bandwidth = next(t for t in figure(html, "surface-bandwidth")["data"] if t["name"] == "Sequential read")
    marked = [text for row in bandwidth["text"] for text in row if text.endswith("*")]
    assert marked == [bandwidth["text"][bandwidth["y"].index("4 KiB")][bandwidth["x"].index("QD 1")]]
    variation = next(t for t in figure(html, "surface-variation")["data"] if t["name"] == "Sequential read")
    assert variation["z"][variation["y"].index("4 KiB")][variation["x"].index("QD 1")] == round(100 * noisy.bw_cv, 1)


@pytest.mark.django_db
def test_a_surface_with_one_pass_per_cell_says_it_is_not_repeatable_and_shows_no_spread(client):
    drive = drive_with_surface(repetitions=1)
    assert set(SurfaceCell.objects.values_list("n_repetitions", "bw_cv", "noisy")) == {(1, None, None)}
    html = client.get(f"/drives/{drive.slug}/surface/").content.decode()
    assert "Every cell ran once" in html and "it is not repeatable" in html
    assert html.count("from one repetition (not repeatable)") == 4
    by_bs = figure(html, "surface-bw-by-bs")
    assert not any("error_y" in trace for trace in by_bs["data"])
    variation = figure(html, "surface-variation")["data"][0]
    assert {text for row in variation["text"] for text in row} == {"1 run"}


@pytest.mark.django_db
def test_a_trial_surface_of_two_repetitions_shows_its_spread_and_says_it_is_not_repeatable(client):
    drive = drive_with_surface(repetitions=2)
    assert set(SurfacePattern.objects.values_list("repetitions", "repeatable")) == {(2, False)}
    html = client.get(f"/drives/{drive.slug}/surface/").content.decode()
    assert "Every cell ran 2 times, interleaved" in html
    assert "Fewer than 3 repetitions were planned: a trial, not repeatable." in html


@pytest.mark.django_db
def test_the_drive_page_keeps_a_short_summary_and_links_the_surface_page_from_its_first_screen(client):
    drive = drive_with_surface()
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    first_screen = html[html.index('<div class="first-screen">') : html.index('<section aria-labelledby="factors"')]
    assert f'href="/drives/{drive.slug}/surface/" id="surface-page-link"' in first_screen
    assert first_screen.count('class="surface-answer"') == 4
    assert 'id="test-surface"' in html and "not a PTS result" in html
    assert not any(f"chart-{key}-data" in html for key in CHART_KEYS)  # the plots are on the surface page


@pytest.mark.django_db
def test_a_drive_without_a_surface_has_no_surface_page(client):
    drive = DriveModelFactory(name="Plain NVMe", slug="plain-nvme")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=4)
    assert client.get(f"/drives/{drive.slug}/surface/").status_code == 404
    assert client.get(f"/drives/{drive.slug}/surface/?submission=nope").status_code == 400


@pytest.mark.django_db
def test_a_drive_without_a_surface_has_no_surface_section(client):
    drive = DriveModelFactory(name="Plain NVMe", slug="plain-nvme")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=4)
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert 'id="test-surface"' not in html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_answers_are_on_the_first_screen_and_each_plot_is_drawn_with_data_in_a_real_browser(
    live_server,
    browser,  # noqa: F811
):
    drive = drive_with_surface(latency=True)
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.goto(f"{live_server.url}/drives/{drive.slug}/")
    link = page.locator("#surface-page-link")
    box = link.bounding_box()
    assert box and box["y"] + box["height"] <= VIEWPORT["height"], box  # on the drive page's first screen
    link.click()
    page.wait_for_url(f"**/drives/{drive.slug}/surface/")
    answers = page.locator("#surface-answers li.surface-answer")
    assert answers.count() == 4
    for i in range(4):
        box = answers.nth(i).bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], (i, box)
    page.screenshot(path=str(ARTIFACTS / "surface-page-first-screen.png"))
    for key in CHART_KEYS:
        plot = page.locator(f"#chart-{key} .js-plotly-plot")
        plot.wait_for()
        drawn = plot.evaluate(
            "p => p.data.map(t => (t.z || t.y || []).flat().filter(v => v !== null && v !== undefined).length)"
        )
        assert drawn and min(drawn) > 0, (key, drawn)
        if key in HEATMAPS:
            assert plot.locator(".heatmaplayer image, .heatmaplayer .hm").count() > 0, key
        else:
            assert plot.locator(".scatterlayer .point").count() > 0, key
    knee_labels = page.eval_on_selector_all(
        "#chart-surface-knee .scatterlayer .textpoint text", "texts => texts.map(t => t.textContent)"
    )
    assert len(knee_labels) == 4 and all(": " in label and "QD" in label for label in knee_labels), knee_labels
    page.screenshot(path=str(ARTIFACTS / "surface-page.png"), full_page=True)
    assert not problems, problems
    context.close()
