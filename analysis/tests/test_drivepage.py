"""The drive page through the test client: the first screen (identity, headlines, spec sheet, what explains the
spread) comes first, one section per test, the steady-state detail behind one selector that works without JS,
human labels, over-provisioning shown and exported; and the over-provisioning breakdown's arithmetic on crafted
runs."""

from __future__ import annotations

import json
import re

import pytest

from analysis.factor_effects import refresh_factor_effects
from analysis.models import TestRun
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from analysis.tests.test_browse_pages import embedded_figures
from browse import factors

pytestmark = pytest.mark.django_db
RAW_ID = re.compile(r"\b(?:iops|tp|lat|wsat)\.[a-z_]+\.rw\d{3}\.bs\d+\b")


def visible_text(html: str) -> str:
    """The page as a reader sees it: no scripts, no tag attributes (option values, links)."""
    html = re.sub(r"<script\b.*?</script>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


@pytest.fixture
def drive(db):
    drive = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    make_browse_submission(drive_model=drive, firmware="FW1", generation=3, scale=0.6)
    make_browse_submission(drive_model=drive, firmware="FW2", generation=4)
    TestRun.objects.filter(drive_model=drive, firmware__revision="FW2").update(overprovisioning=0.2)
    TestRun.objects.filter(drive_model=drive, firmware__revision="FW1").update(overprovisioning=0.0)
    refresh_and_summarise(drive_model=drive)
    return drive


def test_the_first_screen_comes_before_any_chart_in_reading_order(client, drive):
    html = client.get("/drives/acme-990-1tb/").content.decode()
    positions = [html.index(marker) for marker in (
        'id="drive-name"', 'id="identity"', 'id="headline"', 'id="spec-sheet"', 'id="factors"',
        'id="section-iops"', 'id="section-tp"', 'id="section-lat"', 'id="section-wsat"', 'id="steady-detail"',
    )]  # fmt: skip
    assert positions == sorted(positions)
    assert html.index('<figure class="chart"') > html.index('id="factors"')
    assert html.count('class="how-to-read"') >= 5


def test_two_units_get_a_sentence_naming_what_they_differ_in_never_a_table(client, drive):
    refresh_factor_effects(drive)  # what the task queued on commit does (no commit in a test transaction)
    html = client.get("/drives/acme-990-1tb/").content.decode()
    factors_html = html[html.index('id="factors-section"') : html.index("</section>", html.index('id="factors"'))]
    text = " ".join(visible_text(factors_html).split())
    assert "<table" not in factors_html and 'id="no-spread-factor"' in factors_html
    assert "Measured on 2 units from 2 contributors: too few to tell the effects of the conditions apart" in text
    assert re.search(r"the units differ in [^.]*firmware[^.]*spare ÷ user capacity", text)
    assert not re.search(r"\+\d+(\.\d+)?%", text)  # no best ÷ worst figure


def test_one_steady_state_chart_and_a_selector_with_human_labels(client, drive):
    html = client.get("/drives/acme-990-1tb/").content.decode()
    assert len(re.findall(r'<figure class="chart" id="chart-window-', html)) == 1
    options = re.findall(r'<option value="([^"]+)"[^>]*>([^<]+)</option>', html)
    assert len(options) == 3  # the IOPS, throughput and latency runs' tracking variables
    assert all(RAW_ID.fullmatch(value) for value, _ in options)
    labels = [label for _, label in options]
    assert "IOPS, 4 KiB, 0/100 R/W" in labels
    assert not RAW_ID.search(visible_text(html))


def test_the_selector_rerenders_the_chosen_variable_on_the_server(client, drive):
    html = client.get("/drives/acme-990-1tb/", {"variable": "lat.lat_mean_ns.rw000.bs4096"}).content.decode()
    detail = html[html.index('id="steady-detail"') :]
    assert "Measurement window: mean latency, 4 KiB, 0/100 R/W" in detail
    assert re.search(r'<option value="lat.lat_mean_ns.rw000.bs4096" selected>', detail)
    response = client.get("/drives/acme-990-1tb/", {"variable": "iops.total_iops.rw042.bs1"})
    assert response.status_code == 400
    assert "no variable" in response.content.decode()


def test_no_chart_legend_has_more_than_twelve_entries(client, shared_samples):
    from django.core.management import call_command

    call_command("import_results", str(shared_samples / "ssspt-hp-iops-1"), "--format", "ssspt", "--json")
    slug = TestRun.objects.get().drive_model.slug
    html = client.get(f"/drives/{slug}/").content.decode()
    for figure in embedded_figures(html):
        if figure["layout"].get("showlegend") is False:
            continue
        assert len([t for t in figure["data"] if t.get("showlegend") is not False]) <= 12
    assert not RAW_ID.search(visible_text(html))
    assert len(re.findall(r"<option ", html)) > 12  # every variable stays reachable through the selector


def test_the_selector_keeps_the_chosen_submission(client, drive):
    submission = TestRun.objects.filter(drive_model=drive, firmware__revision="FW1").first().submission_id
    html = client.get("/drives/acme-990-1tb/", {"submission": submission}).content.decode()
    form = html[html.index("data-variable-picker") : html.index("</form>", html.index("data-variable-picker"))]
    assert f'name="submission" value="{submission}"' in form
    response = client.get(
        "/drives/acme-990-1tb/", {"submission": submission, "variable": "tp.write_bw_bytes_per_s.rw000.bs1048576"}
    )
    assert response.status_code == 200
    assert "Measurement window: write throughput, 1 MiB, 0/100 R/W" in response.content.decode()
    assert f"iops.csv?submission={submission}" in response.content.decode()


def test_overprovisioning_shows_both_figures_and_flags_a_shrunk_namespace(client, drive):
    html = client.get("/drives/acme-990-1tb/").content.decode()
    op = visible_text(
        html[html.index('id="overprovisioning"') : html.index("</dd>", html.index('id="overprovisioning"'))]
    )
    assert "20.0% of raw hidden = 25.0% spare vs user (1 unit)" in op
    assert "Namespace sized below the drive's capacity" in op
    breakdown = visible_text(html[html.index('id="by-op"') :])
    assert "4 KiB random write" in breakdown and "25.0% spare" in breakdown and "full namespace" in breakdown


def test_a_full_namespace_is_not_flagged(client, drive):
    TestRun.objects.filter(drive_model=drive).update(overprovisioning=0.0)
    refresh_and_summarise(drive_model=drive)
    html = client.get("/drives/acme-990-1tb/").content.decode()
    assert 'id="namespace-below-capacity"' not in html and 'id="by-op"' not in html


def test_the_runs_export_carries_both_overprovisioning_figures(client, drive):
    response = client.get("/datasets/runs.json")
    rows = json.loads(b"".join(response.streaming_content))
    shrunk = [r for r in rows if r["firmware"] == "FW2"]
    assert shrunk and all(r["overprovisioning"] == pytest.approx(0.2) for r in shrunk)
    assert all(r["spare_vs_user"] == pytest.approx(0.25) for r in shrunk)
    assert all(r["spare_vs_user"] == 0 for r in rows if r["firmware"] == "FW1")


# --- the arithmetic ---------------------------------------------------------------------------------------------


def run(pk, unit, **fields):
    row = {"id": pk, "unit_id": unit, "overprovisioning": None, "m_iops_4k_read": None, "m_iops_4k_write": None,
           "m_bw_1m_read": None, "m_bw_1m_write": None, "level": None}  # fmt: skip
    row.update(fields)
    return row


def test_a_unit_tested_many_times_counts_once_in_a_level_median():
    runs = [
        *[run(i, 1, level="Gen3", m_bw_1m_read=3.0e9) for i in range(10)],  # one unit, ten runs
        run(20, 2, level="Gen4", m_bw_1m_read=6.0e9),
        run(21, 3, level="Gen4", m_bw_1m_read=7.0e9),
        run(22, 4, level="Gen4", m_bw_1m_read=8.0e9),
        run(23, None, m_bw_1m_read=1.0e9),  # unknown level: left out
    ]
    levels = factors.level_medians(runs, "bw_1m_read", lambda r: r["level"])
    assert levels == [("Gen3", 1, 3.0e9), ("Gen4", 3, 7.0e9)]


def test_a_factor_the_same_on_every_unit_explains_nothing_and_is_named_as_such(client, drive):
    refresh_factor_effects(drive)
    html = client.get("/drives/acme-990-1tb/").content.decode()
    note = visible_text(
        html[html.index('id="recorded-factors"') : html.index("</p>", html.index('id="recorded-factors"'))]
    )
    assert re.search(r"The same on every unit fitted: [^.]*host CPU", " ".join(note.split()))


def test_spare_vs_user_is_the_vendors_figure():
    assert factors.spare_vs_user(0.0) == 0
    assert factors.spare_vs_user(0.2) == pytest.approx(0.25)
    assert factors.spare_vs_user(1 - 1 / 1.28) == pytest.approx(0.28)
    assert factors.spare_vs_user(None) is None


def test_the_overprovisioning_summary_counts_units_per_figure_and_flags_a_shrunk_namespace():
    runs = [run(1, 1, overprovisioning=0.0), run(2, 1, overprovisioning=0.0), run(3, 2, overprovisioning=0.125),
            run(4, 3)]  # fmt: skip
    summary = factors.overprovisioning_summary(runs)
    assert summary.figures == [(0.0, 0.0, 1), (0.125, pytest.approx(0.125 / 0.875), 1)]
    assert summary.below_capacity and summary.unknown_units == 1
    assert not factors.overprovisioning_summary([run(1, 1, overprovisioning=0.0004)]).below_capacity


def test_approved_spec_sheet_figures_are_compared_with_the_measured_medians(
    client, admin_client, drive, django_user_model
):
    from analysis.models import DriveMetadataProposal

    html = client.get("/drives/acme-990-1tb/").content.decode()
    assert "no vendor figures on record" in html
    client.force_login(django_user_model.objects.create_user("proposer", password="x" * 12))
    response = client.post("/drives/acme-990-1tb/metadata/", {
        "spec_seq_read_mb_s": "14000", "spec_rand_read_iops": "1400000", "source_url": "https://example.org/spec",
    })  # fmt: skip
    assert response.status_code == 302
    proposal = DriveMetadataProposal.objects.get()
    assert proposal.spec_seq_read_bytes_per_s == 14e9 and proposal.spec_rand_read_iops == 1.4e6
    assert "Spec sheet (reached)" not in client.get("/drives/acme-990-1tb/").content.decode()  # not before review
    admin_client.post("/admin/analysis/drivemetadataproposal/",
                      {"action": "approve_proposals", "_selected_action": [proposal.pk]})  # fmt: skip
    drive.refresh_from_db()
    assert drive.spec_source_url == "https://example.org/spec"
    html = client.get("/drives/acme-990-1tb/").content.decode()
    table = html[html.index('<table class="headline') : html.index("</table>", html.index('<table class="headline'))]
    rows = {visible_text(row).split("  ")[0].strip(): visible_text(row) for row in table.split("<tr>")[2:]}
    median = drive.aggregates.get(metric="bw_1m_read", factor="all").median
    assert "14.0 GB/s" in rows["1024 KiB sequential read"]
    assert f"({100 * median / 14e9:.3g}%)" in rows["1024 KiB sequential read"]
    assert "Source" in visible_text(html[html.index('id="spec-sheet"') :])
    assert "1.40M IOPS" in rows["4 KiB random read"]
    assert "Spec sheet (reached)" in table


def test_a_spec_figure_must_be_positive(client, drive, django_user_model):
    client.force_login(django_user_model.objects.create_user("p4", password="x" * 12))
    response = client.post("/drives/acme-990-1tb/metadata/", {"spec_rand_read_iops": "-5",
                                                               "source_url": "https://example.org/spec"})  # fmt: skip
    assert response.status_code == 400


def test_variable_ids_inside_sentences_read_as_labels():
    from reports.steady import humanize_variables

    text = "The client claimed a verdict on iops.total_iops.rw065.bs4096, which no measured run holds."
    assert (
        humanize_variables(text)
        == "The client claimed a verdict on IOPS, 4 KiB, 65/35 R/W, which no measured run holds."
    )
    assert humanize_variables("tp.read_bw_bytes_per_s.rw100.bs1048576") == "read throughput, 1 MiB, 100/0 R/W"


def test_a_flag_naming_a_variable_shows_its_label(client, drive):
    from analysis.models import Flag

    run = TestRun.objects.filter(drive_model=drive, test="iops").order_by("id").last()
    Flag.objects.create(
        submission_id=run.submission_id,
        test_run=run,
        kind="steady_state_claim_differs",
        reason="The client claimed a verdict on iops.total_iops.rw065.bs4096, which no run holds.",
    )
    refresh_and_summarise(drive_model=drive)
    html = client.get("/drives/acme-990-1tb/", {"submission": run.submission_id}).content.decode()
    assert "claimed a verdict on IOPS, 4 KiB, 65/35 R/W" in html
    assert not RAW_ID.search(visible_text(html))
