"""Poison detection: a bundle the pipeline cannot read is rejected on its first attempt with a reason; only faults of
the machine (database, storage) leave it to be tried again. Tasks run in-process here."""

import pytest
from django.db import OperationalError

from submissions import hooks, pipeline, services
from submissions.models import Submission, SubmissionStatus
from submissions.rules import RULES
from submissions.tests.bundles import bundle_factory


@pytest.fixture
def owner_key(owner):
    key = bundle_factory.new_signing_key()
    services.signing_key_register(user=owner, public_key=bundle_factory.public_key_bytes(key), name="test")
    return key


@pytest.fixture
def stored(tmp_path, shared_samples, owner, owner_key):
    """A good bundle stored as a `received` submission, not yet validated."""
    path = bundle_factory.make_bundle(
        tmp_path, fio_samples=bundle_factory.default_fio_samples(shared_samples), signing_key=owner_key
    )
    with path.open("rb") as stream:
        submission, _ = services.submission_create(uploader=owner, stream=stream)
    return submission


def test_an_unexpected_error_in_ingest_rejects_on_the_first_attempt_with_the_error(stored, monkeypatch):
    def crash(**kwargs):
        raise KeyError("jobs")

    monkeypatch.setattr(hooks.ingest, "function", crash)
    done = services.submission_validate(submission_id=stored.pk)
    assert done.status == SubmissionStatus.REJECTED
    assert done.attempts == 1
    assert done.report["rule"] == "unreadable"
    assert done.report["summary"] == RULES["unreadable"]
    assert done.report["detail"] == "The site could not read this bundle (KeyError: 'jobs')."


def test_a_database_fault_is_retried_not_rejected(stored, monkeypatch):
    def down(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(hooks.ingest, "function", down)
    with pytest.raises(OperationalError):
        services.submission_validate(submission_id=stored.pk)
    current = Submission.objects.get(pk=stored.pk)
    assert current.status == SubmissionStatus.INGESTING
    assert current.report in (None, {})

    monkeypatch.undo()
    done = services.submission_validate(submission_id=stored.pk)
    assert done.status in (SubmissionStatus.PUBLISHED, SubmissionStatus.HELD), done.report
    assert done.attempts == 2


def test_a_storage_fault_is_retried_not_rejected(stored, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pipeline, "open_bundle", full)
    with pytest.raises(OSError, match="No space left"):
        services.submission_validate(submission_id=stored.pk)
    assert Submission.objects.get(pk=stored.pk).status == SubmissionStatus.VALIDATING


def test_a_reason_quoting_a_nul_character_is_stored_escaped(stored, monkeypatch):
    def crash(**kwargs):
        raise ValueError("bs=4k\x00")

    monkeypatch.setattr(hooks.ingest, "function", crash)
    done = services.submission_validate(submission_id=stored.pk)
    assert done.status == SubmissionStatus.REJECTED
    assert Submission.objects.get(pk=stored.pk).report["detail"].endswith("(ValueError: bs=4k\\x00).")
