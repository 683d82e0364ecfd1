"""The compare page's PTS sections (HIR, XSR, ECW, DIRTH, WSAT workloads) and the surface kept apart, on factory
rows: a drive with each test beside one without, a HIR with a missing wait state, a surface with no knee."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.models import SurfacePattern
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.compare_pts_rows import (
    IDLES,
    WSAT_IOPS,
    drive_with_every_test,
    hir_ratio,
    hir_run,
    wsat_workload_run,
    xsr_run,
)
from analysis.tests.surface_factory import surface_run
from browse import compare_pts
from browse.forms import MAX_COMPARED
from reports.wsat_workloads import compare as wsat_workloads_compare
from reports.xsr import charts as xsr_charts

pytestmark = pytest.mark.django_db


def by_key(charts) -> dict:
    return {chart.key: chart for chart in charts}


def test_each_test_a_compared_drive_has_gets_a_chart_and_the_drive_without_it_says_no_run():
    first = drive_with_every_test("Acme <b>990</b>", "acme-990")
    second = factories.DriveModelFactory(name="Bare SSD", slug="bare")
    sections = compare_pts.sections([first, second])
    pts = by_key(sections["pts"])
    assert set(pts) == {"compare-hir", "compare-xsr", "compare-ecw", "compare-dirth", "compare-wsat-workloads"}
    assert [c.key for c in sections["surface"]] == ["compare-surface"]
    for chart in [*sections["pts"], *sections["surface"]]:
        assert "No run: Bare SSD." in chart.note, chart.key
        assert any(row[0] == "Bare SSD" and "no run" in row for row in chart.summary_rows or chart.rows), chart.key
        assert [t["name"] for t in chart.figure["data"]][:1] == ["Acme &lt;b&gt;990&lt;/b&gt;"], chart.key
        assert "<b>990" not in str(chart.html)
    hir = pts["compare-hir"]
    assert hir.figure["data"][0]["y"] == [hir_ratio(i, 1.0) for i in range(1, len(IDLES) + 1)]
    assert hir.figure["layout"]["shapes"][0]["y0"] == 1.2
    assert "recovery threshold" in hir.figure["layout"]["shapes"][0]["label"]["text"]


def test_no_chart_when_no_compared_drive_has_the_test():
    drives = [factories.DriveModelFactory(), factories.DriveModelFactory()]
    with CaptureQueriesContext(connection) as queries:
        sections = compare_pts.sections(drives)
    assert sections["pts"] == [] and sections["surface"] == []
    assert len(queries) == 1  # the newest runs; nothing else is read for tests no drive has


def test_a_missing_wait_state_is_a_gap_and_says_so():
    drive = factories.DriveModelFactory(name="Gappy")
    other = factories.DriveModelFactory(name="Whole")
    hir_run(factories.SubmissionFactory(), drive, skip_index=3, unmeasured_index=4)
    hir_run(factories.SubmissionFactory(), other, scale=0.9)
    hir = by_key(compare_pts.sections([drive, other])["pts"])["compare-hir"]
    gappy, whole = hir.figure["data"]
    assert gappy["x"] == [f"{idle:g} s" for idle in IDLES]
    assert gappy["y"] == [hir_ratio(1, 1.0), hir_ratio(2, 1.0), None, None, hir_ratio(5, 1.0)]
    assert whole["y"] == [hir_ratio(i, 0.9) for i in range(1, 6)]
    rows = {(r[0], r[1]): r for r in hir.rows}
    assert rows[("Gappy", 15.0)][-1] == "no wait state stored"
    assert rows[("Gappy", 25.0)][-2:] == [None, "not measured"]


def test_the_newest_public_run_is_the_one_compared():
    drive, other = factories.DriveModelFactory(), factories.DriveModelFactory()
    old = wsat_workload_run(factories.SubmissionFactory(), drive, "ws-oltp", level=1000.0)
    new = wsat_workload_run(factories.SubmissionFactory(), drive, "ws-oltp", level=5000.0)
    hidden = wsat_workload_run(factories.SubmissionFactory(status="held"), drive, "ws-oltp", level=9000.0)
    for run, day in ((old, 1), (new, 2), (hidden, 3)):
        run.finished_at = f"2026-01-0{day}T00:00:00Z"
        run.save(update_fields=["finished_at"])
    data = compare_pts.load([drive, other])
    assert data.run(drive, "ws-oltp")["id"] == new.id
    level = wsat_workloads_compare.wsat_levels(data)[(drive.pk, "ws-oltp")]
    assert level == {"iops": 7000.0, "bw": 7000.0 * 8192, "samples": 5}  # the last five: 5000 .. 9000


def test_wsat_workloads_are_grouped_per_workload_and_drive():
    first = drive_with_every_test("First", "first")
    second = drive_with_every_test("Second", "second", scale=0.5)
    chart = by_key(compare_pts.sections([first, second])["pts"])["compare-wsat-workloads"]
    assert [t["name"] for t in chart.figure["data"]] == ["First", "Second"]
    assert chart.figure["data"][0]["y"] == [level + 2000 for level in WSAT_IOPS.values()]
    assert chart.figure["data"][1]["y"] == [0.5 * level + 2000 for level in WSAT_IOPS.values()]


def test_xsr_traces_are_capped_and_keep_measured_values(monkeypatch):
    monkeypatch.setattr(xsr_charts, "MAX_XSR_POINTS", 7)
    drive, other = factories.DriveModelFactory(name="Long"), factories.DriveModelFactory(name="Short")
    xsr_run(factories.SubmissionFactory(), drive, intervals=20)  # 60 intervals: every 9th kept
    xsr_run(factories.SubmissionFactory(), other, intervals=2)  # 6 intervals: all kept
    xsr = by_key(compare_pts.sections([drive, other])["pts"])["compare-xsr"]
    long_rows = [r for r in xsr.rows if r[0] == "Long"]
    assert [r[2] for r in long_rows] == [5.0 * n for n in range(0, 60, 9)]
    assert len([r for r in xsr.rows if r[0] == "Short"]) == 6
    assert "Long (7 of 60)" in xsr.note and "Short (" not in xsr.note
    settled = [r for r in xsr.summary_rows if r[0] == "Long"]
    assert [r[3] for r in settled] == [2000.0, 400.0, 1800.0] and [r[4] for r in settled] == [0.0, 15.0, 15.0]


def test_a_surface_without_a_knee_names_the_reason():
    drive, other = factories.DriveModelFactory(name="Flat"), factories.DriveModelFactory(name="Fine")
    flat = surface_run(drive_model=drive, patterns=("read",))
    SurfacePattern.objects.filter(test_run=flat).update(
        knee_block_size_bytes=None, knee_iodepth=None, knee_bytes_in_flight=None, knee_bw_bytes_per_s=None,
        knee_reason="every cell measured zero bandwidth",
    )  # fmt: skip
    surface_run(drive_model=other, patterns=("read",))
    chart = compare_pts.sections([drive, other])["surface"][0]
    rows = {r[0]: r for r in chart.rows}
    assert rows["Flat"][4] == "none: every cell measured zero bandwidth" and rows["Flat"][5] is None
    assert rows["Fine"][4] != rows["Flat"][4] and " × QD " in rows["Fine"][4]
    assert rows["Fine"][6] is not None  # the peak cell's speedup
    assert "nvmedb extension" in chart.note


def test_the_queries_do_not_grow_with_the_number_of_drives():
    def count(drives):
        with CaptureQueriesContext(connection) as queries:
            compare_pts.sections(drives)
        return len(queries)

    drives = [drive_with_every_test(f"Drive {n}", f"drive-{n}") for n in range(4)]
    assert count(drives[:2]) == count(drives)


def test_the_page_shows_the_pts_sections_and_the_surface_apart_with_csv_links(client):
    first = drive_with_every_test("Acme <script>x</script>", "acme-990")
    second = factories.DriveModelFactory(name="Bare SSD", slug="bare")
    factories.TestRunFactory(drive_model=second)
    for drive in (first, second):
        refresh_and_summarise(drive_model=drive)  # a public drive has a page summary
    response = client.get("/compare/?drives=acme-990,bare")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>x</script>" not in html and "Acme &lt;script&gt;x&lt;/script&gt;" in html
    pts_at, surface_at = html.index('id="compare-pts"'), html.index('id="compare-surface"')
    assert pts_at < surface_at
    surface = html[surface_at:]
    assert "nvmedb extension, not part of the PTS" in surface[: surface.index("</h2>")]
    for key in ("compare-hir", "compare-xsr", "compare-ecw", "compare-dirth", "compare-wsat-workloads"):
        assert f'id="chart-{key}"' in html[pts_at:surface_at], key
        assert _csv_url(html, key).startswith(f"/compare/charts/{key}.csv?drives=")
    assert 'id="chart-compare-surface"' in surface
    csv = client.get(_csv_url(html, "compare-surface"))
    assert csv.status_code == 200 and csv["Content-Type"].startswith("text/csv")
    lines = csv.content.decode().splitlines()
    assert lines[0].startswith("Drive,Pattern,Peak MB/s") and any(line.startswith("Bare SSD,") for line in lines)
    assert client.get(_csv_url(html, "compare-hir")).content.decode().count("Acme <script>x</script>") == len(IDLES)
    assert client.get("/compare/charts/compare-nothing.csv?drives=acme-990,bare").status_code == 404


def test_a_page_without_those_tests_has_no_such_section(client):
    for slug in ("a", "b"):
        run = factories.TestRunFactory(drive_model=factories.DriveModelFactory(slug=slug))
        refresh_and_summarise(drive_model=run.drive_model)
    html = client.get("/compare/?drives=a,b").content.decode()
    assert 'id="compare-pts"' not in html and 'id="compare-surface"' not in html


def _csv_url(html: str, key: str) -> str:
    found = re.search(rf'id="chart-{key}".*?<a href="([^"]+)" class="csv">', html, re.S)
    assert found, key
    return found.group(1).replace("&amp;", "&")


def test_more_drives_than_the_form_allows_is_refused_before_any_query():
    drives = [factories.DriveModelFactory() for _ in range(MAX_COMPARED + 1)]
    with CaptureQueriesContext(connection) as queries, pytest.raises(ValueError, match=f"at most {MAX_COMPARED}"):
        compare_pts.load(drives)
    assert not queries


def test_a_trial_run_is_never_compared():
    drive, other = factories.DriveModelFactory(name="Tried"), factories.DriveModelFactory(name="Measured")
    hir_run(factories.SubmissionFactory(), drive).__class__.objects.filter(drive_model=drive).update(profile="quick")
    hir_run(factories.SubmissionFactory(), other)
    hir = by_key(compare_pts.sections([drive, other])["pts"])["compare-hir"]
    assert [t["name"] for t in hir.figure["data"]] == ["Measured"] and hir.note.endswith("No run: Tried.")


def test_an_xsr_run_without_groups_says_so():
    drive, other = factories.DriveModelFactory(name="Empty"), factories.DriveModelFactory(name="Full")
    factories.TestRunFactory(test="xsr", drive_model=drive)
    xsr_run(factories.SubmissionFactory(), other)
    xsr = by_key(compare_pts.sections([drive, other])["pts"])["compare-xsr"]
    assert [r for r in xsr.summary_rows if r[0] == "Empty"] == [
        ["Empty", None, None, None, None, "no access group stored"]
    ]
    assert [t["name"] for t in xsr.figure["data"]] == ["Full"]
