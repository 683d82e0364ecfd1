"""The compare page's PTS sections and the surface apart, in a real browser (chromium through Playwright): each new
chart drawn with data for two drives."""

from __future__ import annotations

import pytest

from analysis.services import refresh_aggregates
from analysis.tests.compare_pts_rows import IDLES, WSAT_IOPS, drive_with_every_test
from analysis.tests.factories_dirth import CELLS
from analysis.tests.test_browse_browser import ARTIFACTS, browser  # noqa: F401 -- the module's shared browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MARKS = {
    "compare-hir": ".scatterlayer .trace .point",
    "compare-ecw": ".scatterlayer .trace .point",
    "compare-dirth": ".scatterlayer .trace .point",
    "compare-wsat-workloads": ".barlayer .trace .point path",
    "compare-surface": ".barlayer .trace .point path",
}
PER_TRACE = {"compare-hir": len(IDLES), "compare-ecw": len(CELLS), "compare-dirth": len(CELLS),
             "compare-wsat-workloads": len(WSAT_IOPS), "compare-surface": 4}  # fmt: skip


def test_each_new_compare_chart_is_drawn_with_data_for_two_drives(live_server, browser):  # noqa: F811
    first = drive_with_every_test("Acme NVMe 990 1TB", "acme-990-1tb")
    second = drive_with_every_test("Other NVMe 2TB", "other-2tb", scale=0.6)
    for drive in (first, second):
        refresh_aggregates(drive_model=drive)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.goto(f"{live_server.url}/compare/?drives={first.slug},{second.slug}")
    for key in (*MARKS, "compare-xsr"):
        page.locator(f"#chart-{key}").scroll_into_view_if_needed()
        page.wait_for_selector(f"#chart-{key} .js-plotly-plot .main-svg")
        legend = page.eval_on_selector_all(f"#chart-{key} .legend text", "ts => ts.map(t => t.textContent)")
        assert "Acme NVMe 990 1TB" in legend and "Other NVMe 2TB" in legend, (key, legend)
    for key, selector in MARKS.items():
        drawn = page.eval_on_selector_all(
            f"#chart-{key} .trace", f"ts => ts.map(t => t.querySelectorAll('{selector.split('.trace ')[1]}').length)"
        )
        assert drawn == [PER_TRACE[key], PER_TRACE[key]], (key, drawn)
    lines = page.eval_on_selector_all(
        "#chart-compare-xsr .scatterlayer .trace .js-line", "ls => ls.map(l => l.getAttribute('d').split('L').length)"
    )
    assert len(lines) == 6 and min(lines) >= 2, (
        lines
    )  # per drive, one line per access group (plotly merges collinear steps)
    assert "1.20 recovery threshold" in page.text_content("#chart-compare-hir .js-plotly-plot")
    surface = page.locator("#compare-surface")
    assert "nvmedb extension, not part of the PTS" in surface.locator("h2").inner_text()
    page.locator("#compare-pts").screenshot(path=str(ARTIFACTS / "compare-pts.png"))
    surface.screenshot(path=str(ARTIFACTS / "compare-surface.png"))
    assert not problems
    context.close()
