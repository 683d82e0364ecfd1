"""Everything that changes accounts, credentials and submissions. Views, APIs, tasks and commands call these."""

import hashlib
import logging
import secrets
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.core.files import File
from django.core.files.storage import Storage, default_storage
from django.db import DatabaseError, IntegrityError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from nvmedb_client import data_license
from submissions import leases
from submissions.content import (
    Conflict,
    bundle_fingerprints,
    first_received_conflict,
    later_copies,
    lock_fingerprints,
    record_fingerprints,
)
from submissions.faults import fault_summary
from submissions.models import (
    ApiToken,
    DataLicenseAcceptance,
    SigningKey,
    Submission,
    SubmissionEvent,
    SubmissionStatus,
)
from submissions.review import review_reason
from submissions.rules import rule_sentence
from submissions.storage import bundle_name, open_bundle
from submissions.upload import HashingReader

logger = logging.getLogger(__name__)

# Faults of the machine, worth another attempt: the database (down, or a concurrent ingest won a unique row), the
# broker, storage I/O (OSError covers ConnectionError, TimeoutError, a full disk). Anything else is the bundle's.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, IntegrityError, OSError)

TOKEN_PREFIX = "nvmedb_"
TOKEN_DISPLAY_CHARS = 12
GZIP_MAGIC = b"\x1f\x8b"
# the temporary directory of a bundle too large to hold in memory (the rest of its files wait there)
SPILL_PREFIX = "nvmedb-validate-"


class NotGzip(Exception):
    """The body does not start like a gzip file, so it cannot be a bundle."""


class EmptyUpload(Exception):
    pass


class IncompleteUpload(Exception):
    """Fewer bytes arrived than the request announced: the connection broke off."""


class KeyOfAnotherAccount(Exception):
    pass


KEY_OF_ANOTHER_ACCOUNT = (
    "This public key is bound to another account: a key stays with the first account that registered it, even after "
    "it is revoked. Create a new key with `nvmedb-client keygen` and register that one."
)


class NotApprovable(Exception):
    """Staff cannot publish this submission as it is (not held, no dataset rows, or its content is someone else's)."""


class InvalidPublicKey(ValueError):
    pass


# --- accounts and credentials -------------------------------------------------------------------------------------


def user_create(*, username: str, email: str = "", password: str | None = None) -> AbstractBaseUser:
    user_model = get_user_model()
    if password is None:
        return user_model.objects.create_user(username=username, email=email)  # unusable password: API only
    return user_model.objects.create_user(username=username, email=email, password=password)


@transaction.atomic
def contributor_sign_up(*, username: str, email: str, password: str) -> AbstractBaseUser:
    """An account from the sign-up form, whose checkbox accepted the data licence: both are recorded together."""
    user = user_create(username=username, email=email, password=password)
    data_license_accept(user=user, via=DataLicenseAcceptance.Via.SIGNUP)
    return user


def data_license_accept(*, user: AbstractBaseUser, via: str, license: str = data_license.SPDX) -> DataLicenseAcceptance:
    """Record that `user` accepted the data licence; only the current licence can be accepted."""
    if license != data_license.SPDX:
        raise ValueError(f"The data is published under {data_license.SPDX}, not {license}.")
    return DataLicenseAcceptance.objects.create(user=user, license=license, via=via)


def token_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


