"""The drive page's WSAT optional workloads section: its loader and charts on factory rows, and the page."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re

import pytest

from analysis.models import DrivePageSummary
from analysis.selectors import public_test_runs
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from analysis.tests.wsat_workload_rows import workload_run
from reports.wsat_workloads import charts as section

TB = 1_000_204_886_016
MIB = 1024 * 1024

pytestmark = pytest.mark.django_db


@pytest.fixture
def drive():
    return factories.DriveModelFactory(name="Acme <NVMe> 990", slug="acme-990")


@pytest.fixture
def submission(drive):
    return make_browse_submission(drive_model=drive)


def figure(html: str, key: str) -> dict:
    found = re.search(rf'<script id="chart-{key}-data" type="application/json">(.*?)</script>', html, re.S)
    assert found, key
    return json.loads(found.group(1))


def test_the_level_is_the_mean_of_the_last_five_samples_and_the_chart_plots_iops_against_capacity_written(
    drive, submission
):
    levels = [90_000.0, 70_000.0, 50_000.0, 41_000.0, 40_000.0, 39_000.0, 40_500.0, 39_500.0]
    workload_run(submission=submission, drive_model=drive, test="ws-oltp", iops=levels, written_per_sample=TB // 4)
    found = section.load(drive)
    (oltp,) = found.workloads
    assert oltp.samples == 8 and oltp.stimuli == [("randrw", 8192, 65)]
    assert oltp.level == pytest.approx(sum(levels[-5:]) / 5)
    assert oltp.level_label == "mean of the last 5 samples"
    assert oltp.written_bytes == 8 * (TB // 4)
    assert oltp.stop == section.STOP_SAMPLES  # twice the capacity written in 8 of the 1440 samples
    chart = found.charts[0]
    trace = chart.figure["data"][0]
    assert trace["y"] == levels
    assert trace["x"] == [round((i + 1) * (TB // 4) / TB, 4) for i in range(8)]
    assert "× the 1.00 TB (932 GiB) user capacity" in chart.figure["layout"]["xaxis"]["title"]["text"]
    level_line = chart.figure["layout"]["shapes"][0]
    assert level_line["y0"] == pytest.approx(sum(levels[-5:]) / 5)
    assert chart.summary_rows[0][:3] == ["ws-oltp", "random 8 KiB, 65/35 R/W", 8]


def test_a_composite_run_shows_its_block_size_mix_and_a_missing_sample_is_left_out_and_counted(drive, submission):
    iops = [30_000.0, None, 20_000.0, 18_000.0, 17_000.0, 16_000.0, None]
    workload_run(submission=submission, drive_model=drive, test="ws-comp", iops=iops, written_per_sample=100 * MIB)
    (comp,) = section.load(drive).workloads
    assert comp.stimuli == [("randrw", 0, 40)]
    assert section.stimulus_label(comp.stimuli) == "random block-size mix, 40/60 R/W"
    assert comp.missing_iops == 2
    # the last five samples are 20, 18, 17, 16 thousand and one without figures: the mean of the four known
    assert comp.level == pytest.approx((20_000 + 18_000 + 17_000 + 16_000) / 4)
    chart = section.workload_chart(comp)
    assert chart.figure["data"][0]["y"] == [30_000, 20_000, 18_000, 17_000, 16_000]  # no point for either gap
    assert [row[0] for row in chart.rows] == [1, 3, 4, 5, 6]
    assert "2 sample(s) without IOPS" in chart.note


def test_a_quick_run_that_wrote_less_than_four_times_its_capacity_stopped_at_its_sample_limit(drive, submission):
    workload_run(
        submission=submission, drive_model=drive, test="ws-vod", iops=[5000.0] * 5, written_per_sample=20 * MIB,
        profile="quick", target_size_bytes=64 * MIB,
    )  # fmt: skip
    assert section.load(drive) is None  # a trial: never on the public page
    (vod,) = section.load(drive, visible=public_test_runs(trials_of=submission.uploader_id)).workloads
    assert vod.capacity_bytes == 64 * MIB and vod.written_bytes == 100 * MIB
    assert vod.stop == section.STOP_SAMPLES
    assert section.workload_chart(vod).summary_rows[0][-1] == "sample limit"


def test_a_quick_run_on_a_large_target_counts_the_capacity_its_profile_capped():
    run = factories.TestRunFactory.build(profile="quick", target_size_bytes=TB)
    assert section.capacity_of(run) == 1024 * MIB  # the quick profile's 1 GiB range, as the client's 4x target
    assert section.capacity_of(factories.TestRunFactory.build(profile="imported", target_size_bytes=TB)) == TB
    assert section.capacity_of(factories.TestRunFactory.build(target_size_bytes=None)) is None


@pytest.mark.parametrize(
    ("written", "samples", "profile", "stop"),
    [
        (4 * TB, 10, "pts", "4× capacity"),
        (4 * TB - 1, 10, "pts", "sample limit"),
        (TB, 1440, "pts", "24 h"),
        (TB, 1439, "pts", "sample limit"),
        (TB, 1440, "quick", "sample limit"),
        (None, 1440, "pts", "24 h"),
    ],
)
def test_the_stop_is_read_from_the_samples(written, samples, profile, stop):
    assert section.stop_reason(written_bytes=written, capacity_bytes=TB, samples=samples, profile=profile) == stop


def test_a_long_run_is_averaged_in_equal_groups_of_consecutive_samples_at_most_2000_points(drive, submission):
    n = 4500  # 75 h of minutes: a drive that never reached 4x and ran past 24 h (group size 3)
    workload_run(
        submission=submission, drive_model=drive, test="ws-meta", iops=[float(i) for i in range(1, n + 1)],
        written_per_sample=1000,
    )  # fmt: skip
    (meta,) = section.load(drive).workloads
    assert meta.group_size == 3 and len(meta.points) == 1500 <= section.MAX_POINTS
    assert all(p.samples == 3 for p in meta.points)  # the level's samples, read one by one, are merged back
    assert [p.iops for p in meta.points[:2]] == [2.0, 5.0] and meta.points[-1].iops == 4499.0
    assert meta.points[-1].written_bytes == 4499 * 1000
    assert meta.level == pytest.approx(sum(range(n - 4, n + 1)) / 5)
    assert meta.stop == section.STOP_TIME
    assert "Each point averages 3 consecutive samples" in section.workload_chart(meta).note


def test_a_steady_window_is_the_level_when_the_run_has_one(drive, submission):
    iops = [100.0, 90.0, 60.0, 61.0, 59.0, 60.0, 60.0, 10.0]
    workload_run(
        submission=submission, drive_model=drive, test="ws-oltp", iops=iops, written_per_sample=1,
        steady_window=(3, 4, 5, 6, 7),
    )  # fmt: skip
    (oltp,) = section.load(drive).workloads
    assert oltp.level == pytest.approx(60.0) and oltp.level_label == "steady-state window mean"


def test_the_newest_public_run_of_each_workload_is_shown_and_a_chosen_submission_s_run_when_chosen(
    drive, submission, django_assert_num_queries
):
    older = make_browse_submission(drive_model=drive, firmware="FW0")
    at = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    # the newer run is stored first: finished_at, not the id, makes it the newest
    workload_run(submission=submission, drive_model=drive, test="ws-oltp", iops=[2.0] * 3, written_per_sample=1,
                 finished_at=at + dt.timedelta(days=1))  # fmt: skip
    workload_run(submission=older, drive_model=drive, test="ws-oltp", iops=[1.0] * 3, written_per_sample=1,
                 finished_at=at)  # fmt: skip
    workload_run(submission=older, drive_model=drive, test="ws-comp", iops=[3.0] * 3, written_per_sample=1)
    hidden = factories.SubmissionFactory(status="withdrawn")
    workload_run(submission=hidden, drive_model=drive, test="ws-vod", iops=[9.0] * 3, written_per_sample=1,
                 finished_at=at + dt.timedelta(days=9))  # fmt: skip
    with django_assert_num_queries(2):
        found = section.load(drive)
    assert [(w.test, w.level) for w in found.workloads] == [("ws-oltp", 2.0), ("ws-comp", 3.0)]
    chosen = section.load(drive, older.pk)
    assert [(w.test, w.level) for w in chosen.workloads] == [("ws-oltp", 1.0), ("ws-comp", 3.0)]
    assert section.load(drive, hidden.pk) is None


def test_the_drive_page_shows_the_section_from_its_summary_with_escaped_labels_and_a_csv(client, drive, submission):
    workload_run(submission=submission, drive_model=drive, test="ws-oltp", iops=[4e4, 3e4, 2e4],
                 written_per_sample=TB // 2, pattern="<img src=x>")  # fmt: skip
    workload_run(submission=submission, drive_model=drive, test="ws-comp", iops=[5e4, None, 1e4],
                 written_per_sample=TB)  # fmt: skip
    refresh_and_summarise(drive_model=drive)
    assert {"ws-oltp", "ws-comp"} <= set(DrivePageSummary.objects.get(drive_model=drive).summary["tests"])
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert 'id="test-wsat-workloads"' in html
    assert "<img src=x>" not in html and "&lt;img src=x&gt;" in html
    oltp = figure(html, "ws-oltp")
    assert oltp["data"][0]["y"] == [40000, 30000, 20000] and "&lt;img" in oltp["data"][0]["name"]
    comp = figure(html, "ws-comp")
    assert comp["data"][0]["y"] == [50000, 10000]
    assert "random block-size mix, 40/60 R/W" in html
    link = re.search(r'<a href="([^"]+/charts/ws-comp\.csv)" class="csv">', html).group(1)
    rows = list(csv.reader(io.StringIO(client.get(link).content.decode())))
    assert rows[0] == ["First sample", "Last sample", "Samples", "Written (bytes)", "Written (× capacity)", "IOPS"]
    assert [row[0] for row in rows[1:]] == ["1", "3"]
    chosen = client.get(f"/drives/{drive.slug}/?submission={submission.pk}").content.decode()
    assert f"/charts/ws-oltp.csv?submission={submission.pk}" in chosen


def test_a_drive_without_workload_runs_has_no_such_section(client, drive, submission):
    refresh_and_summarise(drive_model=drive)
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert 'id="test-wsat-workloads"' not in html
    assert client.get(f"/drives/{drive.slug}/charts/ws-oltp.csv").status_code == 404


def test_a_run_whose_samples_have_no_figures_shows_no_level_and_no_point_rather_than_a_zero(drive, submission):
    workload_run(submission=submission, drive_model=drive, test="ws-meta", iops=[None, None], written_per_sample=1)
    (meta,) = section.load(drive).workloads
    assert meta.level is None and meta.written_bytes is None and meta.missing_iops == 2
    chart = section.workload_chart(meta)
    assert chart.figure["data"][0]["y"] == [] and chart.rows == []
    assert dict(chart.verdict)["Level"] == "—" and dict(chart.verdict)["Written"] == "—"
    assert all(shape["line"]["dash"] != "dash" for shape in chart.figure["layout"]["shapes"])  # no level line
