"""Under the site's Content-Security-Policy, the drive pages still draw their charts and the API docs still load:
the browser reports no refused script or style."""

from __future__ import annotations

import pytest

from analysis.tests.test_browse_browser import browser, drawn_traces, page, two_drives  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_drive_pages_draw_their_charts_under_the_content_security_policy(live_server, page, settings):  # noqa: F811
    two_drives()
    response = page.goto(live_server.url + "/drives/acme-990-1tb/")
    policy = response.headers["content-security-policy"]
    assert policy == settings.NVMEDB_CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in policy
    page.wait_for_selector(".js-plotly-plot .main-svg")
    assert drawn_traces(page) > 0
    page.goto(live_server.url + "/compare/?drives=acme-990-1tb&drives=other-2tb")
    assert page.problems == [], page.problems


def test_the_api_docs_load_under_the_content_security_policy(live_server, page):  # noqa: F811
    response = page.goto(live_server.url + "/api/docs/")
    assert "content-security-policy" in response.headers
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    assert page.problems == [], page.problems


def test_sign_in_sign_up_and_admin_pages_work_under_the_content_security_policy(live_server, page):  # noqa: F811
    for path in ("/accounts/login/", "/signup/", "/admin/login/", "/methodology/", "/datasets/releases/"):
        response = page.goto(live_server.url + path)
        assert response.status == 200, path
        assert "content-security-policy" in response.headers
    assert page.problems == [], page.problems
