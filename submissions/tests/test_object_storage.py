"""Bundles in an S3-compatible bucket (moto's server on loopback): an upload goes to the bucket, validation and raw-file
pages read it from there, and an unreachable bucket is an outage (503, a retried validation), never a rejection."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from nvmedb.storage import StorageUnavailable
from submissions import services
from submissions.models import Submission, SubmissionStatus
from submissions.tests.conftest import register_key
from tests.s3server import free_port

UPLOAD = "/api/v1/submissions/"
PIECE = 16 * 1024


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


class BucketSwitch:
    """Points this test's storages at the bucket's server (`up`) or at a port nobody listens on (`down`)."""

    def __init__(self, settings, server, bucket: str) -> None:
        self._settings, self._server, self._bucket = settings, server, bucket

    def up(self) -> None:
        self._settings.STORAGES = {**self._settings.STORAGES, **self._server.storages(self._bucket)}

    def down(self) -> None:
        nowhere = f"http://127.0.0.1:{free_port()}"
        self._settings.STORAGES = {
            **self._settings.STORAGES,
            **self._server.storages(self._bucket, endpoint_url=nowhere),
        }


@pytest.fixture
def bucket(settings, object_storage) -> BucketSwitch:
    return BucketSwitch(settings, *object_storage)


@pytest.mark.django_db
def test_an_upload_is_kept_in_the_bucket_validated_from_it_and_its_raw_files_served_from_it(
    client, owner, owner_api, publishable_bundle, upload, object_storage, bundle_storage
):
    server, bucket = object_storage
    path = publishable_bundle(register_key(owner))
    seen = upload(owner_api, path)
    assert seen["status"] == SubmissionStatus.PUBLISHED, seen
    submission = Submission.objects.get(pk=seen["id"])
    assert server.keys(bucket) == [submission.storage_name]
    stored = server.read(bucket, submission.storage_name)
    assert stored == path.read_bytes() and hashlib.sha256(stored).hexdigest() == submission.sha256
    assert files_under(bundle_storage) == [], "nothing of the upload may be on the web side's disk"

    raw = f"/submissions/{submission.pk}/files/system/nvme-id-ctrl.json"
    assert raw in client.get(f"/submissions/{submission.pk}/").content.decode()
    shown = client.get(raw)
    assert shown.status_code == 200 and shown["Content-Type"].startswith("text/plain")
    assert b'"[scrubbed]"' in shown.content
    server.client().delete_object(Bucket=bucket, Key=submission.storage_name)
    assert client.get(raw).status_code == 404, "the page is read from the bucket, not from a copy"


@pytest.mark.django_db
def test_an_upload_while_the_bucket_is_unreachable_answers_503_and_keeps_nothing(
    owner, owner_api, publishable_bundle, object_storage, bucket
):
    server, name = object_storage
    bucket.down()
    response = owner_api.post(
        UPLOAD, data=publishable_bundle(register_key(owner)).read_bytes(), content_type="application/octet-stream"
    )
    assert response.status_code == 503, response.content
    assert int(response["Retry-After"]) > 0
    assert response.json()["code"] == "storage_unavailable"
    assert not Submission.objects.exists()
    assert server.keys(name) == []


@pytest.mark.django_db
def test_a_validation_while_the_bucket_is_unreachable_is_left_to_retry_not_rejected(
    owner, owner_api, publishable_bundle, bucket, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):  # stored; its validation not run yet
        response = owner_api.post(
            UPLOAD, data=publishable_bundle(register_key(owner)).read_bytes(), content_type="application/octet-stream"
        )
    assert response.status_code == 202, response.content
    submission_id = response.json()["id"]

    bucket.down()
    with pytest.raises(StorageUnavailable):  # the task retries on it (submissions.tasks.TRANSIENT_ERRORS)
        services.submission_validate(submission_id=submission_id)
    waiting = Submission.objects.get(pk=submission_id)
    assert waiting.status == SubmissionStatus.VALIDATING and waiting.attempts == 1, waiting.report

    bucket.up()
    done = services.submission_validate(submission_id=submission_id)
    assert done.status == SubmissionStatus.PUBLISHED, done.report


@pytest.mark.django_db
def test_a_raw_file_while_the_bucket_is_unreachable_is_a_503_with_retry_after(
    client, owner, owner_api, publishable_bundle, upload, bucket
):
    submission_id = upload(owner_api, publishable_bundle(register_key(owner)))["id"]
    bucket.down()
    response = client.get(f"/submissions/{submission_id}/files/system/nvme-id-ctrl.json")
    assert response.status_code == 503 and int(response["Retry-After"]) > 0


class Trickle:
    """A request body that arrives in pieces, as from a socket: every read returns at most 16 KiB."""

    def __init__(self, data: bytes) -> None:
        self._data, self._at = data, 0

    def read(self, size: int = -1) -> bytes:
        size = PIECE if size is None or size < 0 else min(size, PIECE)
        piece = self._data[self._at : self._at + size]
        self._at += len(piece)
        return piece


@pytest.mark.django_db
def test_a_bundle_of_several_upload_parts_arriving_in_small_pieces_reaches_the_bucket_whole(owner, object_storage):
    server, bucket = object_storage
    data = b"\x1f\x8b" + hashlib.sha256(b"seed").digest() * (20 * 1024**2 // 32)  # 20 MiB: three parts of 8 MiB
    submission, created = services.submission_create(uploader=owner, stream=Trickle(data), expected_size=len(data))
    assert created and submission.size == len(data)
    stored = server.read(bucket, submission.storage_name)
    assert len(stored) == len(data) and stored == data
    assert submission.sha256 == hashlib.sha256(data).hexdigest()


@pytest.mark.django_db
def test_a_bundle_over_the_size_limit_leaves_nothing_in_the_bucket(owner, object_storage, settings):
    from submissions.upload import BundleTooLarge

    server, bucket = object_storage
    settings.NVMEDB_MAX_BUNDLE_BYTES = 10 * 1024**2
    data = b"\x1f\x8b" + b"\0" * (12 * 1024**2)
    with pytest.raises(BundleTooLarge):
        services.submission_create(uploader=owner, stream=Trickle(data))
    assert server.keys(bucket) == []
    assert server.client().list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    assert not Submission.objects.exists()
