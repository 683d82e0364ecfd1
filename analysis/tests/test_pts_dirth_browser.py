"""The drive page's ECW/DIRTH section in a real browser (chromium through Playwright): the demand-intensity curves
and the histograms at the operating points are drawn with data."""

from __future__ import annotations

import pytest

from analysis.models import TestRun
from analysis.services import refresh_aggregates
from analysis.tests import factories
from analysis.tests.conftest import make_browse_submission
from analysis.tests.factories_dirth import IOPS, add_results, dirth_run
from analysis.tests.test_browse_browser import ARTIFACTS, browser  # noqa: F401 -- the module's shared browser
from reports import units

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def drive_with_dirth():
    drive = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    submission = make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    run = TestRun.objects.filter(submission=submission).first()
    dirth_run(submission=submission, drive_model=drive, firmware=run.firmware, unit=run.unit, host=run.host)
    ecw = factories.TestRunFactory(submission=submission, drive_model=drive, test="ecw", firmware=run.firmware,
                                   unit=run.unit, host=run.host)  # fmt: skip
    add_results(ecw).operating_points.all().delete()  # ECW has a curve, no operating points
    refresh_aggregates(drive_model=drive)
    return drive


def test_the_demand_intensity_curves_and_histograms_are_drawn_with_data(live_server, browser):  # noqa: F811
    drive = drive_with_dirth()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{live_server.url}/drives/{drive.slug}/")
    section = page.locator("#test-demand-intensity")
    page.click("#test-demand-intensity > summary")  # collapsed (the IOPS section is the one open): opening draws it
    for chart in ("demand-intensity-ecw", "demand-intensity-dirth", "dirth-histograms"):
        page.wait_for_selector(f"#chart-{chart} .js-plotly-plot .main-svg")
    # each curve: two lines (mean, 99.999th) of four TC x QD points each
    points = page.eval_on_selector_all(
        "#chart-demand-intensity-dirth .scatterlayer .trace", "ts => ts.map(t => t.querySelectorAll('.point').length)"
    )
    assert points == [4, 4]
    bars = page.eval_on_selector_all(
        "#chart-dirth-histograms .barlayer .trace", "ts => ts.map(t => t.querySelectorAll('.point path').length)"
    )
    assert bars == [3, 3, 3]  # MaxIOPS, MidIOPS, MinIOPS, three buckets each
    legend = " ".join(
        page.eval_on_selector_all("#chart-dirth-histograms .legend text", "ts => ts.map(t => t.textContent)")
    )
    assert "MaxIOPS (TC 2 × QD 4)" in legend and "MinIOPS (TC 1 × QD 1)" in legend
    table = page.text_content("#chart-demand-intensity-dirth table")
    assert units.significant(IOPS[(2, 4)]) in table and "TC 1 × QD 1" in table, table
    assert "its capture run" in page.text_content("#chart-dirth-histograms table")  # where each histogram comes from
    section.screenshot(path=str(ARTIFACTS / "drivepage-demand-intensity.png"))
    assert not problems
    context.close()


def test_compare_draws_each_drives_dirth_curve(live_server, browser):  # noqa: F811
    first = drive_with_dirth()
    second = factories.DriveModelFactory(name="Other NVMe 2TB", slug="other-2tb")
    submission = make_browse_submission(drive_model=second, firmware="FW1", generation=4)
    run = TestRun.objects.filter(submission=submission).first()
    dirth_run(submission=submission, drive_model=second, firmware=run.firmware, unit=run.unit, host=run.host)
    refresh_aggregates(drive_model=second)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/compare/?drives={first.slug},{second.slug}")
    page.locator("#chart-compare-dirth").scroll_into_view_if_needed()
    page.wait_for_selector("#chart-compare-dirth .js-plotly-plot .main-svg")
    points = page.eval_on_selector_all(
        "#chart-compare-dirth .scatterlayer .trace", "ts => ts.map(t => t.querySelectorAll('.point').length)"
    )
    assert points == [4, 4]
    legend = " ".join(
        page.eval_on_selector_all("#chart-compare-dirth .legend text", "ts => ts.map(t => t.textContent)")
    )
    assert "Acme NVMe 990 1TB" in legend and "Other NVMe 2TB" in legend
    context.close()