@transaction.atomic
def api_token_create(*, user: AbstractBaseUser, name: str = "") -> tuple[ApiToken, str]:
    """Returns the token row and the token itself, which exists nowhere else: show it once."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name.strip()[:100], prefix=raw[:TOKEN_DISPLAY_CHARS], digest=token_digest(raw)
    )
    return token, raw


def api_token_rename(*, token: ApiToken, name: str) -> ApiToken:
    token.name = name.strip()[:100]
    token.save(update_fields=["name"])
    return token


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_token_touch(*, token: ApiToken) -> None:
    """Record use, at most once a minute, so authentication does not write on every request."""
    now = timezone.now()
    if token.last_used is None or (now - token.last_used).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        token.last_used = now


def public_key_fingerprint(public_key: bytes) -> str:
    from nvmedb_client.signing import fingerprint

    return fingerprint(public_key)


def check_public_key(public_key: bytes) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if len(public_key) != 32:
        raise InvalidPublicKey(f"An Ed25519 public key is 32 bytes; this one is {len(public_key)}.")
    try:
        Ed25519PublicKey.from_public_bytes(public_key)
    except ValueError as exc:
        raise InvalidPublicKey(f"Not an Ed25519 public key: {exc}") from None


@transaction.atomic
def signing_key_register(*, user: AbstractBaseUser, public_key: bytes, name: str = "") -> tuple[SigningKey, bool]:
    """Registers an Ed25519 public key for `user`; returns (key, created). A public key stays bound to the first
    account that registered it, revoked or not, so a signature always points at exactly one contributor. Callers on
    a contributor's behalf (the API, the profile page) go through submissions.key_registration, which first checks
    that the contributor holds the private key."""
    check_public_key(public_key)
    fp = public_key_fingerprint(public_key)
    existing = SigningKey.objects.select_for_update().filter(fingerprint=fp).first()
    if existing is None:
        try:
            with transaction.atomic():
                key = SigningKey.objects.create(
                    user=user, public_key=public_key, fingerprint=fp, name=name.strip()[:100]
                )
        except IntegrityError:  # registered by someone else a moment ago
            existing = SigningKey.objects.get(fingerprint=fp)
        else:
            return key, True
    if existing.user_id != user.pk:
        raise KeyOfAnotherAccount(KEY_OF_ANOTHER_ACCOUNT)
    if existing.revoked_at is not None:
        raise InvalidPublicKey("You revoked this key; create a new signing key instead of reusing it.")
    return existing, False


def signing_key_revoke(*, key: SigningKey) -> SigningKey:
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key


# --- receiving a bundle ---------------------------------------------------------------------------------------------


class _GzipCheckingSource:
    """Raises NotGzip on the first read when the body does not start with the gzip magic bytes."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self._checked = False

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size)
        if not self._checked:
            while len(data) < 2:
                more = self._source.read(2 - len(data))
                if not more:
                    break
                data += more
            self._checked = True
            if data and not data.startswith(GZIP_MAGIC):
                raise NotGzip("The upload is not a gzip-compressed tar archive (.nvmedb.tar.gz).")
        return data


def _delete_quietly(storage: Storage, name: str) -> None:
    try:
        storage.delete(name)
    except Exception:  # the upload already failed; a leftover file is logged, not raised over the real error
        logger.exception("could not delete partial upload %s", name)


def submission_create(
    *,
    uploader: AbstractBaseUser,
    stream: BinaryIO,
    original_name: str = "",
    expected_size: int | None = None,
    storage: Storage | None = None,
) -> tuple[Submission, bool]:
    """Streams `stream` to storage while hashing it and returns (submission, created).

    The same bytes sent again by the same account return that account's existing submission. Duplicates are per
    uploader: a stranger who sent the same bytes first gets a submission of their own (which validation rejects,
    since the signing key is not theirs) and never blocks the owner. Raises BundleTooLarge, NotGzip, EmptyUpload or
    IncompleteUpload; nothing is kept from a refused upload.
    """
    storage = storage or default_storage
    submission_id = uuid.uuid4()
    name = bundle_name(submission_id, timezone.now())
    reader = HashingReader(_GzipCheckingSource(stream), limit=settings.NVMEDB_MAX_BUNDLE_BYTES)
    try:
        stored_name = storage.save(name, File(reader, name=name))
    except BaseException:
        _delete_quietly(storage, name)
        raise
    if expected_size is not None and 0 < reader.size != expected_size:
        _delete_quietly(storage, stored_name)
        raise IncompleteUpload(f"Only {reader.size} of the {expected_size} announced bytes arrived; send it again.")
    if reader.size == 0:
        _delete_quietly(storage, stored_name)
        raise EmptyUpload(
            "The request body is empty: send the bundle as application/octet-stream or multipart 'bundle'."
        )

    try:
        with transaction.atomic():
            submission = Submission.objects.create(
                id=submission_id,
                uploader=uploader,
                sha256=reader.sha256,
                size=reader.size,
                storage_name=stored_name,
                original_name=Path(original_name).name[:255],
            )
            SubmissionEvent.objects.create(submission=submission, to_status=SubmissionStatus.RECEIVED)
            transaction.on_commit(lambda: submission_enqueue(submission_id=submission.id))
    except IntegrityError:
        _delete_quietly(storage, stored_name)
        return Submission.objects.get(uploader=uploader, sha256=reader.sha256), False
    except DatabaseError:
        _delete_quietly(storage, stored_name)  # the database is away: nothing was acknowledged, keep nothing
        raise
    return submission, True


