"""Validation in the worker: every bad bundle is rejected with its own rule in plain words and leaves no dataset
rows; a good one goes to the dataset ingest once. Tasks run in-process here (CELERY_TASK_ALWAYS_EAGER)."""

import dataclasses
import importlib.util
from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from submissions import services
from submissions.models import Submission, SubmissionStatus
from submissions.rules import RULES
from submissions.tasks import requeue_stranded
from submissions.tests.bundles import bundle_factory

HAS_INGEST = importlib.util.find_spec("analysis.ingest") is not None


def dataset_rows() -> int:
    """Rows in every table of the dataset app."""
    return sum(model.objects.count() for model in apps.get_app_config("analysis").get_models())


@pytest.fixture
def samples(shared_samples):
    return bundle_factory.default_fio_samples(shared_samples)


@pytest.fixture
def owner_key(owner):
    key = bundle_factory.new_signing_key()
    services.signing_key_register(user=owner, public_key=bundle_factory.public_key_bytes(key), name="test")
    return key


@pytest.fixture
def submit(owner_api, django_capture_on_commit_callbacks):
    """Uploads a bundle file and runs the queued validation; returns the submission as the owner sees it."""

    def _submit(path, client=owner_api) -> dict:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/api/v1/submissions/", data=path.read_bytes(), content_type="application/octet-stream"
            )
        assert response.status_code == 202, response.content
        return client.get(response.json()["url"]).json()

    return _submit


def assert_rejected(result: dict, rule: str, bundle_storage) -> None:
    assert result["status"] == "rejected", result
    assert result["report"]["outcome"] == "rejected"
    assert result["report"]["rule"] == rule
    assert result["report"]["summary"] == RULES[rule]
    assert result["report"]["detail"], "the report says what exactly was wrong"
    submission = Submission.objects.get(pk=result["id"])
    assert (bundle_storage / submission.storage_name).is_file(), "a rejected bundle stays stored"
    assert dataset_rows() == 0


@pytest.mark.parametrize("tamper, rule", sorted(bundle_factory.TAMPERINGS.items()))
def test_a_tampered_bundle_is_rejected_with_its_rule(
    tmp_path, samples, owner_key, submit, bundle_storage, tamper, rule
):
    path = bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=owner_key, tamper=tamper)
    assert_rejected(submit(path), rule, bundle_storage)


@pytest.mark.parametrize(
    "kind, rule",
    sorted((k, r) for k, r in bundle_factory.MALICIOUS_KINDS.items() if k != "not_an_archive"),
)
def test_a_hostile_archive_is_rejected_with_its_rule(tmp_path, settings, submit, bundle_storage, owner_key, kind, rule):
    if kind != "bomb":  # the bomb is judged with the site's real limits
        settings.NVMEDB_BUNDLE_LIMITS = dataclasses.asdict(bundle_factory.SMALL_LIMITS)
    assert_rejected(submit(bundle_factory.malicious_bundle(tmp_path, kind)), rule, bundle_storage)


def test_every_rule_the_bundle_checks_can_raise_has_a_sentence():
    codes = set(bundle_factory.TAMPERINGS.values()) | set(bundle_factory.MALICIOUS_KINDS.values())
    assert codes <= set(RULES)


def test_a_bundle_signed_by_an_unregistered_key_is_rejected(tmp_path, samples, owner, submit, bundle_storage):
    path = bundle_factory.make_bundle(tmp_path, fio_samples=samples)
    result = submit(path)
    assert_rejected(result, "unknown_key", bundle_storage)
    assert "SHA256:" in result["report"]["detail"]


def test_a_bundle_signed_by_a_revoked_key_is_rejected(tmp_path, samples, owner, owner_key, submit, bundle_storage):
    services.signing_key_revoke(key=owner.signing_keys.get())
    result = submit(bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=owner_key))
    assert_rejected(result, "revoked_key", bundle_storage)
    assert result["report"]["summary"] == "The bundle is signed by a key that you revoked."


def test_a_bundle_signed_by_another_accounts_key_is_rejected(
    tmp_path, samples, owner, stranger, submit, bundle_storage
):
    theirs = bundle_factory.new_signing_key()
    services.signing_key_register(user=stranger, public_key=bundle_factory.public_key_bytes(theirs))
    result = submit(bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=theirs))
    assert_rejected(result, "foreign_key", bundle_storage)
    assert result["report"]["summary"] == "The bundle is signed by a key registered to another account."


def test_a_good_bundle_goes_to_the_dataset_ingest(tmp_path, samples, owner, owner_key, submit):
    result = submit(bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=owner_key))
    submission = Submission.objects.get(pk=result["id"])
    assert submission.signing_key == owner.signing_keys.get()
    assert result["signing_key"] == submission.signing_key.fingerprint
    statuses = [e.to_status for e in submission.events.all()]
    if not HAS_INGEST:
        assert result["status"] == "held"
        assert result["report"]["reasons"] == ["The bundle is valid; this site has no dataset ingest yet."]
        assert statuses == ["received", "validating", "held"]
        return
    # The ingest decides (its own tests cover how); intake must record its answer faithfully.
    assert statuses == ["received", "validating", "ingesting", result["status"]]
    assert result["report"]["outcome"] == result["status"]
    if result["status"] == "rejected":
        assert result["report"]["rule"] == "ingest"
        assert result["report"]["detail"]
        assert dataset_rows() == 0
    else:
        assert result["status"] in {"published", "held"}
        assert dataset_rows() > 0
        assert (submission.published_at is not None) == (result["status"] == "published")


