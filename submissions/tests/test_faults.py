"""Faults get clear answers: an unavailable database, queue or bundle storage is a 503 JSON with Retry-After that keeps
nothing; pages keep serving while Redis is away; a full disk in the worker ends the task and retries it."""

from __future__ import annotations

import errno
import io
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
from django.core.files.storage import FileSystemStorage
from django.db import OperationalError, connection

from submissions import pipeline, services
from submissions.models import Submission, SubmissionStatus
from submissions.tasks import validate_submission
from submissions.tests.bundles import bundle_factory
from submissions.tests.test_pipeline_integration import publishing_to

UPLOAD = "/api/v1/submissions/"


def upload(client, data: bytes):
    return client.post(UPLOAD, data=data, content_type="application/octet-stream")


def stored_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def assert_unavailable(response, code: str) -> None:
    assert response.status_code == 503, response.content
    assert response["Content-Type"] == "application/json"
    assert int(response["Retry-After"]) > 0
    body = response.json()
    assert body["code"] == code and "Try again later" in body["detail"]


@pytest.fixture
def signed_bundle(tmp_path, shared_samples, owner) -> Path:
    key = bundle_factory.new_signing_key()
    services.signing_key_register(user=owner, public_key=bundle_factory.public_key_bytes(key))
    return bundle_factory.make_bundle(
        tmp_path / "bundle", fio_samples=bundle_factory.default_fio_samples(shared_samples), signing_key=key
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- PostgreSQL ----------------------------------------------------------------------------------------------------


class DatabaseFaults:
    """PostgreSQL faults for this test's connection: the server closing it (what a restart does to the connections a
    web worker keeps) and the server being down (nobody listening where it was)."""

    def __init__(self) -> None:
        self.saved = connection.settings_dict["HOST"], connection.settings_dict["PORT"]

    def terminate_connections(self) -> None:
        connection.ensure_connection()
        db = connection.settings_dict
        with psycopg.connect(
            host=db["HOST"] or "localhost", port=db["PORT"] or 5432, user=db["USER"], password=db["PASSWORD"],
            dbname=db["NAME"], autocommit=True,
        ) as admin:  # fmt: skip
            others = "datname = current_database() AND pid <> pg_backend_pid()"
            admin.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE {others}")
            while admin.execute(f"SELECT 1 FROM pg_stat_activity WHERE {others}").fetchone():
                time.sleep(0.05)

    def go_down(self) -> None:
        connection.close()
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(free_port()))

    def restore(self) -> None:
        connection.close()
        connection.settings_dict["HOST"], connection.settings_dict["PORT"] = self.saved


@pytest.fixture
def database_faults(transactional_db):
    faults = DatabaseFaults()
    yield faults
    faults.restore()  # before the database is flushed


def wsgi_get(path: str, **headers) -> int:
    """A request the way a deployed web worker serves it (Django's test client skips the per-request connection
    checks that a real WSGI handler makes)."""
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import RequestFactory

    environ = RequestFactory()._base_environ(PATH_INFO=path, REQUEST_METHOD="GET", **headers)
    statuses = []
    response = WSGIHandler()(environ, lambda status, headers, exc_info=None: statuses.append(status))
    b"".join(response)
    response.close()
    return int(statuses[0].split()[0])


@pytest.mark.postgres
def test_the_first_request_after_the_database_closed_its_connections_succeeds(owner_token, database_faults):
    auth = {"HTTP_AUTHORIZATION": f"Token {owner_token}"}
    assert wsgi_get(UPLOAD, **auth) == 200
    assert wsgi_get("/drives/") == 200
    database_faults.terminate_connections()
    assert wsgi_get(UPLOAD, **auth) == 200
    database_faults.terminate_connections()
    assert wsgi_get("/drives/") == 200


@pytest.mark.postgres
def test_an_upload_while_the_database_is_down_answers_503_json_and_keeps_nothing(
    owner_api, signed_bundle, bundle_storage, database_faults
):
    database_faults.go_down()
    assert_unavailable(upload(owner_api, signed_bundle.read_bytes()), "database_unavailable")
    assert stored_files(bundle_storage) == []


@pytest.mark.postgres
def test_a_bundle_stored_when_the_database_connection_breaks_is_deleted_again(
    owner, signed_bundle, bundle_storage, database_faults
):
    database_faults.terminate_connections()  # no request start here, so nothing checks the connection before use
    with open(signed_bundle, "rb") as stream, pytest.raises(OperationalError):
        services.submission_create(uploader=owner, stream=stream)
    assert stored_files(bundle_storage) == []


@pytest.mark.postgres
def test_pages_and_the_read_api_answer_503_not_a_server_error_while_the_database_is_down(client, database_faults):
    database_faults.go_down()
    response = client.get("/drives/")
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert_unavailable(client.get("/api/v1/drives/"), "database_unavailable")