def submission_enqueue(*, submission_id: uuid.UUID) -> bool:
    """Queues validation. When the broker is down the submission stays `received` and requeue_stranded retries it."""
    from kombu.exceptions import OperationalError

    from submissions.tasks import validate_submission

    try:
        validate_submission.delay(str(submission_id))
    except OperationalError as exc:
        logger.warning("could not queue submission %s (%s); the periodic requeue will retry", submission_id, exc)
        return False
    return True


# --- status changes ------------------------------------------------------------------------------------------------


def _transition(submission: Submission, to: str, *, note: str = "", reasons: list[str] | None = None) -> None:
    """Changes status and logs it. The caller holds the row lock and saves. The dataset rows follow: a held or
    rejected submission's runs are not compliant (`reasons`, else `note`, say why); approval gives them back their
    derived verdict."""
    came_from = submission.status
    SubmissionEvent.objects.create(submission=submission, from_status=came_from, to_status=to, note=note)
    submission.status = to
    submission.status_changed = timezone.now()
    if to in (SubmissionStatus.HELD, SubmissionStatus.REJECTED) or (
        came_from == SubmissionStatus.HELD and to == SubmissionStatus.PUBLISHED
    ):
        _runs_follow_status(submission, to, reasons or ([note] if note else []))


def _report(*, outcome: str, rule: str = "", detail: str = "", reasons: list[str] | None = None) -> dict:
    return {
        "outcome": outcome,
        "rule": rule,
        "summary": rule_sentence(rule) if rule else "",
        "detail": _storable(detail),
        "reasons": [_storable(reason) for reason in reasons or []],
    }


def _storable(text: str) -> str:
    """Reasons quote the bundle; PostgreSQL's JSON cannot hold a NUL character, so it is shown escaped."""
    return str(text).replace("\x00", "\\x00")


@transaction.atomic
def submission_withdraw(*, submission: Submission, by: AbstractBaseUser) -> Submission:
    """The owner takes a submission back: it leaves pages and future releases; the row stays as a tombstone."""
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    if locked.uploader_id != by.pk:
        raise PermissionDenied("Only the contributor who uploaded a submission can withdraw it.")
    if locked.status != SubmissionStatus.WITHDRAWN:
        _transition(locked, SubmissionStatus.WITHDRAWN, note="withdrawn by its owner")
        locked.withdrawn_at = timezone.now()
        locked.save()
        _refresh_dataset(locked)
    return locked


@transaction.atomic
def submission_hide(*, submission: Submission, reason: str, by: AbstractBaseUser) -> Submission:
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    locked.hidden = True
    locked.moderation_reason = reason
    SubmissionEvent.objects.create(
        submission=locked, from_status=locked.status, to_status=locked.status, note=f"hidden by {by}: {reason}"
    )
    locked.save()
    _refresh_dataset(locked)
    return locked


@transaction.atomic
def submission_reject(*, submission: Submission, reason: str, by: AbstractBaseUser) -> Submission:
    """Staff rejection. Works on published submissions too: the dataset only ever shows published ones."""
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    if locked.status in (SubmissionStatus.REJECTED, SubmissionStatus.WITHDRAWN):
        return locked
    _transition(locked, SubmissionStatus.REJECTED, note=f"rejected by {by}: {reason}", reasons=[reason])
    locked.report = _report(outcome="rejected", rule="moderation", detail=reason)
    locked.moderation_reason = reason
    locked.finished_at = timezone.now()
    locked.save()
    _refresh_dataset(locked)
    return locked


