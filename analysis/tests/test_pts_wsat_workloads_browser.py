"""The WSAT optional workloads section drawn with data in chromium: one chart per workload with its points, and the
table of each workload's stimulus, level, amount written and stop."""

from __future__ import annotations

import pytest

from analysis.services import refresh_aggregates
from analysis.tests import factories
from analysis.tests.conftest import make_browse_submission
from analysis.tests.test_pts_hirxsr_browser import ARTIFACTS, browser  # noqa: F401 -- the shared chromium fixture
from analysis.tests.wsat_workload_rows import workload_run

TB = 1_000_204_886_016


def facts(page, key: str) -> dict[str, str]:
    """The workload's table beside its chart, as the reader sees it (visible terms and values)."""
    assert page.is_visible(f"#chart-{key} dl.verdict")
    terms = page.eval_on_selector_all(f"#chart-{key} dl.verdict dt", "dts => dts.map(dt => dt.textContent)")
    values = page.eval_on_selector_all(f"#chart-{key} dl.verdict dd", "dds => dds.map(dd => dd.textContent)")
    return dict(zip(terms, values, strict=True))


def workloads_drive():
    drive = factories.DriveModelFactory(name="Acme NVMe 990 <b>1TB</b>", slug="acme-990-ws")
    submission = make_browse_submission(drive_model=drive)
    oltp = [80_000.0 / (1 + n / 10) for n in range(41)]  # the 41st sample passes 4x the capacity
    workload_run(submission=submission, drive_model=drive, test="ws-oltp", iops=oltp, written_per_sample=TB // 10)
    comp = [60_000.0, 50_000.0, None, 41_000.0, 40_000.0, 39_000.0]  # one sample without figures
    workload_run(submission=submission, drive_model=drive, test="ws-comp", iops=comp, written_per_sample=TB // 8)
    refresh_aggregates(drive_model=drive)
    return drive, oltp, comp


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_chromium_draws_each_workload_s_chart_with_its_points_and_shows_its_table(live_server, browser):  # noqa: F811
    drive, oltp, comp = workloads_drive()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{live_server.url}/drives/{drive.slug}/#test-wsat-workloads")
    for key in ("ws-oltp", "ws-comp"):
        page.wait_for_selector(f"#chart-{key} .js-plotly-plot .main-svg")
    drawn = page.eval_on_selector("#chart-ws-oltp", "c => c.querySelectorAll('.scatterlayer .point').length")
    assert drawn == len(oltp)
    drawn = page.eval_on_selector("#chart-ws-comp", "c => c.querySelectorAll('.scatterlayer .point').length")
    assert drawn == len(comp) - 1  # the sample without figures has no point
    plotted = page.evaluate("() => document.querySelector('#chart-ws-oltp .js-plotly-plot').data[0].y")
    assert plotted == [round(v) for v in oltp]
    axis = page.eval_on_selector("#chart-ws-oltp .js-plotly-plot", "c => c.textContent")
    assert "× the 1.00 TB (932 GiB) user capacity" in axis
    shown = facts(page, "ws-oltp")
    assert shown == {
        "Stimulus": "random 8 KiB, 65/35 R/W",
        "Samples": "41",
        "Level": f"{round(sum(oltp[-5:]) / 5):,} IOPS",
        "Level read as": "mean of the last 5 samples",
        "Written": "4.10 TB (3.73 TiB) (4.10× capacity)",
        "Stopped at": "4× capacity",
    }
    shown = facts(page, "ws-comp")
    assert shown["Stimulus"] == "random block-size mix, 40/60 R/W" and shown["Stopped at"] == "sample limit"
    assert shown["Level"] == f"{round((50_000 + 41_000 + 40_000 + 39_000) / 4):,} IOPS"  # one of the last 5 missing
    cells = page.eval_on_selector_all("#chart-ws-oltp table tbody td", "tds => tds.map(td => td.textContent)")
    assert cells[:3] == ["ws-oltp", "random 8 KiB, 65/35 R/W", "41"]  # the same in the table under Numbers
    page.locator("#test-wsat-workloads").screenshot(path=str(ARTIFACTS / "drivepage-wsat-workloads.png"))
    assert problems == []
    page.close()
