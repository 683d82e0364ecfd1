"""Validating a received bundle, top to bottom: received → verified → fingerprinted → ingested → verdict.

Safe to run twice or after a killed worker: a lease keeps a second worker away, the final step locks the row and does
nothing when another run already finished it, and the ingest writes its rows in the same transaction as the final
status. Review is decided before the ingest, so a held submission's rows are stored as held and never counted.

Poison detection: only TRANSIENT_ERRORS (and the time limit) leave the submission to be tried again; any other error
is the bundle's doing, so the submission is rejected on this first attempt with the error as its reason."""

import logging
import time
import uuid
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files.storage import Storage, default_storage
from django.db import DatabaseError, IntegrityError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from nvmedb.collector import cycle_collector_paused
from nvmedb_client.bundle import BundleError, BundleLimits, VerifiedBundle, verify_bundle_stream
from submissions import hooks, leases
from submissions.content import bundle_fingerprints, record_fingerprints
from submissions.faults import fault_summary
from submissions.first_received import Conflict, first_received_conflict, lock_fingerprints
from submissions.keys import KeyCheck, check_signing_key
from submissions.models import Submission, SubmissionStatus
from submissions.moderation import withdraw_later_copies
from submissions.review import review_reason
from submissions.storage import open_bundle
from submissions.transitions import finish, report, transition

logger = logging.getLogger(__name__)

# Faults of the machine, worth another attempt: the database (down, or a concurrent ingest won a unique row), the
# broker, storage I/O (OSError covers ConnectionError, TimeoutError, a full disk). Anything else is the bundle's.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, IntegrityError, OSError)
# the temporary directory of a bundle too large to hold in memory (the rest of its files wait there)
SPILL_PREFIX = "nvmedb-validate-"


def submission_validate(*, submission_id: uuid.UUID, storage: Storage | None = None) -> Submission | None:
    """Checks a stored bundle and hands it to the dataset ingest; returns the submission as it ends up. The cycle
    collector waits until it is done (nvmedb.collector: a bundle's parsed documents would make it walk a million
    objects once per bundle)."""
    with cycle_collector_paused(), leases.leased(submission_id) as ours:
        if not ours:  # a live worker is validating it: this is a second delivery of the same message
            logger.info("submission %s is being validated by another worker; nothing to do", submission_id)
            return Submission.objects.filter(pk=submission_id).first()
        submission = _claim(submission_id)
        if submission is None:
            return Submission.objects.filter(pk=submission_id).first()
        delay = float(getattr(settings, "NVMEDB_TEST_VALIDATION_DELAY_S", 0) or 0)
        if delay:
            time.sleep(delay)
        try:
            return _validate_claimed(submission, storage or default_storage)
        except Exception as exc:
            return _fault(submission, exc)


def _validate_claimed(submission: Submission, storage: Storage) -> Submission:
    try:
        bundle = verify_stored_bundle(submission=submission, storage=storage)
    except BundleError as exc:
        return _reject(submission.pk, report(outcome="rejected", rule=exc.code, detail=exc.message))
    with bundle:
        check = check_signing_key(
            uploader_id=submission.uploader_id, public_key=bytes(bundle.public_key), fingerprint=bundle.fingerprint
        )
        if check.rule:
            detail = f"The bundle's signing key has the fingerprint {bundle.fingerprint}."
            return _reject(submission.pk, report(outcome="rejected", rule=check.rule, detail=detail), key=check.key)
        # committed before the ingest locks and compares them, so two copies validated at once see each other's
        record_fingerprints(submission=submission, fingerprints=bundle_fingerprints(bundle))
        return _ingest(submission.pk, bundle, check)


def _claim(submission_id: uuid.UUID) -> Submission | None:
    """Marks the submission as being validated; None when there is nothing (left) to do."""
    with transaction.atomic():
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None or submission.is_final:
            return None
        if submission.attempts >= settings.NVMEDB_MAX_VALIDATION_ATTEMPTS:
            transition(submission, SubmissionStatus.HELD, note="too many failed attempts")
            last = submission.last_error or (
                "none was recorded (the worker was stopped, or the database was unreachable when it failed)"
            )
            submission.report = report(
                outcome="held",
                detail=f"The last error: {last}",
                reasons=[f"Validation failed {submission.attempts} times without an answer; staff will look at it."],
            )
            submission.finished_at = timezone.now()
            submission.save()
            return None
        transition(submission, SubmissionStatus.VALIDATING, note=f"attempt {submission.attempts + 1}")
        submission.attempts += 1
        submission.save()
        return submission


def verify_stored_bundle(*, submission: Submission, storage: Storage | None = None) -> VerifiedBundle:
    """Verifies the stored bundle of `submission` in one read of its stream (submissions.storage.open_bundle, a
    directory or a bucket alike), keeping its files in memory within the site's limits
    (settings.NVMEDB_BUNDLE_LIMITS); nothing is copied to disk first. Raises BundleError; close the result (or use
    `with`)."""
    limits = BundleLimits(**getattr(settings, "NVMEDB_BUNDLE_LIMITS", {}))
    with open_bundle(submission, storage=storage) as stream:
        return verify_bundle_stream(
            stream, limits=limits, trusted_keys=None, name=Path(submission.storage_name).name, spill_prefix=SPILL_PREFIX
        )