def _has_dataset_rows(submission: Submission) -> bool:
    """Whether the dataset stored rows for `submission` (its test runs point back at it)."""
    return Submission.objects.filter(pk=submission.pk, test_runs__isnull=False).exists()


def _refresh_dataset(submission: Submission) -> None:
    """A submission left (or changed its place in) the public dataset: its drive models' aggregates follow, in the
    same transaction, so no page shows a median that still counts it."""
    from analysis.services import refresh_aggregates_for_submission

    refresh_aggregates_for_submission(submission=submission)


def _runs_follow_status(submission: Submission, status: str, reasons: list[str]) -> None:
    """The dataset's half of a status change (analysis.services.runs_follow_status), imported here as
    _refresh_dataset imports its own: submissions depends on no analysis module at import time."""
    from analysis.services import runs_follow_status

    runs_follow_status(submission=submission, status=status, reasons=reasons)


# --- validation, in a worker ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyCheck:
    rule: str  # "" when the key is good
    key: SigningKey | None


def check_signing_key(*, uploader_id: int, public_key: bytes, fingerprint: str) -> KeyCheck:
    """Tells apart a good key, a revoked key, another account's key and a key nobody registered."""
    keys = list(SigningKey.objects.filter(fingerprint=fingerprint))
    own = [k for k in keys if k.user_id == uploader_id and bytes(k.public_key) == public_key]
    active = [k for k in own if k.revoked_at is None]
    if active:
        return KeyCheck(rule="", key=active[0])
    if own:
        return KeyCheck(rule="revoked_key", key=own[0])
    if keys:
        return KeyCheck(rule="foreign_key", key=None)
    return KeyCheck(rule="unknown_key", key=None)


def _claim(submission_id: uuid.UUID) -> Submission | None:
    """Marks the submission as being validated; None when there is nothing (left) to do."""
    with transaction.atomic():
        submission = Submission.objects.select_for_update().filter(pk=submission_id).first()
        if submission is None or submission.is_final:
            return None
        if submission.attempts >= settings.NVMEDB_MAX_VALIDATION_ATTEMPTS:
            _transition(submission, SubmissionStatus.HELD, note="too many failed attempts")
            last = submission.last_error or (
                "none was recorded (the worker was stopped, or the database was unreachable when it failed)"
            )
            submission.report = _report(
                outcome="held",
                detail=f"The last error: {last}",
                reasons=[f"Validation failed {submission.attempts} times without an answer; staff will look at it."],
            )
            submission.finished_at = timezone.now()
            submission.save()
            return None
        _transition(submission, SubmissionStatus.VALIDATING, note=f"attempt {submission.attempts + 1}")
        submission.attempts += 1
        submission.save()
        return submission


def _finish(submission_id: uuid.UUID, *, status: str, report: dict, key: SigningKey | None = None) -> Submission:
    with transaction.atomic():
        submission = Submission.objects.select_for_update().get(pk=submission_id)
        if submission.is_final:
            return submission
        _transition(submission, status, note=report.get("rule") or "", reasons=report.get("reasons"))
        submission.report = report
        submission.signing_key = key or submission.signing_key
        submission.finished_at = timezone.now()
        submission.save()
        return submission


def verify_stored_bundle(*, submission: Submission, storage: Storage | None = None):
    """Verifies the stored bundle of `submission` in one read of its stream (submissions.storage.open_bundle, a
    directory or a bucket alike), keeping its files in memory within the site's limits
    (settings.NVMEDB_BUNDLE_LIMITS); nothing is copied to disk first. Raises BundleError; close the result (or use
    `with`)."""
    from nvmedb_client.bundle import BundleLimits, verify_bundle_stream

    limits = BundleLimits(**getattr(settings, "NVMEDB_BUNDLE_LIMITS", {}))
    with open_bundle(submission, storage=storage) as stream:
        return verify_bundle_stream(
            stream, limits=limits, trusted_keys=None, name=Path(submission.storage_name).name, spill_prefix=SPILL_PREFIX
        )


def _ingest_function():
    """analysis.ingest.ingest_submission, or None while the dataset app does not provide it."""
    try:
        from analysis.ingest import ingest_submission
    except ImportError:
        return None
    return ingest_submission


