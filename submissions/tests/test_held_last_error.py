"""A submission held after its attempts ran out says what stopped the last one: the type and message of the machine
fault, without the server's paths, hosts or credentials, on its page, in the API and in the admin."""

from __future__ import annotations

import errno
import os

import psycopg
import pytest

from submissions.faults import LAST_ERROR_CHARS, fault_summary
from submissions.models import Submission, SubmissionStatus
from submissions.tasks import validate_submission
from submissions.tests import test_faults
from submissions.tests.test_faults import upload

signed_bundle = test_faults.signed_bundle  # the fixture, shared
SERVER_PATH = "/srv/nvmedb/tmp/nvmedb-validate-42/files/fio/iops-r01.json"


@pytest.fixture
def disk_always_full(settings, monkeypatch):
    """Every file the worker would spill to disk meets a full disk: the fault outlasts every attempt."""
    from nvmedb_client.bundle_files import HeldFiles

    settings.NVMEDB_BUNDLE_LIMITS = {**getattr(settings, "NVMEDB_BUNDLE_LIMITS", {}), "max_memory_bytes": 0}
    settings.NVMEDB_MAX_VALIDATION_ATTEMPTS = 2

    def full(self, source, relative):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), SERVER_PATH)

    monkeypatch.setattr(HeldFiles, "_spill", full)
    # A worker runs each retry as a task of its own; in-process, retries nest inside the first call, and a failed
    # one must end its attempt there rather than propagate out of the first.
    monkeypatch.setitem(validate_submission.app.conf, "task_eager_propagates", False)


@pytest.mark.django_db
def test_a_submission_held_after_its_attempts_keeps_the_last_error_for_contributor_and_staff(
    owner_api,
    signed_bundle,
    disk_always_full,
    django_capture_on_commit_callbacks,
    client,
    staff,  # noqa: F811
):
    with django_capture_on_commit_callbacks(execute=False):
        response = upload(owner_api, signed_bundle.read_bytes())
    assert response.status_code == 202
    submission_id = response.json()["id"]
    # As a worker runs it; in-process, Celery runs each retry at once instead of after its countdown.
    result = validate_submission.apply(args=[submission_id], throw=False)
    assert result.state == "SUCCESS" and result.result == SubmissionStatus.HELD, result.result
    submission = Submission.objects.get(pk=submission_id)
    assert submission.attempts == 2
    assert submission.last_error == "attempt 2: OSError: No space left on device"
    assert submission.report["detail"] == "The last error: attempt 2: OSError: No space left on device"

    shown = owner_api.get(f"/api/v1/submissions/{submission_id}/").json()
    assert shown["last_error"] == submission.last_error and shown["report"]["detail"].endswith(
        "No space left on device"
    )
    client.force_login(submission.uploader)
    page = client.get(f"/submissions/{submission_id}/").content.decode()
    assert "No space left on device" in page and SERVER_PATH not in page
    client.force_login(staff)
    listing = client.get("/admin/submissions/submission/", {"awaiting": "any"}).content.decode()
    assert "attempt 2: OSError: No space left on device" in listing


def test_a_database_fault_is_summarised_without_its_host_user_or_password():
    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect("postgresql://nvmedb:s3cret-pw@127.0.0.1:1/nvmedb_private", connect_timeout=5)
    summary = fault_summary(caught.value, attempt=3)
    assert summary.startswith("attempt 3: OperationalError: ")
    for secret in ("s3cret-pw", "127.0.0.1", "nvmedb_private"):
        assert secret not in summary, summary


def test_a_long_message_is_bounded_and_says_it_was_cut():
    summary = fault_summary(TimeoutError("the broker did not answer " * 40))
    assert len(summary) == LAST_ERROR_CHARS and summary.endswith("…")