def _ingest(submission_id: uuid.UUID, bundle: VerifiedBundle, check: KeyCheck) -> Submission:
    with transaction.atomic():
        locked = Submission.objects.select_for_update().get(pk=submission_id)
        if locked.is_final:
            return locked
        transition(locked, SubmissionStatus.INGESTING)
        locked.signing_key = check.key
        locked.save()
    with transaction.atomic():
        locked = Submission.objects.select_for_update().get(pk=submission_id)
        if locked.is_final:
            return locked
        # Judged under lock, once: of two accounts' copies validated at once, only the first publishes. (A check
        # before the lock too spared a copy its "ingesting" step and cost every other bundle ~17 ms.)
        matching_rows = lock_fingerprints(locked)
        conflict = first_received_conflict(locked, matching_rows)
        if conflict is not None:
            transition(locked, SubmissionStatus.REJECTED, note=conflict.rule)
            locked.report = _content_report(conflict)
            locked.finished_at = timezone.now()
            locked.save()
            return locked
        # Review is decided first: held rows are stored as held, so no aggregate ever counts them.
        review = review_reason(locked.uploader) or ""
        outcome = hooks.ingest.call(submission=locked, bundle=bundle, review_reason=review)
        return _verdict(locked, outcome, review)


def _verdict(locked: Submission, outcome: hooks.IngestOutcome, review: str) -> Submission:
    """The final status and report of an ingested submission; a published one withdraws later copies of itself."""
    reasons = [str(reason) for reason in outcome.reasons]
    status = outcome.status
    if status == SubmissionStatus.REJECTED:
        detail = "; ".join(reasons[:3]) + (f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else "")
        verdict = report(outcome="rejected", rule="ingest", detail=detail, reasons=reasons)
    else:
        held_only_for_review = outcome.review_hold and reasons == [review]
        verdict = report(outcome=status, rule="review" if held_only_for_review else "", reasons=reasons)
    transition(locked, status, reasons=reasons)
    locked.report = verdict
    locked.finished_at = timezone.now()
    if status == SubmissionStatus.PUBLISHED:
        locked.published_at = locked.finished_at
    locked.save()
    if status == SubmissionStatus.PUBLISHED:
        withdraw_later_copies(locked)
    return locked


def _reject(submission_id: uuid.UUID, verdict: dict, *, key=None) -> Submission:
    return finish(submission_id, status=SubmissionStatus.REJECTED, report=verdict, key=key)


def _content_report(conflict: Conflict) -> dict:
    return report(outcome="rejected", rule=conflict.rule, detail=conflict.sentence())


def _fault(submission: Submission, exc: Exception) -> Submission:
    """A machine's fault is noted and raised, for another attempt; any other error rejects the bundle at once."""
    if isinstance(exc, TRANSIENT_ERRORS):
        _note_fault(submission, exc)
    if isinstance(exc, (*TRANSIENT_ERRORS, SoftTimeLimitExceeded, hooks.HookNotRegistered)):
        raise exc  # the machine's (or the site's set-up's) fault, not the bundle's
    logger.exception("submission %s: the pipeline could not read it; rejected", submission.pk)
    detail = f"The site could not read this bundle ({type(exc).__name__}: {str(exc)[:300]})."
    return _reject(submission.pk, report(outcome="rejected", rule="unreadable", detail=detail))


def _note_fault(submission: Submission, exc: BaseException) -> None:
    """Keeps the fault that ended this attempt for the contributor and staff. With the database itself down this
    cannot be written: the held report then says none was recorded."""
    try:
        with transaction.atomic():
            Submission.objects.filter(pk=submission.pk).update(
                last_error=fault_summary(exc, attempt=submission.attempts)
            )
    except (DatabaseError, transaction.TransactionManagementError):
        logger.warning("submission %s: its last error could not be recorded", submission.pk, exc_info=True)


def submission_fingerprint_stored(*, submission: Submission, storage: Storage | None = None) -> int:
    """Records the fio-output digests of a stored submission validated before digests existed, so content it
    published is protected too. Returns how many digests it has; raises BundleError when its bundle no longer
    verifies."""
    with verify_stored_bundle(submission=submission, storage=storage) as bundle:
        record_fingerprints(submission=submission, fingerprints=bundle_fingerprints(bundle))
    return submission.fio_fingerprints.count()


def submission_time_out(*, submission_id: uuid.UUID) -> Submission:
    verdict = report(outcome="held", rule="timeout", reasons=["Validation took too long; staff will look at it."])
    return finish(submission_id, status=SubmissionStatus.HELD, report=verdict)
