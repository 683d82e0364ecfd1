"""The drive page in a real browser (chromium through Playwright): an imported multi-round SSSPT run and client
runs. The first 1400×900 viewport holds identity, headlines and what explains the spread; no chart legend has more
than 12 entries; no raw tracking-variable id is visible; the variable picker works with and without JS.
Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from analysis.models import DriveModel, TestRun
from analysis.services import refresh_aggregates
from analysis.tests import factories
from analysis.tests.conftest import make_browse_submission
from analysis.tests.test_browse_browser import ARTIFACTS, browser, watched_page  # noqa: F401 -- the module's shared browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1400, "height": 900}
RAW_ID = re.compile(r"\b(?:iops|tp|lat|wsat)\.[a-z_]+\.rw\d{3}\.bs\d+\b")
MAX_LEGEND = 12


@pytest.fixture
def page(browser):  # noqa: F811
    context = browser.new_context(viewport=VIEWPORT)
    page = watched_page(context)
    yield page
    context.close()


def imported_drive(shared_samples) -> DriveModel:
    call_command("import_results", str(shared_samples / "ssspt-hp-iops-1"), "--format", "ssspt", "--json")
    run = TestRun.objects.select_related("drive_model").get()
    return run.drive_model


def client_drive() -> DriveModel:
    drive = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=3, scale=0.6)
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    TestRun.objects.filter(drive_model=drive, firmware__revision="FW2").update(overprovisioning=0.2188)
    TestRun.objects.filter(drive_model=drive, firmware__revision="FW1").update(overprovisioning=0.0)
    DriveModel.objects.filter(pk=drive.pk).update(
        spec_seq_read_bytes_per_s=7.4e9,
        spec_seq_write_bytes_per_s=6.9e9,
        spec_rand_read_iops=1.2e6,
        spec_rand_write_iops=1.55e6,
        spec_source_url="https://example.org/spec",
    )  # the spec-sheet table must fit on the first screen too
    refresh_aggregates(drive_model=drive)
    return drive


def assert_reads_top_down(page, name: str) -> None:
    page.wait_for_selector(".js-plotly-plot .main-svg")
    page.screenshot(path=str(ARTIFACTS / f"drivepage-{name}-first-screen.png"))
    for selector in (
        "#drive-name",
        "#identity-section dl.facts",
        "#headline-section table.headline",
        "#spec-sheet",
        "#factors-section",
    ):
        box = page.locator(selector).bounding_box()
        assert box is not None, selector
        assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], (selector, box)
    legends = page.eval_on_selector_all(
        ".js-plotly-plot", "plots => plots.map(p => p.querySelectorAll('.legend .traces').length)"
    )
    assert legends and max(legends) <= MAX_LEGEND, legends
    visible = page.inner_text("body") + " ".join(
        page.eval_on_selector_all(".js-plotly-plot text", "texts => texts.map(t => t.textContent)")
    )
    assert not RAW_ID.search(visible), RAW_ID.search(visible).group(0)
    page.screenshot(path=str(ARTIFACTS / f"drivepage-{name}.png"), full_page=True)
    assert page.problems == []


def test_the_imported_multi_round_run_reads_top_down(live_server, page, shared_samples):
    drive = imported_drive(shared_samples)
    page.goto(f"{live_server.url}/drives/{drive.slug}/")
    assert_reads_top_down(page, "imported")
    page.click("#steady-detail > summary")  # collapsed until opened: its chart is drawn then
    page.wait_for_selector("#steady-detail .js-plotly-plot .main-svg")
    assert page.locator("#steady-detail figure.chart").count() == 1  # one chart, whatever the number of variables
    options = page.locator("#steady-detail select option")
    assert options.count() > MAX_LEGEND
    first_title = page.locator("#steady-detail figure h3").inner_text()
    value = options.nth(options.count() - 1).get_attribute("value")
    page.select_option("#steady-detail select", value)
    page.wait_for_function(
        "title => document.querySelector('#steady-detail figure h3').textContent !== title", arg=first_title
    )
    page.wait_for_selector("#steady-detail .js-plotly-plot .main-svg")
    assert "variable=" in page.url
    assert not RAW_ID.search(page.inner_text("#steady-detail"))
    page.screenshot(path=str(ARTIFACTS / "drivepage-imported-picked-variable.png"), full_page=False)


def test_the_client_runs_read_top_down_and_explain_their_spread(live_server, page):
    drive = client_drive()
    page.goto(f"{live_server.url}/drives/{drive.slug}/")
    assert_reads_top_down(page, "client")
    factors_text = page.inner_text("#factors-section")  # two units: a sentence naming what they differ in
    assert "too few to tell the effects of the conditions apart" in factors_text
    assert "firmware" in factors_text and "spare ÷ user capacity" in factors_text
    assert page.locator("#namespace-below-capacity").is_visible()


def test_the_variable_picker_works_without_javascript(live_server, browser):  # noqa: F811
    drive = client_drive()
    context = browser.new_context(viewport=VIEWPORT, java_script_enabled=False)
    plain = context.new_page()
    plain.goto(f"{live_server.url}/drives/{drive.slug}/")
    plain.click("#steady-detail > summary")  # a <details> opens without JS
    labels = plain.locator("#steady-detail select option").all_inner_texts()
    assert len(labels) >= 2 and not any(RAW_ID.search(label) for label in labels)
    last = plain.locator("#steady-detail select option").nth(len(labels) - 1)
    plain.select_option("#steady-detail select", last.get_attribute("value"))
    plain.click("#steady-detail button[type=submit]")
    plain.wait_for_load_state()
    assert "variable=" in plain.url
    assert labels[-1] in plain.locator("#steady-detail figure h3").inner_text()
    plain.screenshot(path=str(ARTIFACTS / "drivepage-no-js-picked-variable.png"), full_page=False)
    context.close()
