"""POST /api/v1/submissions/: who may upload, what is refused at the door, and duplicates."""

import gzip
import hashlib
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from submissions import services
from submissions.models import Submission, SubmissionStatus
from submissions.tests.conftest import api_client
from submissions.upload import BundleTooLarge, HashingReader

URL = "/api/v1/submissions/"


def gzip_body(text: str = "not really a bundle") -> bytes:
    return gzip.compress(text.encode(), mtime=0)


def post_raw(client, body: bytes, **extra):
    return client.post(URL, data=body, content_type="application/octet-stream", **extra)


def stored_files(location) -> list:
    return [p for p in location.rglob("*") if p.is_file()] if location.exists() else []


def test_it_refuses_an_upload_without_a_token(db, anonymous_api, bundle_storage):
    response = post_raw(anonymous_api, gzip_body())
    assert response.status_code == 401
    assert response.json() == {"code": "not_authenticated", "detail": "Authentication credentials were not provided."}
    assert Submission.objects.count() == 0
    assert stored_files(bundle_storage) == []


def test_it_refuses_an_unknown_token(db):
    response = post_raw(api_client("nvmedb_not-a-real-token"), gzip_body())
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"
    assert "no account has this token" in response.json()["detail"]


def test_it_refuses_a_revoked_token(owner, owner_token, bundle_storage):
    token = owner.api_tokens.get()
    services.api_token_revoke(token=token)
    response = post_raw(api_client(owner_token), gzip_body())
    assert response.status_code == 401
    assert "revoked" in response.json()["detail"]
    assert Submission.objects.count() == 0
    assert stored_files(bundle_storage) == []


def test_it_refuses_a_token_of_a_disabled_account(owner, owner_token):
    owner.is_active = False
    owner.save()
    response = post_raw(api_client(owner_token), gzip_body())
    assert response.status_code == 401
    assert "disabled" in response.json()["detail"]


def test_it_accepts_a_raw_body_streams_it_to_storage_and_queues_it(
    owner, owner_api, bundle_storage, django_capture_on_commit_callbacks
):
    body = gzip_body("x" * 5000)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post_raw(owner_api, body, HTTP_X_BUNDLE_FILENAME="run.nvmedb.tar.gz")
    assert response.status_code == 202, response.content
    data = response.json()
    submission = Submission.objects.get()
    assert data["id"] == str(submission.pk)
    assert data["status"] == "received"
    assert data["url"] == f"http://testserver/api/v1/submissions/{submission.pk}/"
    assert data["page_url"] == f"http://testserver/submissions/{submission.pk}/"
    assert submission.uploader == owner
    assert submission.sha256 == hashlib.sha256(body).hexdigest()
    assert submission.size == len(body)
    assert submission.original_name == "run.nvmedb.tar.gz"
    assert (bundle_storage / submission.storage_name).read_bytes() == body
    assert len(callbacks) == 1, "validation is queued once, after the row is committed"


def test_it_accepts_the_multipart_field_bundle(owner_api, bundle_storage):
    body = gzip_body("multipart")
    upload = SimpleUploadedFile("mine.nvmedb.tar.gz", body, content_type="application/gzip")
    response = owner_api.post(URL, {"bundle": upload}, format="multipart")
    assert response.status_code == 202, response.content
    submission = Submission.objects.get()
    assert submission.original_name == "mine.nvmedb.tar.gz"
    assert (bundle_storage / submission.storage_name).read_bytes() == body


def test_it_names_the_missing_multipart_field(owner_api):
    response = owner_api.post(URL, {"file": SimpleUploadedFile("x.gz", gzip_body())}, format="multipart")
    assert response.status_code == 400
    assert response.json()["code"] == "missing_bundle"


def test_the_same_bundle_again_returns_the_existing_submission(owner_api, bundle_storage):
    body = gzip_body("twice")
    first = post_raw(owner_api, body)
    second = post_raw(owner_api, body)
    assert first.status_code == 202
    assert second.status_code == 200
    assert second.json()["id"] == first.json()["id"]
    assert Submission.objects.count() == 1
    assert len(stored_files(bundle_storage)) == 1, "the second copy is not kept"


