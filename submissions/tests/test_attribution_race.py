"""Two accounts' copies of one measurement validated at the same time: the second waits on the first's fingerprint
lock and is rejected once the first is published. Real PostgreSQL row locks, two threads with their own
connections; the first is paused inside its ingest (after its rows are written, before it commits)."""

import threading
import time

import pytest
from django.core.files.storage import default_storage
from django.db import connection, connections

from submissions import hooks, services
from submissions.models import Submission, SubmissionStatus
from submissions.tests.conftest import register_key

pytestmark = pytest.mark.postgres


def stored_submission(uploader, path) -> Submission:
    name = default_storage.save(f"bundles/{uploader.username}.nvmedb.tar.gz", path.open("rb"))
    import hashlib

    return Submission.objects.create(
        uploader=uploader, sha256=hashlib.sha256(path.read_bytes()).hexdigest(), size=1, storage_name=name
    )


def waiting_on_a_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        return cursor.fetchone()[0]


def wait_for(predicate, what: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_of_two_copies_validated_at_once_only_the_first_publishes(
    transactional_db, owner, stranger, publishable_bundle, monkeypatch
):
    first = stored_submission(owner, publishable_bundle(register_key(owner)))
    second = stored_submission(stranger, publishable_bundle(register_key(stranger)))  # the same fio outputs

    real_ingest = hooks.ingest.call
    inside, release = threading.Event(), threading.Event()

    def paused_ingest(*, submission, bundle, **intended):
        outcome = real_ingest(submission=submission, bundle=bundle, **intended)
        if submission.pk == first.pk:
            inside.set()
            release.wait(timeout=300)
        return outcome

    monkeypatch.setattr(hooks.ingest, "function", paused_ingest)
    errors = []

    def validate(submission_id):
        try:
            services.submission_validate(submission_id=submission_id)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=validate, args=(first.pk,))]
    threads[0].start()
    wait_for(inside.is_set, "the first submission to reach its ingest")
    threads.append(threading.Thread(target=validate, args=(second.pk,)))
    threads[1].start()
    wait_for(lambda: waiting_on_a_lock() > 0 or not threads[1].is_alive(), "the second to wait on the lock")
    release.set()
    for thread in threads:
        thread.join(timeout=300)

    assert not errors, errors
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == SubmissionStatus.PUBLISHED, first.report
    assert second.status == SubmissionStatus.REJECTED, second.report
    assert second.report["rule"] == "content_of_another_account"
    assert str(first.pk) in second.report["detail"]
