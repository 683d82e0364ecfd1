"""A burst of uploads of one drive model through a real prefork Celery worker at the deployed concurrency (2): every
upload is published on its first attempt (the aggregate refresh no longer races; see analysis.services)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from submissions import services
from submissions.models import FINAL_STATUSES, Submission, SubmissionStatus
from submissions.tests.bundles import bundle_factory
from submissions.tests.test_pipeline_integration import (
    REPO_ROOT,
    publishing_to,
    redis_url,
    upload,
    wait_for,
    worker_database_url,
)

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.celery_worker]

BURST = 8
CONCURRENCY = 2


@pytest.fixture
def prefork_worker(transactional_db, tmp_path, bundle_storage):
    queue = f"burst-test-{uuid.uuid4().hex[:10]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "nvmedb.settings.local",
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": redis_url(),
        "BUNDLE_STORAGE_DIR": str(bundle_storage),
        "NVMEDB_VAR_DIR": str(tmp_path / "var"),
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        # the burst is about concurrency, not the review of new contributors
        "NVMEDB_REVIEW_FIRST_N": "0",
    }
    log = tmp_path / "worker.log"
    command = [sys.executable, "-m", "celery", "-A", "nvmedb", "worker", f"--concurrency={CONCURRENCY}"]
    command += ["--pool=prefork", "--loglevel=INFO", "-Q", queue, "--without-gossip", "--without-mingle"]
    with log.open("ab") as handle:
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
        )
    process.queue = queue
    process.log = log
    yield process
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    import redis

    redis.Redis.from_url(redis_url()).flushdb()


def test_a_burst_of_uploads_of_one_drive_model_is_all_published_on_the_first_attempt(
    prefork_worker, owner, owner_api, tmp_path, shared_samples
):
    bundles = []
    for i in range(BURST):
        key = bundle_factory.new_signing_key()
        services.signing_key_register(user=owner, public_key=bundle_factory.public_key_bytes(key), name=f"key {i}")
        samples = bundle_factory.default_fio_samples(shared_samples)
        bundles.append(bundle_factory.make_bundle(tmp_path / f"b{i}", fio_samples=samples, signing_key=key))
    with publishing_to(redis_url(), prefork_worker.queue):
        submissions = [upload(owner_api, path) for path in bundles]

    def all_final():
        found = list(Submission.objects.filter(pk__in=[s.pk for s in submissions]))
        return found if all(s.status in FINAL_STATUSES for s in found) else None

    class Log:
        def log_text(self) -> str:
            return prefork_worker.log.read_text(errors="replace")

    done = wait_for(all_final, timeout=600, what="every upload of the burst to finish", worker=Log())
    log = Log().log_text()
    assert [s.status for s in done] == [SubmissionStatus.PUBLISHED] * BURST, [s.report for s in done]
    assert [s.attempts for s in done] == [1] * BURST
    assert "IntegrityError" not in log and " retry: " not in log
    from analysis.models import TestRun

    models = set(TestRun.objects.filter(submission__in=done).values_list("drive_model", flat=True))
    assert len(models) == 1, "every upload is of the same drive model"