def submission_validate(*, submission_id: uuid.UUID, storage: Storage | None = None) -> Submission | None:
    """Checks a stored bundle and hands it to the dataset ingest. Safe to run twice or after a killed worker:
    the final step locks the row and does nothing when another run already finished it, and the ingest writes
    its rows in the same transaction as the final status.

    Poison detection: only TRANSIENT_ERRORS (and the time limit) leave the submission to be tried again; any other
    error is the bundle's doing, so the submission is rejected on this first attempt with the error as its reason."""
    with leases.leased(submission_id) as ours:
        if not ours:  # a live worker is validating it: this is a second delivery of the same message
            logger.info("submission %s is being validated by another worker; nothing to do", submission_id)
            return Submission.objects.filter(pk=submission_id).first()
        return _validate_leased(submission_id, storage or default_storage)


def _validate_leased(submission_id: uuid.UUID, storage: Storage) -> Submission | None:
    submission = _claim(submission_id)
    if submission is None:
        return Submission.objects.filter(pk=submission_id).first()
    delay = float(getattr(settings, "NVMEDB_TEST_VALIDATION_DELAY_S", 0) or 0)
    if delay:
        time.sleep(delay)
    try:
        return _validate_claimed(submission, storage)
    except Exception as exc:
        if isinstance(exc, TRANSIENT_ERRORS):
            _note_fault(submission, exc)
        if isinstance(exc, (*TRANSIENT_ERRORS, SoftTimeLimitExceeded)):
            raise
        logger.exception("submission %s: the pipeline could not read it; rejected", submission_id)
        detail = f"The site could not read this bundle ({type(exc).__name__}: {str(exc)[:300]})."
        report = _report(outcome="rejected", rule="unreadable", detail=detail)
        return _finish(submission_id, status=SubmissionStatus.REJECTED, report=report)


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


def _validate_claimed(submission: Submission, storage: Storage) -> Submission:
    from nvmedb_client.bundle import BundleError

    submission_id = submission.pk
    try:
        bundle = verify_stored_bundle(submission=submission, storage=storage)
    except BundleError as exc:
        report = _report(outcome="rejected", rule=exc.code, detail=exc.message)
        return _finish(submission_id, status=SubmissionStatus.REJECTED, report=report)

    with bundle:
        check = check_signing_key(
            uploader_id=submission.uploader_id, public_key=bytes(bundle.public_key), fingerprint=bundle.fingerprint
        )
        if check.rule:
            detail = f"The bundle's signing key has the fingerprint {bundle.fingerprint}."
            report = _report(outcome="rejected", rule=check.rule, detail=detail)
            return _finish(submission_id, status=SubmissionStatus.REJECTED, report=report, key=check.key)

        record_fingerprints(submission=submission, fingerprints=bundle_fingerprints(bundle))
        conflict = first_received_conflict(submission)
        if conflict is not None:
            report = _content_report(conflict)
            return _finish(submission_id, status=SubmissionStatus.REJECTED, report=report, key=check.key)

        ingest = _ingest_function()
        if ingest is None:
            report = _report(outcome="held", reasons=["The bundle is valid; this site has no dataset ingest yet."])
            return _finish(submission_id, status=SubmissionStatus.HELD, report=report, key=check.key)

        with transaction.atomic():
            locked = Submission.objects.select_for_update().get(pk=submission_id)
            if locked.is_final:
                return locked
            _transition(locked, SubmissionStatus.INGESTING)
            locked.signing_key = check.key
            locked.save()
        with transaction.atomic():
            locked = Submission.objects.select_for_update().get(pk=submission_id)
            if locked.is_final:
                return locked
            # Judged again under lock: of two accounts' copies validated at once, only the first publishes.
            lock_fingerprints(locked)
            conflict = first_received_conflict(locked)
            if conflict is not None:
                _transition(locked, SubmissionStatus.REJECTED, note=conflict.rule)
                locked.report = _content_report(conflict)
                locked.finished_at = timezone.now()
                locked.save()
                return locked
            outcome = ingest(submission=locked, bundle=bundle)
            reasons = [str(r) for r in outcome.reasons]
            status, rule = outcome.status, ""
            review = review_reason(locked.uploader, submission=locked) if status != SubmissionStatus.REJECTED else None
            if review:
                reasons.append(review)
                if status == SubmissionStatus.PUBLISHED:
                    status, rule = SubmissionStatus.HELD, "review"
            if status == "rejected":
                detail = "; ".join(reasons[:3]) + (f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else "")
                report = _report(outcome="rejected", rule="ingest", detail=detail, reasons=reasons)
            else:
                report = _report(outcome=status, rule=rule, reasons=reasons)
            _transition(locked, status, reasons=reasons)
            locked.report = report
            locked.finished_at = timezone.now()
            if status == SubmissionStatus.PUBLISHED:
                locked.published_at = locked.finished_at
            locked.save()
            if status == SubmissionStatus.PUBLISHED:
                _withdraw_later_copies(locked)
            if status != outcome.status:
                _refresh_dataset(locked)  # the ingest counted it as published; the aggregates must not
            return locked


