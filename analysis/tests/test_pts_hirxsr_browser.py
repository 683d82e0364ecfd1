"""The HIR and XSR sections of the drive page: in the HTML (Django test client) and drawn with data in chromium."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from analysis.models import HirWaitState, RecoveryPoint, XsrGroup
from analysis.services import refresh_aggregates
from analysis.tests import factories
from analysis.tests.conftest import make_browse_submission

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
IDLES = (5.0, 10.0, 15.0, 25.0, 50.0)


def recovery_drive():
    """A drive with a public submission holding a HIR and an XSR run (shapes of a real run, 12 bursts a state)."""
    drive = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    submission = make_browse_submission(drive_model=drive)
    common = {"submission": submission, "drive_model": drive}
    hir = factories.TestRunFactory(test="hir", **common)
    xsr = factories.TestRunFactory(test="xsr", threads=1, **common)
    t, points = 0.0, []
    for index, idle in enumerate(IDLES, start=1):
        ratio = 1.0 + 0.1 * index
        HirWaitState.objects.create(
            test_run=hir, index=index, idle_s=idle, burst_s=5.0, bursts_planned=12, bursts_measured=11,
            baseline_iops=40000.0, baseline_steady=True, recovery_iops=40000.0 * ratio, recovery_ratio=ratio,
            recovered=ratio > 1.2, return_iops=40100.0,
        )  # fmt: skip
        for burst in range(12):
            kind = "first" if burst == 0 else "burst"
            points.append(RecoveryPoint(test_run=hir, stage=index, kind=kind, t_s=t, value=40000.0 * ratio))
            t += 5 + idle
        for second in range(0, 60, 5):
            points.append(RecoveryPoint(test_run=hir, stage=index, kind="baseline", t_s=t + second, value=39000.0))
        t += 60
    t = 0.0
    for index, (pattern, size, level) in enumerate(
        ((("write", 1048576, 2e9)), ("randwrite", 8192, 4e8), ("write", 1048576, 1.8e9)), start=1
    ):
        XsrGroup.objects.create(
            test_run=xsr, index=index, pattern=pattern, block_size_bytes=size, runtime_s=100.0, interval_s=5.0,
            mean_bytes_per_s=level, final_bytes_per_s=level, recover_s=15.0 if index > 1 else 0.0, recovered=True,
        )  # fmt: skip
        for step in range(20):
            value = level * (0.5 if step < 3 and index > 1 else 1.0)
            points.append(RecoveryPoint(test_run=xsr, stage=index, kind="tp", t_s=t + 5 * step, value=value))
        t += 100
    RecoveryPoint.objects.bulk_create(points)
    refresh_aggregates(drive_model=drive)
    return drive


def figure(html: str, key: str) -> dict:
    found = re.search(rf'<script id="chart-{key}-data" type="application/json">(.*?)</script>', html, re.S)
    assert found, key
    return json.loads(found.group(1))


@pytest.mark.django_db
def test_the_drive_page_has_the_hir_and_xsr_sections_with_their_numbers(client):
    drive = recovery_drive()
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert 'id="test-hir"' in html and 'id="test-xsr"' in html
    over_time = figure(html, "hir-iops")
    shaded = [s for s in over_time["layout"]["shapes"] if s["type"] == "rect"]
    assert [s["label"]["text"] for s in shaded] == [f"{idle:g} s idle" for idle in IDLES]
    assert {t["name"] for t in over_time["data"]} == {"Bursts after host idle", "First burst (after writes)",
                                                       "Return to baseline"}  # fmt: skip
    recovery = figure(html, "hir-recovery")
    assert recovery["data"][0]["y"] == [1.1, 1.2, 1.3, 1.4, 1.5]
    throughput = figure(html, "xsr-throughput")
    assert len(throughput["data"]) == 3
    assert [a["text"] for a in throughput["layout"]["annotations"]] == [
        "settled after 0 s",
        "settled after 15 s",
        "settled after 15 s",
    ]


@pytest.mark.django_db
def test_a_drive_without_recovery_runs_has_no_such_sections(client):
    drive = factories.DriveModelFactory(slug="plain-drive")
    make_browse_submission(drive_model=drive)
    refresh_aggregates(drive_model=drive)
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert 'id="test-hir"' not in html and 'id="test-xsr"' not in html


@pytest.fixture(scope="module")
def browser():
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_chromium_draws_the_hir_and_xsr_charts_with_data(live_server, browser):
    drive = recovery_drive()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{live_server.url}/drives/{drive.slug}/#test-hir")  # a link to a collapsed section opens it
    page.click("#test-xsr > summary")  # and a click opens another
    for key in ("hir-iops", "hir-recovery", "xsr-throughput"):
        page.wait_for_selector(f"#chart-{key} .js-plotly-plot .main-svg")
    markers = page.eval_on_selector("#chart-hir-iops", "c => c.querySelectorAll('.scatterlayer .point').length")
    assert markers == 5 * 12  # every burst drawn
    shaded = page.eval_on_selector("#chart-hir-iops", "c => c.querySelectorAll('.shapelayer path').length")
    assert shaded >= 5
    bars = page.eval_on_selector("#chart-hir-recovery", "c => c.querySelectorAll('.barlayer .point').length")
    assert bars == 5
    lines = page.eval_on_selector("#chart-xsr-throughput", "c => c.querySelectorAll('.scatterlayer .trace').length")
    assert lines == 3
    text = page.eval_on_selector("#chart-xsr-throughput", "c => c.textContent")
    assert "settled after 15 s" in text
    page.locator("#test-hir").screenshot(path=str(ARTIFACTS / "drivepage-hir.png"))
    page.locator("#test-xsr").screenshot(path=str(ARTIFACTS / "drivepage-xsr.png"))
    assert problems == []
    page.close()
