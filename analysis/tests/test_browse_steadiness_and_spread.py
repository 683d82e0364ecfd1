"""Headlines and chart titles say "steady-state window mean" only for steady windows; spread needs two units."""

from __future__ import annotations

import re

from analysis.headline import BY_KEY, LAST_ROUNDS_MEAN, STEADY_WINDOW_MEAN, window_label
from analysis.models import DriveModelAggregate, TestRun
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from analysis.tests.test_browse_pages import embedded_figures
from reports import units


def _page(client, slug: str) -> str:
    response = client.get(f"/drives/{slug}/")
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


def _headline_rows(html: str) -> str:
    """The headline table's body (the fixtures measure six of the seven headlines: not 64 KiB 65/35)."""
    start = html.index("<tbody>", html.index('id="headline"'))
    return html[start : html.index("</table>", start)]


def test_window_label_claims_a_steady_window_only_when_every_run_had_one():
    assert window_label(3, 3) == STEADY_WINDOW_MEAN
    assert window_label(0, 3) == LAST_ROUNDS_MEAN == "mean of the last 5 rounds, not steady"
    assert window_label(0, 0) == LAST_ROUNDS_MEAN
    mixed = window_label(1, 3)
    assert mixed.startswith("1 of 3 runs steady") and LAST_ROUNDS_MEAN in mixed


def test_steady_runs_are_labelled_steady_state_window_means(client, browse_drive):
    html = _page(client, browse_drive.slug)
    assert _headline_rows(html).count(STEADY_WINDOW_MEAN) == 6
    assert "not steady" not in html
    titles = [f["layout"]["title"]["text"] for f in embedded_figures(html)]
    assert titles  # the figures' own titles name no window; the captions do
    assert f"IOPS by block size, one line per R/W mix ({STEADY_WINDOW_MEAN})" in html
    assert f"IOPS matrix: block size × R/W mix ({STEADY_WINDOW_MEAN})" in html


def test_runs_that_never_reached_steady_state_are_labelled_as_their_last_rounds(client, browse_drive):
    TestRun.objects.filter(drive_model=browse_drive).update(steady=False, steady_round=None)
    refresh_and_summarise(drive_model=browse_drive)  # a new data version: nothing cached is reused
    html = _page(client, browse_drive.slug)
    assert STEADY_WINDOW_MEAN not in html
    assert _headline_rows(html).count(LAST_ROUNDS_MEAN) == 6
    assert f"IOPS by block size, one line per R/W mix ({LAST_ROUNDS_MEAN})" in html
    assert f"Each block size: {LAST_ROUNDS_MEAN}." in html
    assert f"Total latency (submission + completion) of the worst direction ({LAST_ROUNDS_MEAN}); log scale." in html


def test_a_drive_with_steady_and_unsteady_runs_says_how_many_were_steady(client, browse_drive):
    first = TestRun.objects.filter(drive_model=browse_drive).order_by("submission__created").first().submission
    TestRun.objects.filter(submission=first, test="iops").update(steady=False)
    refresh_and_summarise(drive_model=browse_drive)
    rows = _headline_rows(_page(client, browse_drive.slug))
    assert rows.count("1 of 2 runs steady (window mean)") == 2  # the IOPS headlines
    assert rows.count(STEADY_WINDOW_MEAN) == 4  # throughput and latency stay steady


def test_one_unit_shows_no_spread_but_the_unit_and_sample_badge(client, db):
    drive = factories.DriveModelFactory(name="Lonely SSD", slug="lonely")
    make_browse_submission(drive_model=drive)
    refresh_and_summarise(drive_model=drive)
    rows = _headline_rows(_page(client, drive.slug))
    assert "IQR" not in rows and "(0%)" not in rows
    assert rows.count('<span class="spread-none">1 unit</span>') == 6
    assert rows.count('class="badge badge-single"') == 6

    listed = client.get("/drives/").content.decode()
    listed = listed[listed.index("<tbody>") :]
    assert "IQR" not in listed and 'title="No spread from a single unit">1 unit</span>' in listed
    assert re.search(r'class="badge badge-single"[^>]*>n=1<', listed)


def test_two_units_show_the_interquartile_range(client, browse_drive):
    rows = _headline_rows(_page(client, browse_drive.slug))
    assert "spread-none" not in rows and rows.count("%)") == 6
    cell = units.headline_cell(
        BY_KEY["iops_4k_read"],
        DriveModelAggregate.objects.get(drive_model=browse_drive, metric="iops_4k_read", factor="all"),
    )
    assert cell["spread_shown"] and cell["spread"] == cell["iqr"] and "IQR" in cell["html"]


def test_a_factor_level_with_one_unit_is_a_point_not_a_flat_box(client, db):
    drive = factories.DriveModelFactory(name="Two on FW1", slug="two-fw1")
    for _ in range(2):
        make_browse_submission(drive_model=drive, firmware="FW1", generation=4)
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    refresh_and_summarise(drive_model=drive)
    figures = embedded_figures(client.get(f"/drives/{drive.slug}/").content.decode())
    by_firmware = next(f for f in figures if f["layout"]["title"]["text"].endswith("by firmware"))
    kinds = {trace["name"]: trace["type"] for trace in by_firmware["data"]}
    assert kinds == {"FW1": "box", "FW2": "scatter"}
    lone = next(t for t in by_firmware["data"] if t["type"] == "scatter")
    assert lone["mode"] == "markers" and len(lone["y"]) == 1 and lone["text"] == ["1 unit: no spread"]
