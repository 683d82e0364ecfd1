"""Issue 21, "Units, not runs": the pages, exports and ranking count one value per physical unit, and a figure only
one contributor backs is labelled "unconfirmed" on the drive list, the drive page and in the aggregates export."""

from __future__ import annotations

import csv
import io
import re

import pytest

from analysis.models import DriveModelAggregate
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission

pytestmark = pytest.mark.django_db
READ = "iops_4k_read"


def headline_section(html: str) -> str:
    start = html.index('id="headline-section"')
    return html[start : html.index("</section>", start)]


def aggregates_csv(client, **params) -> list[dict]:
    response = client.get("/datasets/aggregates.csv", params)
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


@pytest.fixture
def drive():
    drive = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    alice = factories.UserFactory()
    make_browse_submission(drive_model=drive, uploader=alice)
    make_browse_submission(drive_model=drive, uploader=alice, scale=0.9)  # a second unit, the same contributor
    refresh_and_summarise(drive_model=drive)
    return drive


def test_a_figure_from_one_contributor_is_unconfirmed_on_the_drive_page_list_and_export(client, drive):
    overall = DriveModelAggregate.objects.get(drive_model=drive, metric=READ, factor="all")
    assert (overall.n_units, overall.n_contributors, overall.unconfirmed) == (2, 1, True)

    headlines = headline_section(client.get("/drives/acme-990-1tb/").content.decode())
    assert headlines.count(">unconfirmed</span>") >= 5  # every headline figure measured
    assert "1 contributor" in headlines
    assert ">unconfirmed</span>" in client.get("/drives/").content.decode()

    rows = aggregates_csv(client, drive="acme-990-1tb")
    assert rows and {row["drive_slug"] for row in rows} == {"acme-990-1tb"}
    read = next(row for row in rows if row["metric"] == READ and row["factor"] == "all")
    assert (read["n_units"], read["n_contributors"], read["unconfirmed"]) == ("2", "1", "true")
    assert float(read["median"]) == overall.median


def test_a_second_independent_contributor_confirms_the_figure(client, drive):
    make_browse_submission(drive_model=drive, uploader=factories.UserFactory(), scale=1.1)
    refresh_and_summarise(drive_model=drive)
    overall = DriveModelAggregate.objects.get(drive_model=drive, metric=READ, factor="all")
    assert (overall.n_units, overall.n_contributors, overall.unconfirmed) == (3, 2, False)
    headlines = headline_section(client.get("/drives/acme-990-1tb/").content.decode())
    assert "unconfirmed" not in headlines and "2 contributors" in headlines
    read = next(row for row in aggregates_csv(client) if row["metric"] == READ and row["factor"] == "all")
    assert (read["n_contributors"], read["unconfirmed"]) == ("2", "false")


def test_the_read_api_serves_contributors_and_unconfirmed(client, drive):
    data = client.get("/api/v1/drives/acme-990-1tb/").json()
    read = next(a for a in data["aggregates"] if a["metric"] == READ and a["factor"] == "all")
    assert (read["n_contributors"], read["unconfirmed"]) == (1, True)


def test_a_unit_uploaded_many_times_cannot_lift_its_drive_in_the_ranking(client):
    stuffed = factories.DriveModelFactory(name="Stuffed SSD", slug="stuffed")
    honest = factories.DriveModelFactory(name="Honest SSD", slug="honest")
    for value in (24_000.0, 24_475.0, 25_000.0):
        factories.TestRunFactory(drive_model=stuffed, headline={READ: value})
    attacker, unit = factories.UserFactory(), factories.PhysicalUnitFactory(drive_model=stuffed)
    for _ in range(6):
        factories.TestRunFactory(
            drive_model=stuffed, unit=unit, submission=factories.SubmissionFactory(uploader=attacker),
            headline={READ: 200_000.0},
        )  # fmt: skip
    factories.TestRunFactory(drive_model=honest, headline={READ: 30_000.0})
    for drive in (stuffed, honest):
        refresh_and_summarise(drive_model=drive)

    assert DriveModelAggregate.objects.get(drive_model=stuffed, metric=READ, factor="all").median == 24_737.5
    html = client.get("/drives/", {"sort": f"-{READ}"}).content.decode()
    order = [slug for slug in re.findall(r'href="/drives/([a-z0-9-]+)/"', html) if slug in ("stuffed", "honest")]
    assert order[:1] == ["honest"] and "stuffed" in order
