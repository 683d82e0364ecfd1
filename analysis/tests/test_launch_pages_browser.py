"""The pages a person reads, at 1400×900 in chromium, with the launch drives: the two Toshiba HG6 SATA drives of the
SSSPT samples, one imported IOPS, throughput and latency run each (the RockPro64 128 GB and the HP 256 GB), imported
through the importer as the site imports them.

Each drive page is at most 5,000 px tall with every section still reachable: a collapsed section draws its chart
when opened, a link in the page's list of sections opens its section. /methodology/ has a table of contents whose
links jump to the per-test sections; /datasets/ folds each table's columns. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from analysis.models import DriveModel
from analysis.services import refresh_aggregates
from analysis.tests.surface_factory import surface_run
from analysis.tests.test_browse_browser import ARTIFACTS, browser, watched_page  # noqa: F401 -- the module's shared browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1400, "height": 900}
MAX_HEIGHT = 5000
# one run of each test per drive (ssspt-more/README.md: the rockpro64 folders hold both drives' runs)
LAUNCH_RUNS = (
    "ssspt-more/rockpro64/iops/2",
    "ssspt-more/rockpro64/lat/2",
    "ssspt-more/rockpro64/throughput/2",
    "ssspt-hp-iops-1",
    "ssspt-more/hp/lat/1",
    "ssspt-more/hp/throughput/1",
)
LAUNCH_SLUGS = ("toshiba-hg6-thnsnj128g8nu-128gb", "toshiba-hg6-thnsnj256g8nu-256gb")


@pytest.fixture
def launch_drives(shared_samples) -> list[DriveModel]:
    for run in LAUNCH_RUNS:
        if not (shared_samples / run).is_dir():
            pytest.skip(f"{run} is not in the shared samples")
        call_command("import_tree", str(shared_samples / run), "--json", stdout=StringIO())
    drives = list(DriveModel.objects.filter(slug__in=LAUNCH_SLUGS).order_by("slug"))
    assert [d.slug for d in drives] == list(LAUNCH_SLUGS)
    return drives


@pytest.fixture
def page(browser):  # noqa: F811
    context = browser.new_context(viewport=VIEWPORT)
    page = watched_page(context)
    yield page
    context.close()


def height(page) -> int:
    return page.evaluate("document.documentElement.scrollHeight")


def test_each_launch_drive_page_fits_in_5000_px_and_every_section_opens(live_server, page, launch_drives):
    for drive in launch_drives:
        page.goto(f"{live_server.url}/drives/{drive.slug}/")
        page.wait_for_selector("#test-iops .js-plotly-plot .main-svg")  # the first section is open and drawn
        page.screenshot(path=str(ARTIFACTS / f"launch-{drive.slug}.png"), full_page=True)
        assert height(page) <= MAX_HEIGHT, (drive.slug, height(page))
        assert "none PTS-compliant" in page.inner_text(".subtitle")  # imported runs are not PTS results

        # a collapsed section: its chart is drawn when a reader opens it
        throughput = page.locator("#test-tp")
        assert throughput.get_attribute("open") is None
        assert not page.locator("#chart-throughput .plot").is_visible()
        page.click("#test-tp > summary")
        page.wait_for_selector("#chart-throughput .js-plotly-plot .main-svg")
        assert page.locator("#chart-throughput .plot").is_visible()
        assert page.locator("#chart-throughput .js-plotly-plot .barlayer .trace").count() == 2  # read, write

        # the page's list of sections opens the one it links to
        page.click('nav.page-sections a[href="#test-lat"]')
        page.wait_for_selector("#chart-latency .js-plotly-plot .main-svg")
        assert page.locator("#test-lat").get_attribute("open") is not None

        # everything stays reachable: with every section open, every chart is drawn
        page.eval_on_selector_all("details.test-section:not([open])", "all => all.forEach(d => { d.open = true; })")
        page.wait_for_function(
            "document.querySelectorAll('.js-plotly-plot').length === document.querySelectorAll('[data-figure]').length"
        )
        assert page.locator("#steady-detail select option").count() > 12  # every tracking variable
        page.screenshot(path=str(ARTIFACTS / f"launch-{drive.slug}-open.png"), full_page=True)
    assert page.problems == []


def test_a_launch_drive_with_a_surface_run_links_its_surface_page_from_the_first_screen_within_5000_px(
    live_server, page, launch_drives
):
    """The surface (nvmedb extension) adds one sentence per pattern and a link to the first screen; its plots are on
    the surface page, so the drive page stays short."""
    drive = launch_drives[0]
    run = drive.test_runs.order_by("pk").first()
    surface_run(**{key: getattr(run, key) for key in ("submission", "drive_model", "firmware", "unit", "host")})
    refresh_aggregates(drive_model=drive)
    page.goto(f"{live_server.url}/drives/{drive.slug}/")
    page.wait_for_selector("#test-iops .js-plotly-plot .main-svg")
    link = page.locator("#surface-page-link")
    box = link.bounding_box()
    assert box and box["y"] + box["height"] <= VIEWPORT["height"], box  # on the first screen
    assert page.locator("#surface-summary li.surface-answer").count() == 4
    page.screenshot(path=str(ARTIFACTS / f"launch-{drive.slug}-surface.png"), full_page=True)
    assert height(page) <= MAX_HEIGHT, height(page)
    link.click()
    page.wait_for_url(f"**/drives/{drive.slug}/surface/")
    page.wait_for_selector("#chart-surface-bw-by-bs .js-plotly-plot .main-svg")
    assert page.locator("#surface-answers li.surface-answer").count() == 4
    assert page.problems == []


def test_the_methodology_contents_jump_to_each_test_section(live_server, page):
    page.goto(f"{live_server.url}/methodology/")
    page.screenshot(path=str(ARTIFACTS / "launch-methodology.png"), full_page=True)
    assert height(page) <= MAX_HEIGHT  # folded: headings and the contents only
    links = page.locator("#toc-tests a")
    targets = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert {"#iops-test", "#throughput-test", "#latency-test", "#write-saturation-wsat"} <= set(targets)
    for target in targets:  # each link names a heading of the page
        assert page.locator(f"h2{target}").count() == 1, target
    page.click('#toc-tests a[href="#throughput-test"]')
    section = page.locator("#section-throughput-test")
    page.wait_for_function("() => document.getElementById('section-throughput-test').open")
    heading = page.locator("h2#throughput-test").bounding_box()
    assert -2 <= heading["y"] < VIEWPORT["height"] / 2, heading  # jumped there (to within a subpixel)
    assert section.locator(":scope > :not(summary)").first.is_visible()  # and the section's text is shown
    assert "TC 1 / QD 32" in section.inner_text()
    assert page.locator("#section-iops-test").get_attribute("open") is None  # the others stay folded
    # a link from another page into a folded section opens it
    page.goto(f"{live_server.url}/methodology/#steady-state")
    page.wait_for_function("() => document.getElementById('section-steady-state').open")
    assert page.locator("#section-steady-state > :not(summary)").first.is_visible()
    assert page.problems == []


def test_the_datasets_page_folds_each_tables_columns(live_server, page):
    page.goto(f"{live_server.url}/datasets/")
    page.screenshot(path=str(ARTIFACTS / "launch-datasets.png"), full_page=True)
    assert height(page) <= MAX_HEIGHT
    assert not page.locator("#columns-runs table").is_visible()
    page.click('#toc a[href="#table-runs"]')
    page.click("#columns-runs > summary")
    assert page.locator("#columns-runs table").is_visible()
    assert "compliant" in page.inner_text("#columns-runs table")
    assert page.problems == []
