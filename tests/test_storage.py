"""Where bundles and releases are kept: local directories unless NVMEDB_S3_BUCKET names a bucket; reads from a bucket
are streams; an unreachable bucket is an outage (StorageUnavailable, a 503), a missing object is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, storages

from nvmedb.faults import unavailable_code
from nvmedb.object_storage import ObjectStorage, is_outage
from nvmedb.settings.storages import FILE_SYSTEM, OBJECT_STORAGE, storages_from_env
from nvmedb.storage import StorageUnavailable, list_sizes, open_stream
from tests.s3server import free_port

S3_VARIABLES = ("NVMEDB_S3_BUCKET", "NVMEDB_S3_RELEASES_BUCKET", "NVMEDB_S3_ENDPOINT_URL", "BUNDLE_STORAGE_BACKEND",
                "BUNDLE_STORAGE_DIR", "NVMEDB_S3_ADDRESSING_STYLE")  # fmt: skip


@pytest.fixture
def clean_env(monkeypatch):
    for name in S3_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_without_a_bucket_bundles_and_releases_stay_in_local_directories(clean_env, tmp_path):
    configured = storages_from_env(var_dir=tmp_path, releases_dir=tmp_path / "rel")
    assert configured["default"] == {"BACKEND": FILE_SYSTEM, "OPTIONS": {"location": str(tmp_path / "bundles")}}
    assert configured["releases"] == {"BACKEND": FILE_SYSTEM, "OPTIONS": {"location": str(tmp_path / "rel")}}


def test_a_bucket_holds_bundles_at_its_root_and_releases_under_releases(clean_env, tmp_path):
    clean_env.setenv("NVMEDB_S3_BUCKET", "site-bucket")
    clean_env.setenv("NVMEDB_S3_ENDPOINT_URL", "http://minio:9000")
    configured = storages_from_env(var_dir=tmp_path, releases_dir=tmp_path / "rel")
    bundles, releases = configured["default"], configured["releases"]
    assert bundles["BACKEND"] == releases["BACKEND"] == OBJECT_STORAGE
    assert bundles["OPTIONS"]["bucket_name"] == releases["OPTIONS"]["bucket_name"] == "site-bucket"
    assert (bundles["OPTIONS"]["location"], releases["OPTIONS"]["location"]) == ("", "releases")
    assert bundles["OPTIONS"]["endpoint_url"] == "http://minio:9000"
    assert bundles["OPTIONS"]["addressing_style"] == "path"
    assert bundles["OPTIONS"]["default_acl"] is None, "objects stay private"
    storage = ObjectStorage(**bundles["OPTIONS"])  # the options are ones the backend accepts
    assert storage.client_config.connect_timeout == 5

    clean_env.setenv("NVMEDB_S3_RELEASES_BUCKET", "public-releases")
    configured = storages_from_env(var_dir=tmp_path, releases_dir=tmp_path / "rel")
    assert configured["releases"]["OPTIONS"]["bucket_name"] == "public-releases"
    assert configured["default"]["OPTIONS"]["bucket_name"] == "site-bucket"


def test_a_bucket_and_another_bundle_backend_together_are_refused(clean_env, tmp_path):
    clean_env.setenv("NVMEDB_S3_BUCKET", "site-bucket")
    clean_env.setenv("BUNDLE_STORAGE_BACKEND", "some.Storage")
    with pytest.raises(ImproperlyConfigured, match="not both"):
        storages_from_env(var_dir=tmp_path, releases_dir=tmp_path)


def _client_error(status: int, code: str) -> ClientError:
    return ClientError({"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, "GetObject")


@pytest.mark.parametrize(
    ("exc", "outage"),
    [
        (EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), True),
        (_client_error(503, "SlowDown"), True),
        (_client_error(500, "InternalError"), True),
        (_client_error(404, "NoSuchBucket"), True),
        (_client_error(404, "NoSuchKey"), False),
        (_client_error(403, "AccessDenied"), False),
        (NoCredentialsError(), False),
        (ValueError("bug"), False),
    ],
)
def test_only_a_bucket_that_is_away_counts_as_an_outage(exc, outage):
    assert is_outage(exc) is outage


def test_an_unavailable_storage_is_answered_as_storage_unavailable():
    assert unavailable_code(StorageUnavailable("object storage did not answer")) == "storage_unavailable"
    assert unavailable_code(FileNotFoundError(2, "No such object")) is None


@pytest.mark.django_db
def test_a_bucket_object_is_read_as_a_stream_and_listed_with_its_size(object_storage):
    server, bucket = object_storage
    storage = storages["default"]
    payload = bytes(range(256)) * 4096  # 1 MiB
    assert storage.save("bundles/x/one.bin", ContentFile(payload)) == "bundles/x/one.bin"
    storage.save("bundles/x/two.bin", ContentFile(b"22"))
    storage.save("bundles/x/deeper/three.bin", ContentFile(b"333"))
    with open_stream(storage, "bundles/x/one.bin") as stream:
        assert not stream.seekable()
        assert stream.read(10) == payload[:10]
        assert stream.read() == payload[10:]
    assert list_sizes(storage, "bundles/x") == {"one.bin": len(payload), "two.bin": 2}
    assert list_sizes(storage, "bundles/nothing") == {}
    with pytest.raises(FileNotFoundError):
        open_stream(storage, "bundles/x/missing.bin")
    assert server.keys(bucket, "bundles/x/") == sorted(
        ["bundles/x/one.bin", "bundles/x/two.bin", "bundles/x/deeper/three.bin"]
    )


@pytest.mark.django_db
def test_an_unreachable_bucket_raises_storage_unavailable_on_every_operation(settings, s3_server):
    settings.STORAGES = {
        **settings.STORAGES,
        **s3_server.storages("any-bucket", endpoint_url=f"http://127.0.0.1:{free_port()}"),
    }
    storage = storages["default"]
    for operation in (
        lambda: open_stream(storage, "a"),
        lambda: list_sizes(storage, "a"),
        lambda: storage.save("a", ContentFile(b"x")),
        lambda: storage.exists("a"),
        lambda: storage.listdir(""),
        lambda: storage.size("a"),
    ):
        with pytest.raises(StorageUnavailable):
            operation()


def test_a_local_directory_is_listed_with_sizes_too(tmp_path: Path):
    storage = FileSystemStorage(location=tmp_path)
    storage.save("1/a.csv", ContentFile(b"abc"))
    assert list_sizes(storage, "1") == {"a.csv": 3}
    assert list_sizes(storage, "2") == {}
    with open_stream(storage, "1/a.csv") as stream:
        assert stream.read() == b"abc"
