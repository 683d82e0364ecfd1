"""What the drive page and the drive list claim stays within the data: only PTS-compliant runs are counted as "PTS"
runs (imported runs are "test runs", with the compliant count apart); the factors with one value say how many runs
record them, never "the same for every unit"; a filter matching nothing and an empty site say so in words; a chart
with a single level is a sentence; no table repeats another's figures."""

from __future__ import annotations

import re

import pytest

from analysis.browse import drive_page, factors
from analysis.models import DriveModelAggregate, Host, TestRun
from analysis.services import refresh_aggregates
from analysis.tests import factories
from analysis.tests.conftest import make_browse_submission
from analysis.tests.test_drivepage import run, visible_text

pytestmark = pytest.mark.django_db


def imported(drive, *, compliant: int = 0) -> None:
    """Turn the drive's runs into imported, non-compliant ones, but the first `compliant` submissions'."""
    submissions = list(TestRun.objects.filter(drive_model=drive).order_by("submission__created").values_list(
        "submission_id", flat=True).distinct())  # fmt: skip
    TestRun.objects.filter(drive_model=drive).exclude(submission_id__in=submissions[:compliant]).update(
        compliant=False, source="imported", profile="imported"
    )
    refresh_aggregates(drive_model=drive)


@pytest.fixture
def drive(db):
    drive = factories.DriveModelFactory(name="Acme SATA 128GB", slug="acme-sata-128gb")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=3)
    make_browse_submission(drive_model=drive, firmware="FW1", generation=3)
    refresh_aggregates(drive_model=drive)
    return drive


def subtitle(client, drive) -> str:
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    return " ".join(
        visible_text(html[html.index('class="subtitle"') : html.index("</p>", html.index("subtitle"))]).split()
    )


def test_compliant_runs_are_pts_test_runs(client, drive):
    assert "8 public PTS test runs from 2 submissions on 2 units" in subtitle(client, drive)
    assert "PTS-compliant" not in subtitle(client, drive)


def test_imported_non_compliant_runs_are_test_runs_not_pts_runs(client, drive):
    imported(drive)
    text = subtitle(client, drive)
    assert "8 public test runs from 2 submissions on 2 units · none PTS-compliant" in text
    assert "PTS test run" not in text


def test_the_compliant_count_stands_apart(client, drive):
    imported(drive, compliant=1)
    text = subtitle(client, drive)
    assert "8 public test runs from 2 submissions on 2 units · 4 of them PTS-compliant" in text
    assert "PTS test run" not in text


def test_the_drive_list_counts_test_runs_and_says_how_many_are_compliant(client, drive):
    imported(drive)
    html = client.get("/drives/").content.decode()
    text = " ".join(visible_text(html).split())
    assert "Units / test runs" in text and "PTS runs" not in text
    assert "2 / 8 none PTS-compliant" in text


def test_a_filter_that_matches_nothing_says_so(client, drive):
    response = client.get("/drives/", {"q": "no such drive"})
    assert response.status_code == 200
    text = " ".join(visible_text(response.content.decode()).split())
    assert "No drive matches these filters." in text and "Reset them" in text
    assert 'class="drive-list"' not in response.content.decode()


def test_an_empty_site_says_it_has_no_drive_yet(client, db):
    text = " ".join(visible_text(client.get("/drives/").content.decode()).split())
    assert "No drive has public results yet." in text


def test_one_valued_factors_name_how_many_runs_record_them(client, drive):
    runs = list(TestRun.objects.filter(drive_model=drive).order_by("id"))
    arm = Host.objects.create(fingerprint="a" * 64, cpu_model="Cortex-A72")
    blank = Host.objects.create(fingerprint="b" * 64, cpu_model="")
    TestRun.objects.filter(pk__in=[r.pk for r in runs[:2]]).update(host=arm)
    TestRun.objects.filter(pk__in=[r.pk for r in runs[2:]]).update(host=blank)
    refresh_aggregates(drive_model=drive)
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    factors_html = html[html.index('id="factors-section"') : html.index("</section>", html.index('id="factors"'))]
    text = " ".join(visible_text(factors_html).split())
    assert "One value where recorded: Host CPU Cortex-A72 (recorded for 2 of 8 runs)." in text
    assert re.search(r"One value on all 8 runs: [^.]*Firmware FW1", text)
    assert "same for every unit" not in text and "every unit" not in text
    # the make_browse_submission runs record no temperature maximum: throttling is unknown, not "not throttled"
    assert "not throttled" not in text
    assert re.search(r"Not recorded by any run: [^.]*Thermal throttling", text)


def test_unknown_links_and_temperatures_are_not_verdicts():
    runs = [run(1, 1, m_bw_1m_read=3e9, m_bw_1m_write=2e9), run(2, 2, m_bw_1m_read=3e9, m_bw_1m_write=2e9)]
    rows = {r.key: r for r in factors.factor_rows(runs)}
    assert not rows["bus"].levels and not rows["thermal"].levels
    assert rows["bus"].recorded == "recorded for none of 2 runs"
    runs[0].update(pcie_link__usable_bandwidth_bytes_per_s=3.5e9, max_temperature_k=320.0)
    rows = {r.key: r for r in factors.factor_rows(runs)}
    assert rows["bus"].levels[0][0] == "not bus-bound" and rows["bus"].recorded == "recorded for 1 of 2 runs"
    assert rows["thermal"].levels[0][0] == "not throttled" and rows["thermal"].n_runs_known == 1


def test_a_breakdown_with_one_level_is_a_sentence_and_keeps_its_csv(client, drive):
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    sentence = re.search(r'<p class="chart-sentence" id="chart-by-firmware-iops_4k_read">(.*?)</p>', html, re.S)
    assert sentence, "a single firmware is a sentence, not a chart"
    text = " ".join(visible_text(sentence.group(1)).split())
    assert "one level only, FW1, on every run that measured it (2 runs, 2 units)" in text
    assert 'id="chart-by-firmware-iops_4k_read-data"' not in html  # no figure embedded
    assert client.get(f"/drives/{drive.slug}/charts/by-firmware-iops_4k_read.csv").status_code == 200


def test_the_iops_matrix_links_to_the_2d_plots_table_instead_of_repeating_it(client, drive):
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    matrix = html[html.index('id="chart-iops-matrix"') : html.index("</figure>", html.index('id="chart-iops-matrix"'))]
    assert "<table" not in matrix and 'href="#chart-iops"' in matrix and "iops-matrix.csv" in matrix
    plot = html[html.index('id="chart-iops"') : html.index("</figure>", html.index('id="chart-iops"'))]
    assert plot.count("<table") == 1


def test_the_level_table_has_one_row_per_distinct_level_and_a_sentence_for_the_others(drive):
    aggregates = list(DriveModelAggregate.objects.filter(drive_model=drive))
    single = drive_page.level_table_html(aggregates)
    assert "<table" not in single  # one firmware, one generation, one width, one edition
    assert "Firmware <strong>FW1</strong>" in single and "PCIe generation <strong>Gen3</strong>" in single
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    refresh_aggregates(drive_model=drive)
    html = drive_page.level_table_html(list(DriveModelAggregate.objects.filter(drive_model=drive)))
    rows = re.findall(r"<tr><th scope=\"row\">([^<]+)</th><td>([^<]+)</td>", html)
    assert sorted(rows) == [("Firmware", "FW1"), ("Firmware", "FW2"), ("PCIe generation", "Gen3"),
                            ("PCIe generation", "Gen4")]  # fmt: skip
    assert "Edition <strong>enterprise</strong>" in html  # still one level: in the sentence