def _content_report(conflict: Conflict) -> dict:
    return _report(outcome="rejected", rule=conflict.rule, detail=conflict.sentence())


def _withdraw_later_copies(original: Submission) -> None:
    """`original` is published: another account's copy of it received later, yet published (it was sent while
    `original` was held, or before the rule held received submissions to it), is withdrawn and hidden, with the
    reason, and leaves the dataset. The caller holds the fingerprint locks."""
    for copy in later_copies(original):
        locked = Submission.objects.select_for_update().get(pk=copy.pk)
        if locked.status != SubmissionStatus.PUBLISHED:
            continue
        reason = (
            f"A copy of submission {original.pk}, which another contributor sent first: a measurement is published "
            "once, under the account that ran it."
        )
        _transition(locked, SubmissionStatus.WITHDRAWN, note=f"withdrawn: {reason}")
        locked.report = _report(outcome="withdrawn", rule="copy_withdrawn", detail=reason)
        locked.withdrawn_at = timezone.now()
        locked.hidden = True  # a stolen copy counts as no accepted submission of its account
        locked.moderation_reason = reason
        locked.save()
        _refresh_dataset(locked)


@transaction.atomic
def submission_approve(*, submission: Submission, by: AbstractBaseUser) -> Submission:
    """Staff publish a held submission whose dataset rows were stored (held for review, for a failed plausibility
    gate or a cross-check staff judged harmless; an outlier is published with its flag, never held); the drive
    models' aggregates follow in the same transaction."""
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    if locked.status != SubmissionStatus.HELD:
        raise NotApprovable(f"Submission {locked.pk} is {locked.status}; only a held submission can be approved.")
    if not _has_dataset_rows(locked):
        raise NotApprovable(
            f"Submission {locked.pk} has no dataset rows (validation never finished); it cannot be published as is."
        )
    lock_fingerprints(locked)
    conflict = first_received_conflict(locked)
    if conflict is not None:
        raise NotApprovable(f"Submission {locked.pk}: {conflict.sentence()}")
    _transition(locked, SubmissionStatus.PUBLISHED, note=f"approved by {by}")
    now = timezone.now()
    locked.report = {
        **(locked.report or {}),
        "outcome": "published",
        "rule": "",
        "summary": "",
        "approved": f"Published after review by staff on {now:%Y-%m-%d}.",
    }
    locked.finished_at = locked.finished_at or now
    locked.published_at = now
    locked.save()
    _refresh_dataset(locked)
    _withdraw_later_copies(locked)
    return locked


def submission_fingerprint_stored(*, submission: Submission, storage: Storage | None = None) -> int:
    """Records the fio-output digests of a stored submission validated before digests existed, so content it
    published is protected too. Returns how many digests it has; raises BundleError when its bundle no longer
    verifies."""
    with verify_stored_bundle(submission=submission, storage=storage) as bundle:
        record_fingerprints(submission=submission, fingerprints=bundle_fingerprints(bundle))
    return submission.fio_fingerprints.count()


def submission_time_out(*, submission_id: uuid.UUID) -> Submission:
    report = _report(outcome="held", rule="timeout", reasons=["Validation took too long; staff will look at it."])
    return _finish(submission_id, status=SubmissionStatus.HELD, report=report)