# --- storage -------------------------------------------------------------------------------------------------------


class FullDiskStorage(FileSystemStorage):
    """A disk that fills up after the first megabyte of a file: the fault a full volume gives (OSError ENOSPC),
    which CI cannot produce on its real disks without root and a mount of its own."""

    def _save(self, name, content):
        path = Path(self.path(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(content.read(1024 * 1024))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


@pytest.mark.django_db
def test_an_upload_to_full_storage_answers_503_json_and_keeps_nothing(
    owner_api, signed_bundle, bundle_storage, settings
):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "BACKEND": f"{__name__}.FullDiskStorage"},
    }
    assert_unavailable(upload(owner_api, signed_bundle.read_bytes()), "storage_unavailable")
    assert stored_files(bundle_storage) == []
    assert not Submission.objects.exists()


# --- the worker's disk ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_full_disk_while_a_large_bundle_spills_to_disk_ends_the_attempt_cleanly_and_a_retry_finishes_it(
    owner_api, signed_bundle, monkeypatch, settings, django_capture_on_commit_callbacks
):
    from nvmedb_client.bundle_files import HeldFiles

    # files beyond the memory budget wait in a temporary directory: with no budget, every file goes there
    settings.NVMEDB_BUNDLE_LIMITS = {**getattr(settings, "NVMEDB_BUNDLE_LIMITS", {}), "max_memory_bytes": 0}
    real_spill = HeldFiles._spill
    calls = {"n": 0}

    def spill_until_the_disk_is_full(self, source, relative):
        calls["n"] += 1
        if calls["n"] == 2:  # the second file of the first attempt hits a full disk half-way
            real_spill(self, io.BytesIO(source.read(10)), relative)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), relative)
        return real_spill(self, source, relative)

    monkeypatch.setattr(HeldFiles, "_spill", spill_until_the_disk_is_full)
    # a prefix of this test's own: other processes on the machine may validate bundles at the same time
    prefix = f"nvmedb-validate-{os.getpid()}-{time.monotonic_ns()}-"
    monkeypatch.setattr(pipeline, "SPILL_PREFIX", prefix)
    temp_before = set(Path(tempfile.gettempdir()).glob(f"{prefix}*"))
    with django_capture_on_commit_callbacks(execute=False):
        response = upload(owner_api, signed_bundle.read_bytes())
    assert response.status_code == 202
    # As a worker runs it; in-process, Celery runs the retry at once instead of after its countdown.
    result = validate_submission.apply(args=[response.json()["id"]], throw=False)
    assert result.state == "SUCCESS" and result.result in {"published", "held"}, result.result
    submission = Submission.objects.get(pk=response.json()["id"])
    statuses = [event.to_status for event in submission.events.all()]
    assert statuses[:3] == ["received", "validating", "validating"], "the second attempt came from the retry"
    assert submission.attempts == 2
    assert submission.status != SubmissionStatus.REJECTED, submission.report
    assert calls["n"] > 2, "the files went to disk"
    assert set(Path(tempfile.gettempdir()).glob(f"{prefix}*")) == temp_before, "no spilled file left behind"


# --- Redis ---------------------------------------------------------------------------------------------------------


class PrivateRedis:
    """A redis-server of this test's own, on a free port, that the test can stop and start again."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [shutil.which("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self.directory)]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the private redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture
def private_redis(tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_with_redis_down_pages_sign_in_and_uploads_keep_working(
    client, owner, owner_api, signed_bundle, bundle_storage, private_redis, settings
):
    import redis

    settings.CACHES = {"default": {"BACKEND": "nvmedb.cache.FailOpenRedisCache", "LOCATION": private_redis.url}}
    from django.core.cache import cache

    cache.set("probe", 1)
    assert redis.Redis.from_url(private_redis.url).exists(cache.make_key("probe")), "the cache really is Redis"

    private_redis.stop()
    for path in ("/", "/drives/", "/accounts/login/", "/api/v1/drives/"):
        assert client.get(path).status_code == 200, path
    signed_in = client.post("/accounts/login/", {"username": "owner", "password": "owner-password-1"})
    assert signed_in.status_code == 302
    with publishing_to(private_redis.url, "faults-test"):
        response = upload(owner_api, signed_bundle.read_bytes())
    assert response.status_code == 202, response.content
    submission = Submission.objects.get(pk=response.json()["id"])
    assert submission.status == SubmissionStatus.RECEIVED, "kept, for the periodic requeue once the broker is back"
    assert (bundle_storage / submission.storage_name).is_file()

    private_redis.start()
    cache.set("probe-again", 2)
    assert redis.Redis.from_url(private_redis.url).exists(cache.make_key("probe-again")), "back on Redis"
