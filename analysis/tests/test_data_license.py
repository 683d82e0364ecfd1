"""Every surface of the data says its licence: CC BY 4.0 for the data, MIT for the code."""

import json
from pathlib import Path

import pytest
import yaml

from datasets.releases import build_release
from nvmedb_client import data_license

pytestmark = pytest.mark.django_db


def test_a_release_carries_the_licence_in_its_package_citation_and_readme(dataset_runs, releases_dir):
    assert build_release().number == 1
    release = releases_dir / "1"
    package = json.loads((release / "datapackage.json").read_text())
    assert package["licenses"] == [
        {"name": "CC-BY-4.0", "path": "https://creativecommons.org/licenses/by/4.0/", "title": data_license.TITLE}
    ]
    assert yaml.safe_load((release / "CITATION.cff").read_text())["license"] == "CC-BY-4.0"
    readme = (release / "README.md").read_text()
    assert "CC-BY-4.0" in readme and "MIT" in readme and "submissions.csv" in readme
    assert "README.md" in (release / "SHA256SUMS").read_text()


def test_the_release_readme_is_served_as_text(client, dataset_runs, releases_dir):
    build_release()
    response = client.get("/datasets/releases/1/README.md")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")


def test_the_datasets_page_names_the_licence(client):
    html = client.get("/datasets/").content.decode()
    assert 'id="license"' in html and "CC BY 4.0" in html and "MIT" in html


def test_the_read_api_names_the_licence(client, dataset_runs, releases_dir):
    root = client.get("/api/v1/").json()
    assert root["license"]["spdx"] == "CC-BY-4.0" and root["code_license"] == "MIT"
    assert root["endpoints"]["drives"].endswith("/api/v1/drives/")
    build_release()
    assert client.get("/api/v1/releases/1/").json()["license"] == "CC-BY-4.0"


def test_the_openapi_info_names_the_licence(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    assert schema["info"]["license"] == {"name": "CC-BY-4.0", "url": data_license.URL}
    assert "/api/v1/" in schema["paths"] and "/api/v1/me/data-license/" in schema["paths"]


def test_the_repository_has_a_data_licence_note():
    text = (Path(__file__).resolve().parents[2] / "LICENSE-DATA").read_text()
    assert "CC BY 4.0" in text and "MIT" in text