def test_validating_again_changes_nothing(tmp_path, samples, owner_key, submit):
    result = submit(bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=owner_key))
    rows = dataset_rows()
    events = Submission.objects.get(pk=result["id"]).events.count()
    again = services.submission_validate(submission_id=Submission.objects.get(pk=result["id"]).pk)
    assert again.status == result["status"]
    assert dataset_rows() == rows
    assert again.events.count() == events


def test_a_withdrawn_submission_is_never_validated(tmp_path, samples, owner, owner_key, owner_api):
    response = owner_api.post(
        "/api/v1/submissions/",
        data=bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=owner_key).read_bytes(),
        content_type="application/octet-stream",
    )
    submission = Submission.objects.get(pk=response.json()["id"])
    services.submission_withdraw(submission=submission, by=owner)
    services.submission_validate(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.WITHDRAWN
    assert dataset_rows() == 0


def test_requeue_picks_up_only_stranded_submissions(tmp_path, samples, owner, owner_key, settings):
    old = timezone.now() - timedelta(hours=2)
    stranded, _ = services.submission_create(
        uploader=owner,
        stream=bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=owner_key).open("rb"),
    )
    fresh, _ = services.submission_create(
        uploader=owner, stream=bundle_factory.make_bundle(tmp_path, name="b.nvmedb.tar.gz").open("rb")
    )
    Submission.objects.filter(pk=stranded.pk).update(status_changed=old)
    assert requeue_stranded() == 1
    stranded.refresh_from_db()
    fresh.refresh_from_db()
    assert stranded.is_final
    assert fresh.status == SubmissionStatus.RECEIVED


def test_a_submission_a_dead_worker_left_validating_is_requeued(tmp_path, samples, owner, owner_key):
    submission, _ = services.submission_create(
        uploader=owner,
        stream=bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=owner_key).open("rb"),
    )
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.VALIDATING, attempts=1, status_changed=timezone.now() - timedelta(hours=2)
    )
    assert requeue_stranded() == 1
    submission.refresh_from_db()
    assert submission.is_final
    assert submission.attempts == 2


def test_a_submission_that_keeps_failing_is_held_for_staff(owner, settings):
    import gzip
    import io

    submission, _ = services.submission_create(uploader=owner, stream=io.BytesIO(gzip.compress(b"x")))
    Submission.objects.filter(pk=submission.pk).update(attempts=settings.NVMEDB_MAX_VALIDATION_ATTEMPTS)
    services.submission_validate(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.HELD
    assert "staff will look" in submission.report["reasons"][0]


def _left_validating(tmp_path, samples, owner, owner_key, *, seconds_ago: float) -> Submission:
    submission, _ = services.submission_create(
        uploader=owner,
        stream=bundle_factory.make_bundle(tmp_path, fio_samples=samples, signing_key=owner_key).open("rb"),
    )
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.VALIDATING, attempts=1, status_changed=timezone.now() - timedelta(seconds=seconds_ago)
    )
    return submission


def test_a_submission_whose_worker_lease_lapsed_is_stranded_long_before_the_time_limit(
    tmp_path, samples, owner, owner_key, settings
):
    from submissions import leases, selectors

    settings.NVMEDB_VALIDATION_LEASE_S = 30
    lapsed = _left_validating(tmp_path, samples, owner, owner_key, seconds_ago=40)
    assert settings.NVMEDB_REQUEUE_WORKING_AFTER_S > 40, "the time-limit rule alone would not find it"
    assert selectors.stranded_submission_ids() == [lapsed.pk]

    with leases.leased(lapsed.pk) as ours:  # a live worker on it: not stranded, and nobody else may take it
        assert ours
        assert selectors.stranded_submission_ids() == []
        with leases.leased(lapsed.pk) as theirs:
            assert not theirs
        assert services.submission_validate(submission_id=lapsed.pk).status == SubmissionStatus.VALIDATING
    assert not leases.is_leased(lapsed.pk), "the lease ends with the block"
    assert selectors.stranded_submission_ids() == [lapsed.pk]


def test_a_just_claimed_submission_is_not_stranded_before_its_lease_could_lapse(
    tmp_path, samples, owner, owner_key, settings
):
    from submissions import selectors

    settings.NVMEDB_VALIDATION_LEASE_S = 30
    _left_validating(tmp_path, samples, owner, owner_key, seconds_ago=5)
    assert selectors.stranded_submission_ids() == []


def test_a_worker_hung_with_a_live_lease_is_stranded_after_the_time_limit(
    tmp_path, samples, owner, owner_key, settings
):
    from submissions import leases, selectors

    hung = _left_validating(
        tmp_path, samples, owner, owner_key, seconds_ago=settings.NVMEDB_REQUEUE_WORKING_AFTER_S + 1
    )
    with leases.leased(hung.pk):
        assert selectors.stranded_submission_ids() == [hung.pk]


def test_the_lease_is_renewed_while_the_worker_works(settings):
    import time
    import uuid

    from submissions import leases

    settings.NVMEDB_VALIDATION_LEASE_S = 3
    submission_id = uuid.uuid4()
    with leases.leased(submission_id):
        time.sleep(4.5)  # longer than one lease: only the renewals keep it
        assert leases.is_leased(submission_id)
    assert not leases.is_leased(submission_id)