def test_a_strangers_copy_sent_first_never_blocks_the_owners_upload(owner, owner_api, stranger, stranger_api):
    body = gzip_body("mine")
    theirs = post_raw(stranger_api, body)
    mine = post_raw(owner_api, body)
    assert theirs.status_code == mine.status_code == 202
    assert theirs.json()["id"] != mine.json()["id"]
    assert Submission.objects.get(pk=mine.json()["id"]).uploader == owner
    assert Submission.objects.get(pk=theirs.json()["id"]).uploader == stranger
    again = post_raw(owner_api, body)
    assert again.status_code == 200 and again.json()["id"] == mine.json()["id"], "duplicates are per account"


def test_a_body_that_is_not_gzip_is_refused_as_not_an_archive(owner_api, bundle_storage):
    response = post_raw(owner_api, b"<html>definitely not a tarball</html>")
    assert response.status_code == 400
    assert response.json()["code"] == "not_an_archive"
    assert "not a gzip-compressed tar archive" in response.json()["detail"]
    assert Submission.objects.count() == 0
    assert stored_files(bundle_storage) == []


def test_an_empty_body_is_refused(owner_api, bundle_storage):
    response = post_raw(owner_api, b"")
    assert response.status_code == 400
    assert response.json()["code"] == "empty_body"
    assert Submission.objects.count() == 0
    assert stored_files(bundle_storage) == []


def test_another_content_type_is_refused(owner_api):
    response = owner_api.post(URL, data={"bundle": "x"}, format="json")
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


def test_an_oversized_body_is_refused_from_its_content_length(owner_api, settings, bundle_storage):
    settings.NVMEDB_MAX_BUNDLE_BYTES = 1000
    response = post_raw(owner_api, gzip_body() + b"\0" * 2000)
    assert response.status_code == 413
    assert response.json() == {
        "code": "too_large",
        "detail": "The bundle is larger than this site accepts (1000 bytes).",
    }
    assert Submission.objects.count() == 0
    assert stored_files(bundle_storage) == []


def test_an_oversized_multipart_file_is_stopped_while_reading(owner_api, settings, bundle_storage):
    # The form's Content-Length is within the allowance for multipart overhead, so only counting while reading
    # catches this file.
    settings.NVMEDB_MAX_BUNDLE_BYTES = 1000
    upload = SimpleUploadedFile("big.nvmedb.tar.gz", gzip_body() + b"\0" * 1500)
    response = owner_api.post(URL, {"bundle": upload}, format="multipart")
    assert response.status_code == 413
    assert response.json()["code"] == "too_large"
    assert Submission.objects.count() == 0
    assert stored_files(bundle_storage) == []


def test_the_hashing_reader_stops_at_the_limit_without_reading_everything():
    source = io.BytesIO(b"a" * (5 * 1024 * 1024))
    reader = HashingReader(source, limit=1024 * 1024 + 10)
    with pytest.raises(BundleTooLarge):
        while reader.read(1024 * 1024):
            pass
    assert source.tell() == 2 * 1024 * 1024, "it stopped after the chunk that crossed the limit"


def test_uploads_are_rate_limited_per_token(owner_api, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "upload_user": "2/hour"},
    }
    assert post_raw(owner_api, gzip_body("1")).status_code == 202
    assert post_raw(owner_api, gzip_body("2")).status_code == 202
    response = post_raw(owner_api, gzip_body("3"))
    assert response.status_code == 429
    assert response.json()["code"] == "throttled"
    assert Submission.objects.count() == 2


def test_uploads_are_rate_limited_per_address(owner_api, stranger_api, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "upload_ip": "2/hour"},
    }
    assert post_raw(owner_api, gzip_body("1")).status_code == 202
    assert post_raw(stranger_api, gzip_body("2")).status_code == 202
    assert post_raw(stranger_api, gzip_body("3")).status_code == 429


def test_a_new_submission_starts_received_with_one_event(owner_api):
    post_raw(owner_api, gzip_body())
    submission = Submission.objects.get()
    assert submission.status == SubmissionStatus.RECEIVED
    assert [(e.from_status, e.to_status) for e in submission.events.all()] == [("", "received")]
