"""The pipeline with its real parts: PostgreSQL, Redis and `celery worker` processes.

The worker processes use the test database (committed rows: transactional tests) and this test's bundle storage.
Each test has its own queue, on a Redis database of its own, so nothing else that uses the same server interferes.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlparse, urlunparse

import pytest
from django.apps import apps
from django.db import connection
from kombu import pools as kombu_pools

from submissions import services
from submissions.models import FINAL_STATUSES, Submission, SubmissionStatus
from submissions.tests.bundles import bundle_factory

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.celery_worker]

REPO_ROOT = Path(__file__).resolve().parents[2]
# A Redis database per pytest-xdist worker (gw0 → 11, gw1 → 12, …): the tests flush theirs.
TEST_REDIS_DB = 11 + int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


def dataset_rows() -> int:
    return sum(model.objects.count() for model in apps.get_app_config("analysis").get_models())


def redis_url(*, port: int | None = None) -> str:
    parsed = urlparse(os.environ["REDIS_URL"])
    netloc = parsed.netloc if port is None else f"{parsed.hostname}:{port}"
    return urlunparse(parsed._replace(netloc=netloc, path=f"/{TEST_REDIS_DB}"))


def worker_database_url() -> str:
    db = connection.settings_dict
    user = quote(db["USER"] or "", safe="")
    password = quote(db["PASSWORD"] or "", safe="")
    return f"postgres://{user}:{password}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, *, timeout: float, what: str, worker: "Worker | None" = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    log = worker.log_text() if worker else ""
    raise AssertionError(f"timed out waiting for {what}\n--- worker log ---\n{log[-4000:]}")


class Worker:
    """A `celery worker` process (solo pool: the task runs in this very process, so SIGKILL kills it mid-task)."""

    def __init__(self, env: dict[str, str], log: Path, *, beat_schedule: Path | None = None) -> None:
        self.log = log
        command = [sys.executable, "-m", "celery", "-A", "nvmedb", "worker", "--pool=solo", "--loglevel=INFO"]
        command += ["-Q", env["CELERY_TASK_DEFAULT_QUEUE"], "--without-gossip", "--without-mingle"]
        if beat_schedule is not None:
            command += ["--beat", f"--schedule={beat_schedule}"]
        self._log_handle = log.open("ab")
        self.process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=self._log_handle, stderr=subprocess.STDOUT, start_new_session=True
        )

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log_handle.close()


@pytest.fixture
def start_worker(transactional_db, tmp_path, bundle_storage):
    """Starts workers against the test database; stops them before the database is flushed."""
    started: list[Worker] = []
    queue = f"intake-test-{uuid.uuid4().hex[:10]}"

    def _start(*, broker: str | None = None, beat: bool = False, **overrides: str) -> Worker:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "nvmedb.settings.local",
            "DATABASE_URL": worker_database_url(),
            "REDIS_URL": broker or redis_url(),
            "BUNDLE_STORAGE_DIR": str(bundle_storage),
            "NVMEDB_VAR_DIR": str(tmp_path / "var"),
            "CELERY_TASK_DEFAULT_QUEUE": queue,
            "CELERY_TASK_ALWAYS_EAGER": "false",
            # like the in-process tests, the worker publishes without review unless a test asks for it
            "NVMEDB_REVIEW_FIRST_N": "0",
            **overrides,
        }
        schedule = tmp_path / f"beat-{len(started)}" if beat else None
        worker = Worker(env, tmp_path / f"worker-{len(started)}.log", beat_schedule=schedule)
        started.append(worker)
        return worker

    _start.queue = queue
    yield _start
    for worker in started:
        worker.stop()
    # Messages a killed worker left unacknowledged would otherwise stay in Redis; the database is this module's own.
    import redis

    redis.Redis.from_url(redis_url()).flushdb()


@contextmanager
def publishing_to(broker: str, queue: str):
    """Makes this test process queue tasks on `broker`/`queue` instead of running them in-process."""
    from nvmedb.celery import app

    keys = ("task_always_eager", "broker_url", "task_default_queue")
    saved = {key: app.conf[key] for key in keys}

    def reset_connections() -> None:
        # Close and forget every pooled broker connection, so the next publish connects to the new URL.
        kombu_pools.reset()
        app._after_fork()

    reset_connections()
    app.conf.update(task_always_eager=False, broker_url=broker, task_default_queue=queue)
    try:
        yield
    finally:
        reset_connections()
        app.conf.update(saved)


@pytest.fixture
def signed_bundle(tmp_path, shared_samples, owner):
    key = bundle_factory.new_signing_key()
    services.signing_key_register(user=owner, public_key=bundle_factory.public_key_bytes(key))
    return bundle_factory.make_bundle(
        tmp_path, fio_samples=bundle_factory.default_fio_samples(shared_samples), signing_key=key
    )


def upload(client, path: Path) -> Submission:
    response = client.post("/api/v1/submissions/", data=path.read_bytes(), content_type="application/octet-stream")
    assert response.status_code == 202, response.content
    return Submission.objects.get(pk=response.json()["id"])


def final(submission: Submission, *, timeout: float, worker: Worker) -> Submission:
    def done():
        current = Submission.objects.get(pk=submission.pk)
        return current if current.status in FINAL_STATUSES else None

    return wait_for(done, timeout=timeout, what=f"submission {submission.pk} to finish", worker=worker)


def assert_finished_once(submission: Submission) -> None:
    statuses = [event.to_status for event in submission.events.all()]
    assert statuses[0] == SubmissionStatus.RECEIVED
    assert statuses.count(submission.status) == 1, statuses
    assert sum(status in FINAL_STATUSES for status in statuses) == 1, statuses
    assert submission.report["outcome"] == submission.status
    if submission.status == SubmissionStatus.REJECTED:
        assert dataset_rows() == 0


def test_a_real_worker_takes_an_upload_to_the_end(start_worker, owner_api, signed_bundle):
    worker = start_worker()
    with publishing_to(redis_url(), start_worker.queue):
        submission = upload(owner_api, signed_bundle)
    done = final(submission, timeout=90, worker=worker)
    assert_finished_once(done)
    assert done.status == SubmissionStatus.PUBLISHED, done.report
    assert dataset_rows() > 0
    assert done.signing_key is not None
    assert "validate_submission" in worker.log_text()


def test_an_upload_while_redis_is_down_completes_once_redis_is_back(start_worker, owner_api, signed_bundle, tmp_path):
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    broker = redis_url(port=port)
    with publishing_to(broker, start_worker.queue):
        submission = upload(owner_api, signed_bundle)  # nobody listens on `port`: queuing fails
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.RECEIVED

    redis = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        worker = start_worker(
            broker=broker,
            beat=True,
            NVMEDB_REQUEUE_INTERVAL_S="1",
            NVMEDB_REQUEUE_RECEIVED_AFTER_S="1",
        )
        done = final(submission, timeout=90, worker=worker)
        assert_finished_once(done)
        assert "requeue_stranded" in worker.log_text()
    finally:
        os.killpg(redis.pid, signal.SIGKILL)
        redis.wait(timeout=10)


def test_a_worker_killed_mid_validation_leaves_nothing_and_the_submission_completes_once(
    start_worker, owner_api, signed_bundle
):
    slow = start_worker(NVMEDB_TEST_VALIDATION_DELAY_S="60")
    with publishing_to(redis_url(), start_worker.queue):
        submission = upload(owner_api, signed_bundle)

    def validating():
        current = Submission.objects.get(pk=submission.pk)
        return current.status == SubmissionStatus.VALIDATING

    wait_for(validating, timeout=60, what="the first worker to start validating", worker=slow)
    slow.kill()
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.VALIDATING
    assert submission.attempts == 1
    assert dataset_rows() == 0

    # The new worker gets the task back both ways a real site would: the broker redelivers the unacknowledged
    # message, and the periodic requeue finds the submission left in a dead worker's hands.
    replacement = start_worker(
        beat=True,
        CELERY_VISIBILITY_TIMEOUT_S="1",
        NVMEDB_REQUEUE_INTERVAL_S="1",
        NVMEDB_REQUEUE_WORKING_AFTER_S="2",
    )
    done = final(submission, timeout=90, worker=replacement)
    assert done.attempts >= 2
    assert_finished_once(done)
    rows = dataset_rows()
    time.sleep(3)  # any second delivery of the task has come and gone by now
    done.refresh_from_db()
    assert_finished_once(done)
    assert dataset_rows() == rows


def test_a_whole_worker_killed_mid_ingest_is_taken_over_within_a_minute_of_a_worker_being_back(
    start_worker, owner_api, signed_bundle
):
    """kill -9 of the worker's whole process group; the replacement runs with the production timings (an hour's
    visibility timeout, the requeue every minute, the time-limit rule after half an hour): only the lapsed lease
    brings the submission back, once."""
    slow = start_worker(NVMEDB_TEST_VALIDATION_DELAY_S="60", NVMEDB_VALIDATION_LEASE_S="5")
    with publishing_to(redis_url(), start_worker.queue):
        submission = upload(owner_api, signed_bundle)
    wait_for(
        lambda: Submission.objects.get(pk=submission.pk).status == SubmissionStatus.VALIDATING,
        timeout=60,
        what="the first worker to start validating",
        worker=slow,
    )
    slow.kill()

    back = time.monotonic()
    replacement = start_worker(beat=True, NVMEDB_VALIDATION_LEASE_S="5")
    done = final(submission, timeout=60, worker=replacement)
    assert time.monotonic() - back < 60
    assert done.attempts == 2, "validated by the dead worker's attempt and one more"
    assert_finished_once(done)
