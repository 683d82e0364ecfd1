"""The formatting layer on the pages: units on the submission page, decade-only log axes, the compare picker, one
navigation bar."""

from __future__ import annotations

import math

import pytest

from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission
from analysis.tests.test_browse_pages import embedded_figures
from reports import units

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("query", ["", "?drives=acme-990-1tb"])
def test_compare_with_fewer_than_two_drives_offers_a_picker(client, browse_drive, query):
    response = client.get(f"/compare/{query}")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="q"' in html and 'type="checkbox" name="drives" value="acme-990-1tb"' in html
    assert "compare needs two to four" in html
    if query:
        assert 'value="acme-990-1tb" checked' in html and "You picked 1 drive:" in html


def test_the_picker_searches_public_drives(client, browse_drive):
    from analysis.tests import factories

    other = factories.DriveModelFactory(name="Zeta 2TB", slug="zeta-2tb")
    make_browse_submission(drive_model=other)
    refresh_and_summarise(drive_model=other)  # as every publication does
    html = client.get("/compare/", {"q": "zeta"}).content.decode()
    assert 'value="zeta-2tb"' in html and 'value="acme-990-1tb"' not in html
    assert 'value="zeta-2tb"' in client.get("/compare/").content.decode()


def test_a_bad_compare_list_is_still_a_400_with_the_picker(client, browse_drive):
    response = client.get("/compare/", {"drives": "acme-990-1tb,unknown"})
    assert response.status_code == 400
    assert 'class="error"' in response.content.decode() and 'name="q"' in response.content.decode()


def test_log_axes_carry_decade_labels_with_units(client, browse_drive):
    figures = embedded_figures(client.get("/drives/acme-990-1tb/").content.decode())
    log_axes = [f["layout"]["yaxis"] for f in figures if f["layout"]["yaxis"].get("type") == "log"]
    assert len(log_axes) >= 2
    for axis in log_axes:
        assert axis["tickvals"] and all(math.log10(v) == round(math.log10(v)) for v in axis["tickvals"])
        assert all(text.endswith(("IOPS", "ns", "µs", "ms", " s")) for text in axis["ticktext"])
        assert not any("k µs" in text for text in axis["ticktext"])
    hovers = [t for f in figures for t in f["data"] if t.get("hovertemplate", "").startswith("%{x}: %{text}")]
    assert any(any(text.endswith("GiB/s)") for text in t["text"]) for t in hovers)


def test_the_submission_page_shows_every_value_with_its_unit(client, browse_drive):
    from analysis.models import SteadyStateWindow

    window = SteadyStateWindow.objects.filter(metric="lat_mean_ns").first()
    window.average, window.data_excursion = 19_484.600999999998, 46.187846640000004
    window.save()
    html = client.get(f"/submissions/{window.test_run.submission_id}/").content.decode()
    assert "19.484600999999998" not in html and "46.187846640000004" not in html
    assert "19.5 µs" in html and "46.2 ns" in html
    assert " IOPS</td>" in html and " µs</td>" in html and " °C</td>" in html and "4 KiB</td>" in html
    assert 'GiB/s">' in html  # bandwidth in decimal units, binary on hover


def test_the_navigation_appears_once_when_signed_in(client, django_user_model):
    user = django_user_model.objects.create_user(username="nav", password="pw-nav-123456")
    client.force_login(user)
    for url in ("/profile/", "/submissions/upload/", "/drives/"):
        html = client.get(url).content.decode()
        assert html.count(">Profile</a>") == 1, url
        assert html.count(">Upload</a>") == 1, url
        assert html.count(">API</a>") == 1, url


def test_capacity_shows_decimal_with_binary_on_hover():
    assert str(units.with_binary(1_024_209_543_168, "bytes")) == '<span title="954 GiB">1.02 TB</span>'
    assert units.with_binary(None, "bytes") == units.MISSING


def test_linear_axes_pick_their_scale_by_magnitude():
    assert units.axis_for("ns", [250_000_000, 1_000]) == (1e6, "ms")  # never "250k µs"
    assert units.axis_for("ns", [46_000]) == (1e3, "µs")
    assert units.axis_for("ns", [800]) == (1.0, "ns")
    assert units.axis_for("bytes/s", [3.4e9]) == (1e9, "GB/s (10⁹ bytes/s)")
    assert units.axis_for("bytes/s", [None, 4.7e8]) == (1e6, "MB/s (10⁶ bytes/s)")


def test_the_factor_charts_keep_gb_per_second_precise(client, browse_drive):
    figures = embedded_figures(client.get("/drives/acme-990-1tb/").content.decode())
    by_pcie = [f for f in figures if "sequential read by pcie" in f["layout"]["title"]["text"].lower()]
    assert by_pcie, [f["layout"]["title"]["text"] for f in figures]
    assert by_pcie[0]["layout"]["yaxis"]["title"]["text"] == "GB/s (10⁹ bytes/s)"
    values = [y for trace in by_pcie[0]["data"] for y in trace["y"]]
    assert all(1 < y < 100 and y != round(y, 1) for y in values)
