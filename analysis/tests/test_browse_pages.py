"""The browse pages through the test client: content, validation (400s, never 500s), CSV, query counts."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import HOSTILE_NAME, make_browse_submission

pytestmark = pytest.mark.django_db


def embedded_figures(html: str) -> list[dict]:
    return [
        json.loads(m)
        for m in re.findall(r'<script id="chart-[^"]+-data" type="application/json">(.*?)</script>', html, re.S)
    ]


def test_home_counts_the_public_dataset_only(client, browse_drive):
    factories.iops_run(submission=factories.SubmissionFactory(status="held", published_at=None), rounds=1)
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert re.search(r'id="count-drives">1<', html)
    assert re.search(r'id="count-submissions">2<', html)
    assert re.search(r'id="count-units">2<', html)
    n = 2 * (5 * 9 + 5 * 2 + 5 * 4 + 12)
    assert re.search(rf'id="count-measurements">{n}<', html)
    assert "nvmedb-client run --device" in html
    assert "Acme NVMe 990 1TB" in html


def test_drive_list_shows_headline_medians_with_units_and_runs(client, browse_drive):
    response = client.get("/drives/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Acme NVMe 990 1TB" in html
    assert "2 / 8" in html  # 2 units, 8 test runs
    assert "IOPS" in html and "n=2" in html


def test_drive_list_filters_and_sorts(client, browse_drive):
    slow = factories.DriveModelFactory(name="Slowpoke SATA 500GB", slug="slowpoke", capacity_bytes=500_107_862_016)
    make_browse_submission(drive_model=slow, firmware="S1", generation=3, scale=0.1)
    refresh_and_summarise(drive_model=slow)

    def names(query: str) -> list[str]:
        response = client.get("/drives/" + query)
        assert response.status_code == 200, response.content[:500]
        return re.findall(r'<a href="/drives/[^/]+/">([^<]+)</a>', response.content.decode())

    assert names("?q=slowpoke") == ["Slowpoke SATA 500GB"]
    assert names("?capacity_max_gb=600") == ["Slowpoke SATA 500GB"]
    assert names("?capacity_min_gb=600") == ["Acme NVMe 990 1TB"]
    assert names("?pcie_generation=4") == ["Acme NVMe 990 1TB"]
    assert names("?sort=-iops_4k_read") == ["Acme NVMe 990 1TB", "Slowpoke SATA 500GB"]
    assert names("?sort=iops_4k_read") == ["Slowpoke SATA 500GB", "Acme NVMe 990 1TB"]
    assert names("?compliance=imported") == []
    assert names(f"?vendor={slow.vendor.slug}") == ["Slowpoke SATA 500GB"]


@pytest.mark.parametrize(
    "query",
    [
        "?sort=DROP",
        "?capacity_min_gb=lots",
        "?pcie_generation=99",
        "?vendor=nobody",
        "?page=0",
        "?page=abc",
        "?page=9",
        "?compliance=quick",
    ],  # quick-profile runs are trials, never public: the list offers no such choice
)
def test_drive_list_rejects_bad_parameters_with_a_message(client, browse_drive, query):
    response = client.get("/drives/" + query)
    assert response.status_code == 400
    assert 'class="error"' in response.content.decode()


def test_drive_page_has_every_chart_with_its_table_and_csv(client, browse_drive):
    response = client.get("/drives/acme-990-1tb/")
    assert response.status_code == 200
    html = response.content.decode()
    keys = set(re.findall(r'<figure class="chart" id="chart-([^"]+)"', html))
    for key in ("iops", "steady-iops", "throughput", "latency", "wsat", "temperature", "by-firmware-iops_4k_read",
                "by-pcie-iops_4k_read"):  # fmt: skip
        assert key in keys
    assert any(k.startswith("window-") for k in keys)
    figures = embedded_figures(html)
    assert len(figures) == len(keys)
    assert all(trace.get("y") for figure in figures for trace in figure["data"])
    throughput = next(f for f in figures if f["layout"]["title"]["text"].startswith("Sequential"))
    limit = next(t for t in throughput["data"] if t["name"] == "PCIe link usable bandwidth")
    assert set(limit["y"]) in ({3500.0}, {7000.0})
    assert "Bus-bound" in html and "FW1" in html and "Gen3" in html
    csv_response = client.get("/drives/acme-990-1tb/charts/iops.csv")
    assert csv_response.status_code == 200
    rows = list(csv.reader(io.StringIO(csv_response.content.decode())))
    assert rows[0][0] == "Block size" and len(rows) == 4  # header + 3 block sizes
    assert client.get("/drives/acme-990-1tb/charts/nope.csv").status_code == 404


def test_drive_page_charts_a_chosen_submission_and_validates_the_choice(client, browse_drive):
    other = make_browse_submission(drive_model=factories.DriveModelFactory(), firmware="X")
    run_submission = browse_drive.test_runs.order_by("id").first().submission_id
    assert client.get(f"/drives/acme-990-1tb/?submission={run_submission}").status_code == 200
    assert client.get("/drives/acme-990-1tb/?submission=not-a-uuid").status_code == 400
    assert client.get(f"/drives/acme-990-1tb/?submission={other.pk}").status_code == 404
    assert client.get("/drives/no-such-drive/").status_code == 404


def test_a_drive_seen_only_in_held_submissions_is_not_public(client):
    drive = factories.DriveModelFactory(slug="secret")
    make_browse_submission(drive_model=drive, status="held", published_at=None)
    assert client.get("/drives/secret/").status_code == 404
    assert "secret" not in client.get("/drives/").content.decode()


def test_compare_overlays_drives_and_validates_the_list(client, browse_drive):
    second = factories.DriveModelFactory(name="Other 2TB", slug="other-2tb")
    make_browse_submission(drive_model=second, scale=1.3)
    refresh_and_summarise(drive_model=second)
    response = client.get("/compare/?drives=acme-990-1tb,other-2tb")
    assert response.status_code == 200
    html = response.content.decode()
    figures = embedded_figures(html)
    assert figures
    names = {t["name"] for f in figures for t in f["data"]}
    assert "Acme NVMe 990 1TB" in names and "Other 2TB" in names
    assert client.get("/compare/charts/iops-100.csv?drives=acme-990-1tb,other-2tb").status_code == 200
    ticked = client.get("/compare/?drives=acme-990-1tb&drives=other-2tb")  # the drive list's checkboxes
    assert ticked.status_code == 200 and embedded_figures(ticked.content.decode()) == figures
    for query in ("a,b,c,d,e", "acme-990-1tb,unknown", "acme-990-1tb,<x>"):
        bad = client.get("/compare/", {"drives": query})
        assert bad.status_code == 400
        assert 'class="error"' in bad.content.decode()
    assert client.get("/compare/").status_code == 200


def test_methodology_quotes_the_rule_from_the_code(client):
    html = client.get("/methodology/").content.decode()
    assert "20% of" in html and "10% of" in html and "last 5 rounds" in html and "128b/130b" in html


def test_a_hostile_drive_name_is_text_everywhere(client, browse_drive):
    browse_drive.name = HOSTILE_NAME
    browse_drive.save()
    FW = "<img src=x onerror=alert(2)>"
    make_browse_submission(drive_model=browse_drive, firmware=FW)
    refresh_and_summarise(drive_model=browse_drive)
    second = factories.DriveModelFactory(slug="plain")
    make_browse_submission(drive_model=second)
    for url in ("/", "/drives/", "/drives/acme-990-1tb/", "/compare/?drives=acme-990-1tb,plain"):
        html = client.get(url).content.decode()
        assert "<script>alert(1)" not in html, url
        assert "<img src=x" not in html, url
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html or "\\u003Cscript\\u003E" in html, url
    figures = embedded_figures(client.get("/drives/acme-990-1tb/").content.decode())
    labels = [t.get("name", "") for f in figures for t in f["data"]]
    assert "&lt;img src=x onerror=alert(2)&gt;" in labels  # plotly shows entities literally, never as markup


def _count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_drive_page_list_and_compare_cost_the_same_queries_for_one_or_many_submissions(client):
    from django.core.cache import cache

    drive = factories.DriveModelFactory(slug="counted")
    make_browse_submission(drive_model=drive)
    refresh_and_summarise(drive_model=drive)
    other = factories.DriveModelFactory(slug="counted2")
    make_browse_submission(drive_model=other)
    refresh_and_summarise(drive_model=other)
    urls = (
        "/drives/counted/",
        "/drives/",
        "/drives/?sort=-bw_1m_read&pcie_generation=4",
        "/compare/?drives=counted,counted2",
    )

    def cold_and_warm() -> tuple[list[int], list[int]]:
        cache.clear()
        cold = [_count_queries(client, url) for url in urls]
        return cold, [_count_queries(client, url) for url in urls]

    few_cold, few_warm = cold_and_warm()
    for i in range(4):
        make_browse_submission(drive_model=drive, firmware=f"F{i}", generation=3 + i % 3)
    refresh_and_summarise(drive_model=drive)
    many_cold, many_warm = cold_and_warm()
    assert few_cold == many_cold
    assert few_warm == many_warm
    # the drive's statistics were written with its data: the first request after a change reads a few rows, the
    # next one (the same page for every reader without a session) one row; the factor effects are one more query
    assert few_cold[0] <= 10
    assert few_warm[0] == 1


def test_the_drive_page_follows_a_withdrawal_at_once_despite_the_cache(client, browse_drive):
    from submissions.services import submission_withdraw

    assert "from 2 submissions" in client.get("/drives/acme-990-1tb/").content.decode()
    submission = browse_drive.test_runs.order_by("id").first().submission
    submission_withdraw(submission=submission, by=submission.uploader)
    html = client.get("/drives/acme-990-1tb/").content.decode()
    assert "from 1 submission " in html
    assert str(submission.pk)[:8] not in html
