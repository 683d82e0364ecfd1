"""A new contributor's real trial (the quick profile on a file target, real fio: conftest's `real_bundle_file`) on its
page in a real browser (chromium through Playwright), as its owner sees it: the drive page's plotly charts are drawn,
no raw tracking-variable id is visible, and nothing calls the file a drive. Screenshots go to test-artifacts/."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.test import Client

from analysis.tests.test_browse_browser import ARTIFACTS, browser, drawn_traces, svg_texts, watched_page  # noqa: F401
from analysis.tests.test_trial_pages import RAW_ID, submit

pytestmark = [pytest.mark.browser, pytest.mark.fio, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def owner_page(browser, newcomer, live_server):  # noqa: F811
    """A browser page signed in as `newcomer` (the session cookie of a test client's login)."""
    signed_in = Client()
    signed_in.force_login(newcomer)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    cookie = signed_in.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}])
    page = watched_page(context)
    yield page
    context.close()


def test_the_owner_sees_the_charts_of_their_trial_drawn_with_readable_labels(
    live_server, owner_page, newcomer, real_bundle_file, tmp_path
):
    trial = submit(newcomer, real_bundle_file, tmp_path)
    assert trial.status == "published", trial.report

    owner_page.goto(f"{live_server.url}/submissions/{trial.pk}/")
    owner_page.wait_for_selector("#test-tp .js-plotly-plot .main-svg")
    owner_page.wait_for_selector("#test-lat .js-plotly-plot .main-svg")
    plots = owner_page.locator(".plot[data-figure]").count()
    assert plots >= 4 and owner_page.locator(".js-plotly-plot").count() == plots, "every chart is drawn"
    assert drawn_traces(owner_page) >= plots
    labels = svg_texts(owner_page, ".js-plotly-plot text")
    assert "write throughput, 1 MiB, 0/100 R/W" in labels, labels
    visible = owner_page.inner_text("body") + " ".join(labels)
    assert not RAW_ID.search(visible), RAW_ID.search(visible).group(0)
    assert "Unknown drive" not in visible and "nothing amiss" not in visible
    assert re.search(r"measured a file\s+on the host's file system", owner_page.inner_text("#trial-notice"))
    owner_page.screenshot(path=str(ARTIFACTS / "trial-page-owner.png"), full_page=True)
    assert owner_page.problems == []
