"""The formatting layer as a reader sees it in chromium: log axes labelled at decades only, with units; the compare
picker works without JavaScript."""

from __future__ import annotations

import re

import pytest

from analysis.tests.test_browse_browser import ARTIFACTS, browser, page, svg_texts, two_drives  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_log_axes_show_decade_labels_only(live_server, page):  # noqa: F811
    two_drives()
    page.goto(live_server.url + "/drives/acme-990-1tb/")
    page.click("#test-lat > summary")  # the latency section is collapsed: opening it draws its charts
    page.wait_for_selector("#chart-latency .js-plotly-plot .ytick")
    for chart in ("#chart-iops", "#chart-latency"):
        labels = [t for t in svg_texts(page, f"{chart} .ytick text") if t.strip()]
        assert labels, chart
        for label in labels:
            assert re.fullmatch(r"(1|10|100)(k|M)? IOPS|(1|10|100) (ns|µs|ms|s)", label), (chart, label)
        assert len(labels) >= 2, (chart, labels)  # the axis spans whole decades
    page.locator("#chart-latency").screenshot(path=str(ARTIFACTS / "format-latency-axis.png"))


def test_the_compare_picker_works_without_javascript(live_server, browser):  # noqa: F811
    two_drives()
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()  # noqa: F811
    response = page.goto(live_server.url + "/compare/?drives=acme-990-1tb")
    assert response.status == 200
    page.screenshot(path=str(ARTIFACTS / "format-compare-picker.png"), full_page=True)
    page.check('input[type="checkbox"][value="other-2tb"]')
    page.click("text=Compare the ticked drives")
    assert "drives=acme-990-1tb&drives=other-2tb" in page.url
    assert page.locator("table.headline.compare").count() == 1
    context.close()
