"""Releases in an S3-compatible bucket (moto's server on loopback): built in a temporary directory that is removed,
uploaded with SHA256SUMS last, served from the bucket byte for byte, and an unpublished upload is never shown."""

from __future__ import annotations

import hashlib
import json
import tempfile

import pytest

from datasets.releases import SUMS, build_release, list_releases
from datasets.tables import TABLES
from tests.s3server import free_port


@pytest.fixture
def build_temp(tmp_path, monkeypatch):
    """The temporary directory of this machine, to see that a build leaves nothing in it."""
    temp = tmp_path / "machine-tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def sums_of(text: str) -> dict[str, str]:
    return {name: digest for digest, _, name in (line.partition("  ") for line in text.splitlines())}


@pytest.mark.django_db
def test_a_release_is_built_into_the_bucket_and_served_from_it_with_matching_checksums(
    client, dataset_runs, releases_dir, object_storage, build_temp
):
    server, bucket = object_storage
    assert build_release().number == 1
    keys = server.keys(bucket)
    names = {key.removeprefix("releases/1/") for key in keys}
    assert all(key.startswith("releases/1/") for key in keys)
    assert {f"{table}.{fmt}" for table in TABLES for fmt in ("csv", "parquet")} <= names
    assert {"datapackage.json", SUMS, "CITATION.cff", "CHANGELOG.md", "README.md"} <= names

    sums = sums_of(server.read(bucket, f"releases/1/{SUMS}").decode())
    assert set(sums) == names - {SUMS}
    for name, digest in sums.items():
        stored = server.read(bucket, f"releases/1/{name}")
        assert hashlib.sha256(stored).hexdigest() == digest, name
    package = json.loads(server.read(bucket, "releases/1/datapackage.json"))
    for resource in package["resources"]:
        assert resource["hash"] == f"sha256:{sums[resource['path']]}"

    for name in ("measurements.csv", "drives.parquet", SUMS):
        response = client.get(f"/datasets/releases/1/{name}")
        assert response.status_code == 200, name
        served = b"".join(response.streaming_content)
        assert served == server.read(bucket, f"releases/1/{name}")
        assert int(response["Content-Length"]) == len(served)
    assert sums["measurements.parquet"] in client.get("/datasets/releases/").content.decode()

    assert not releases_dir.exists(), "nothing of a release is kept on local disk"
    assert list(build_temp.iterdir()) == [], "the build's temporary directory is removed"
    assert build_release().number is None  # nothing changed, read back from the bucket
    assert server.keys(bucket) == keys


@pytest.mark.django_db
def test_an_upload_that_died_before_its_checksums_is_no_release_and_the_next_build_replaces_it(
    client, dataset_runs, object_storage
):
    server, bucket = object_storage
    server.client().put_object(Bucket=bucket, Key="releases/1/measurements.csv", Body=b"half,of,a\n")
    assert list_releases() == []
    assert client.get("/datasets/releases/1/measurements.csv").status_code == 404

    assert build_release().number == 1
    sums = sums_of(server.read(bucket, f"releases/1/{SUMS}").decode())
    stored = server.read(bucket, "releases/1/measurements.csv")
    assert hashlib.sha256(stored).hexdigest() == sums["measurements.csv"]


@pytest.mark.django_db
def test_releases_while_the_bucket_is_unreachable_are_a_503_not_an_empty_list(
    client, dataset_runs, object_storage, settings
):
    server, bucket = object_storage
    build_release()
    from django.core.cache import cache

    cache.clear()
    settings.STORAGES = {**settings.STORAGES, **server.storages(bucket, endpoint_url=f"http://127.0.0.1:{free_port()}")}
    for url in ("/datasets/releases/", "/datasets/releases/1/measurements.csv"):
        response = client.get(url)
        assert response.status_code == 503 and int(response["Retry-After"]) > 0, url
