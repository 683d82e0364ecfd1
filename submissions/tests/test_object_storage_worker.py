"""More than one machine: the web side (this test process) and a real `celery worker` process share nothing but
PostgreSQL, Redis and an S3-compatible bucket (moto's server on loopback). Each has local directories of its own, and
the test checks that neither keeps anything there: upload → verify → ingest → release all go through the bucket."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import pytest

from submissions.models import SubmissionStatus
from submissions.tests.conftest import register_key
from submissions.tests.test_pipeline_integration import (  # noqa: F401 (start_worker is a fixture)
    final,
    publishing_to,
    redis_url,
    start_worker,
    upload,
    wait_for,
)
from tests.s3server import S3Server

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.celery_worker]


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def sums_of(text: str) -> dict[str, str]:
    return {name: digest for digest, _, name in (line.partition("  ") for line in text.splitlines())}


@pytest.fixture
def worker_machine(tmp_path) -> dict[str, Path]:
    """The worker's own local directories, none of them the web side's."""
    root = tmp_path / "worker-machine"
    dirs = {name: root / name for name in ("var", "bundles", "releases", "tmp")}
    for path in dirs.values():
        path.mkdir(parents=True)
    return dirs


def worker_environment(server: S3Server, bucket: str, dirs: dict[str, Path]) -> dict[str, str]:
    return {
        **server.environment(bucket),
        "NVMEDB_VAR_DIR": str(dirs["var"]),
        "BUNDLE_STORAGE_DIR": str(dirs["bundles"]),
        "NVMEDB_RELEASES_DIR": str(dirs["releases"]),
        "TMPDIR": str(dirs["tmp"]),
        "NVMEDB_REVIEW_FIRST_N": "0",
    }


def test_upload_verify_ingest_and_release_go_through_the_bucket_only(
    client,
    owner,
    owner_api,
    publishable_bundle,
    object_storage,
    bundle_storage,
    tmp_path,
    monkeypatch,
    start_worker,  # noqa: F811 (the fixture imported above)
    worker_machine,
):
    server, bucket = object_storage
    web_tmp = tmp_path / "web-tmp"  # the web side's temporary directory
    web_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(web_tmp))
    worker = start_worker(**worker_environment(server, bucket, worker_machine))
    path = publishable_bundle(register_key(owner))

    with publishing_to(redis_url(), start_worker.queue):
        submission = upload(owner_api, path)
    assert server.keys(bucket) == [submission.storage_name]
    assert server.read(bucket, submission.storage_name) == path.read_bytes()

    done = final(submission, timeout=180, worker=worker)
    assert done.status == SubmissionStatus.PUBLISHED, done.report
    assert "validate_submission" in worker.log_text()

    drive = done.test_runs.first().drive_model
    page = client.get(f"/drives/{drive.slug}/")
    assert page.status_code == 200
    raw = f"/submissions/{done.pk}/files/system/nvme-id-ctrl.json"
    assert raw in client.get(f"/submissions/{done.pk}/").content.decode()
    shown = client.get(raw)
    assert shown.status_code == 200 and b'"[scrubbed]"' in shown.content

    from analysis.tasks import build_release

    with publishing_to(redis_url(), start_worker.queue):
        build_release.delay()
    wait_for(
        lambda: "releases/1/SHA256SUMS" in server.keys(bucket, "releases/"),
        timeout=180,
        what="release 1 in the bucket",
        worker=worker,
    )
    sums = sums_of(server.read(bucket, "releases/1/SHA256SUMS").decode())
    assert {"measurements.csv", "measurements.parquet", "datapackage.json"} <= set(sums)
    assert {key.removeprefix("releases/1/") for key in server.keys(bucket, "releases/")} == {*sums, "SHA256SUMS"}
    for name, digest in sums.items():
        assert hashlib.sha256(server.read(bucket, f"releases/1/{name}")).hexdigest() == digest, name
    download = client.get("/datasets/releases/1/measurements.csv")
    assert download.status_code == 200
    served = b"".join(download.streaming_content)
    assert hashlib.sha256(served).hexdigest() == sums["measurements.csv"]
    assert str(done.pk) in served.decode()

    worker.stop()
    assert files_under(bundle_storage) == [] and files_under(web_tmp) == [], "nothing on the web side's disk"
    for name in ("bundles", "releases", "tmp"):
        assert files_under(worker_machine[name]) == [], f"the worker left files in its {name} directory"


@pytest.fixture
def own_s3_server():
    """A server of this test's own, which it stops and starts again (its objects survive in this process)."""
    server = S3Server().start()
    yield server
    server.stop()


def test_a_validation_while_the_bucket_is_down_is_retried_by_the_worker_and_published_once_it_is_back(
    owner,
    owner_api,
    publishable_bundle,
    own_s3_server,
    settings,
    start_worker,  # noqa: F811 (the fixture imported above)
    worker_machine,
):
    bucket = own_s3_server.new_bucket()
    settings.STORAGES = {**settings.STORAGES, **own_s3_server.storages(bucket)}
    with publishing_to(redis_url(), start_worker.queue):
        submission = upload(owner_api, publishable_bundle(register_key(owner)))
    assert own_s3_server.keys(bucket) == [submission.storage_name]

    own_s3_server.stop()
    worker = start_worker(**worker_environment(own_s3_server, bucket, worker_machine))
    wait_for(lambda: "StorageUnavailable" in worker.log_text(), timeout=120, what="a failed attempt", worker=worker)
    wait_for(lambda: "Retry in" in worker.log_text(), timeout=30, what="the retry", worker=worker)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.VALIDATING, submission.report
    assert not submission.is_final

    own_s3_server.start()
    done = final(submission, timeout=240, worker=worker)
    assert done.status == SubmissionStatus.PUBLISHED, done.report
    assert done.attempts >= 2
