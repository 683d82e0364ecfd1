"""What the drive page and the drive list claim stays within the data: only PTS-compliant runs are counted as "PTS"
runs (imported runs are "test runs", with the compliant count apart); a factor few units record is "recorded for
too few units", never "the same for every unit"; a filter matching nothing and an empty site say so in words; a chart
with a single level is a sentence; no table repeats another's figures."""

from __future__ import annotations

import re

import pytest

from analysis import factor_rows
from analysis.factor_effects import refresh_factor_effects
from analysis.models import DriveModelAggregate, Host, TestRun
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from analysis.tests.test_drivepage import visible_text
from browse import drive_page

pytestmark = pytest.mark.django_db


def imported(drive, *, compliant: int = 0) -> None:
    """Turn the drive's runs into imported, non-compliant ones, but the first `compliant` submissions'."""
    submissions = list(TestRun.objects.filter(drive_model=drive).order_by("submission__created").values_list(
        "submission_id", flat=True).distinct())  # fmt: skip
    TestRun.objects.filter(drive_model=drive).exclude(submission_id__in=submissions[:compliant]).update(
        compliant=False, source="imported", profile="imported"
    )
    refresh_and_summarise(drive_model=drive)


@pytest.fixture
def drive(db):
    drive = factories.DriveModelFactory(name="Acme SATA 128GB", slug="acme-sata-128gb")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=3)
    make_browse_submission(drive_model=drive, firmware="FW1", generation=3)
    refresh_and_summarise(drive_model=drive)
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


def test_a_factor_few_units_record_is_named_unrecorded_never_the_same_for_every_unit(client, drive):
    runs = list(TestRun.objects.filter(drive_model=drive).order_by("id"))
    arm = Host.objects.create(fingerprint="a" * 64, cpu_model="Cortex-A72")
    blank = Host.objects.create(fingerprint="b" * 64, cpu_model="")
    TestRun.objects.filter(pk__in=[r.pk for r in runs[:2]]).update(host=arm)
    TestRun.objects.filter(pk__in=[r.pk for r in runs[2:]]).update(host=blank)
    refresh_and_summarise(drive_model=drive)
    refresh_factor_effects(drive)  # what the task queued on commit does (no commit in a test transaction)
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    factors_html = html[html.index('id="factors-section"') : html.index("</section>", html.index('id="factors"'))]
    text = " ".join(visible_text(factors_html).split())
    # host CPU is on record for one of the two units: too few to measure, not "the same"
    assert re.search(r"Recorded for too few units to measure: [^.]*host CPU", text)
    assert not re.search(r"The same on every unit fitted: [^.]*host CPU", text)
    assert "same for every unit" not in text
    # the make_browse_submission runs record no temperature maximum: throttling is unknown, not "not throttled"
    assert "not throttled" not in text
    assert re.search(r"Recorded for too few units to measure: [^.]*thermal throttling", text)


def test_unknown_links_and_temperatures_are_not_verdicts():
    def row(pk, unit, **fields):
        return {"id": pk, "unit_id": unit, "submission__uploader_id": 1, "headline": {"bw_1m_read": 3e9},
                "overprovisioning": None, "percentage_used": None, "max_temperature_k": None, "scheduler": "",
                "firmware__revision": "F1", "host__cpu_model": "", "host__kernel": "", "pcie_link__generation": None,
                "pcie_link__width": None, "pcie_link__below_capability": None,
                "pcie_link__usable_bandwidth_bytes_per_s": None, "thermal_flag": False, **fields}  # fmt: skip

    rows = factor_rows.rows_of([row(1, 1), row(2, 2)]).rows["bw_1m_read"]
    assert all(r.link_limited is None and r.throttled is None and r.host_cpu is None for r in rows)
    found = factor_rows.rows_of([row(1, 1, pcie_link__usable_bandwidth_bytes_per_s=3.5e9, max_temperature_k=320.0),
                                 row(2, 2, headline={"bw_1m_read": 5e9})])  # fmt: skip
    first, second = found.rows["bw_1m_read"]
    assert first.link_limited is True and first.throttled is False  # another unit reached 5 GB/s > its 3.5
    assert second.link_limited is None and second.throttled is None


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
    refresh_and_summarise(drive_model=drive)
    html = drive_page.level_table_html(list(DriveModelAggregate.objects.filter(drive_model=drive)))
    rows = re.findall(r"<tr><th scope=\"row\">([^<]+)</th><td>([^<]+)</td>", html)
    assert sorted(rows) == [("Firmware", "FW1"), ("Firmware", "FW2"), ("PCIe generation", "Gen3"),
                            ("PCIe generation", "Gen4")]  # fmt: skip
    assert "Edition <strong>enterprise</strong>" in html  # still one level: in the sentence
