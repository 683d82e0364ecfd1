"""The browse pages in a real browser (Debian's chromium through Playwright) against the live test server.

One browser per module; each page is checked for drawn charts and for console errors, and screenshotted into
test-artifacts/ at the repository root.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analysis.services import refresh_aggregates
from analysis.tests import factories
from analysis.tests.conftest import HOSTILE_NAME, make_browse_submission

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def browser():
    # Playwright's sync API runs an event loop in this thread; Django's ORM calls made by the test are still sync.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        yield browser
        browser.close()


def watched_page(context):
    """A new page of `context` whose console errors and uncaught exceptions collect in `page.problems`."""
    page = context.new_page()
    page.problems = []
    page.on("console", lambda message: message.type == "error" and page.problems.append(message.text))
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    return page


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = watched_page(context)
    page.dialogs = []

    def on_dialog(dialog):
        page.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    yield page
    context.close()


def drawn_traces(page) -> int:
    return page.locator(".js-plotly-plot .scatterlayer .trace, .js-plotly-plot .barlayer .trace, "
                        ".js-plotly-plot .boxlayer .trace").count()  # fmt: skip


def svg_texts(page, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "elements => elements.map(e => e.textContent)")


def open_every_section(page) -> None:
    """Open every collapsed section of a drive page (only the first test's is open) and wait until each chart in
    them is drawn: a chart is drawn when its section opens."""
    page.eval_on_selector_all("details.test-section:not([open])", "all => all.forEach(d => { d.open = true; })")
    page.wait_for_function(
        "document.querySelectorAll('.js-plotly-plot').length === document.querySelectorAll('[data-figure]').length"
    )


def two_drives():
    first = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    submission = make_browse_submission(drive_model=first, firmware="FW1", generation=3, scale=0.9)
    make_browse_submission(drive_model=first, firmware="FW2", generation=4)
    second = factories.DriveModelFactory(name="Other SSD 2TB", slug="other-2tb", capacity_bytes=2_000_398_934_016)
    make_browse_submission(drive_model=second, scale=1.3)
    for drive in (first, second):
        refresh_aggregates(drive_model=drive)
    return first, second, submission


def test_the_pages_work_in_a_browser(live_server, page):
    first, second, submission = two_drives()

    page.goto(live_server.url + "/")
    assert page.locator("#count-drives").inner_text() == "2"
    page.screenshot(path=str(ARTIFACTS / "browse-home.png"), full_page=True)

    page.goto(live_server.url + "/drives/")
    page.fill("input[name=capacity_min_gb]", "1500")
    page.click("form.filters button[type=submit]")
    page.wait_for_load_state()
    assert "capacity_min_gb=1500" in page.url
    assert page.locator("table.drive-list tbody tr").count() == 1
    assert page.locator("table.drive-list tbody").inner_text().strip().startswith("Other SSD 2TB")
    page.screenshot(path=str(ARTIFACTS / "browse-drive-list.png"), full_page=True)

    page.goto(live_server.url + "/drives/acme-990-1tb/")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    figures = page.locator("[data-figure]").count()
    assert figures >= 10
    assert 0 < page.locator(".js-plotly-plot").count() < figures  # the open section's charts, the others on opening
    open_every_section(page)
    assert page.locator(".js-plotly-plot").count() == figures  # every chart was drawn
    assert drawn_traces(page) > figures
    assert page.locator("details.numbers[open]").count() == 0  # tables fold away once the chart is there
    page.screenshot(path=str(ARTIFACTS / "browse-drive.png"), full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.goto(live_server.url + "/drives/acme-990-1tb/")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    wide = page.evaluate(
        "Array.from(document.querySelectorAll('body, body > *, main > *, main > * > *, .chart > *')).map(e => e.tagName + '.' + "
        "e.className + '#' + e.id + ' ' + e.scrollWidth + '/' + e.clientWidth).filter(t => { const p = t.split(' ').pop().split('/'); return +p[0] > +p[1]; })"
    )
    assert overflow <= 1, wide
    page.screenshot(path=str(ARTIFACTS / "browse-drive-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})

    page.goto(live_server.url + "/drives/")
    page.check("input[name=drives][value=acme-990-1tb]")
    page.check("input[name=drives][value=other-2tb]")
    page.click("#compare-form button[type=submit]")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    assert "/compare/?drives=acme-990-1tb&drives=other-2tb" in page.url
    assert drawn_traces(page) >= 4
    assert "Other SSD 2TB" in page.locator("table.compare thead").inner_text()
    page.screenshot(path=str(ARTIFACTS / "browse-compare.png"), full_page=True)

    page.goto(live_server.url + f"/submissions/{submission.pk}/")
    assert "Test runs" in page.content()
    page.locator("details.round").first.locator("summary").click()
    assert page.locator("details.round table").first.is_visible()
    page.screenshot(path=str(ARTIFACTS / "browse-submission.png"), full_page=True)

    no_js = page.context.browser.new_context(java_script_enabled=False)
    plain = no_js.new_page()
    plain.goto(live_server.url + "/drives/acme-990-1tb/")
    elsewhere = plain.locator(".numbers-elsewhere").count()  # the IOPS matrix links to the 2D plot's table
    assert elsewhere == 1
    assert plain.locator("details.numbers[open] table").count() == figures - elsewhere  # every chart's numbers
    plain.screenshot(path=str(ARTIFACTS / "browse-drive-no-js.png"), full_page=False)
    no_js.close()

    page.goto(live_server.url + "/methodology/")
    assert page.locator("h2#steady-state").is_visible()
    assert page.problems == []


def test_a_hostile_drive_name_stays_text_in_pages_and_charts(live_server, page):
    first, second, _ = two_drives()
    first.name = HOSTILE_NAME
    first.save()
    make_browse_submission(drive_model=first, firmware="<b>FW</b><img src=x onerror=alert(2)>")
    refresh_aggregates(drive_model=first)

    for path in ("/", "/drives/", "/drives/acme-990-1tb/", "/compare/?drives=acme-990-1tb,other-2tb"):
        page.goto(live_server.url + path)
        page.wait_for_load_state("load")
        if path != "/drives/" and path != "/":
            page.wait_for_selector(".js-plotly-plot .main-svg")
        assert page.get_by_text(HOSTILE_NAME).count() >= 1, path
    assert page.locator("script:not([src]):not([type='application/json'])").count() == 0
    legend = svg_texts(page, ".js-plotly-plot .legendtext")
    assert any("<script>alert(1)</script>" in text for text in legend)  # shown literally in the chart legend
    page.goto(live_server.url + "/drives/acme-990-1tb/")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    open_every_section(page)  # the firmware breakdown is in a collapsed section
    ticks = " ".join(svg_texts(page, ".js-plotly-plot .xtick text"))
    assert "<b>FW</b><img src=x onerror=alert(2)>" in ticks
    assert page.dialogs == []
    assert page.problems == []
    page.screenshot(path=str(ARTIFACTS / "browse-hostile-name.png"), full_page=True)


def test_a_breakdown_box_draws_every_units_point_at_its_own_level(live_server, page):
    drive = factories.DriveModelFactory(name="Box NVMe 1TB", slug="box-1tb")
    for firmware, units in (("FWA", 3), ("FWB", 2)):
        for _ in range(units):
            make_browse_submission(drive_model=drive, firmware=firmware)
    refresh_aggregates(drive_model=drive)

    page.goto(live_server.url + "/drives/box-1tb/")
    page.wait_for_selector(".js-plotly-plot .main-svg")
    open_every_section(page)
    chart = page.locator("#chart-by-firmware-iops_4k_read .js-plotly-plot")
    assert chart.count() == 1
    boxes = chart.first.evaluate(
        "plot => plot._fullData.map(t => ({type: t.type, x0: t.x0, n: t.y.length, drawn: t.name}))"
    )
    assert boxes == [
        {"type": "box", "x0": "FWA", "n": 3, "drawn": "FWA"},
        {"type": "box", "x0": "FWB", "n": 2, "drawn": "FWB"},
    ]
    points = chart.first.evaluate(  # each point drawn at its box's category on the axis (0: FWA, 1: FWB)
        "plot => plot.calcdata.map(trace => trace[0].pts.map(p => Math.round(p.x)))"
    )
    assert points == [[0, 0, 0], [1, 1]]
    assert svg_texts(page, "#chart-by-firmware-iops_4k_read .xtick text") == ["FWA", "FWB"]
    assert page.problems == []
