"""Reads: who may see which submission, a contributor's credentials, and submissions a worker left behind."""

import uuid
from datetime import timedelta
from enum import Enum

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet
from django.utils import timezone

from submissions import leases
from submissions.accounts import token_digest
from submissions.models import ApiToken, SigningKey, Submission, SubmissionStatus
from submissions.private import is_private


class Visibility(Enum):
    OWNER = "owner"  # everything, including the report of a rejected bundle
    PUBLIC = "public"  # a published submission, as anyone sees it
    TOMBSTONE = "tombstone"  # a withdrawn submission that had been published: its id and when it left


def api_token_by_raw(raw: str) -> ApiToken | None:
    return ApiToken.objects.select_related("user").filter(digest=token_digest(raw)).first()


def api_tokens_of(user: AbstractBaseUser) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user)


def signing_keys_of(user: AbstractBaseUser) -> QuerySet[SigningKey]:
    return SigningKey.objects.filter(user=user)


def submissions_of(user: AbstractBaseUser) -> QuerySet[Submission]:
    return Submission.objects.filter(uploader=user)


def public_submissions() -> QuerySet[Submission]:
    """Submissions the dataset may show: published, not withdrawn, not hidden by staff."""
    return Submission.objects.filter(status=SubmissionStatus.PUBLISHED, hidden=False)


def withdrawn_submissions() -> QuerySet[Submission]:
    """Tombstones of submissions that had been published, for release notes."""
    return Submission.objects.filter(status=SubmissionStatus.WITHDRAWN, published_at__isnull=False)


def submission_visibility(submission: Submission, viewer: AbstractBaseUser | AnonymousUser) -> Visibility | None:
    if viewer.is_authenticated and (submission.uploader_id == viewer.pk or viewer.is_staff):
        return Visibility.OWNER
    if submission.status == SubmissionStatus.PUBLISHED and not submission.hidden and not is_private(submission):
        return Visibility.PUBLIC
    if submission.status == SubmissionStatus.WITHDRAWN and submission.published_at is not None:
        return Visibility.TOMBSTONE
    return None


def submission_for_viewer(
    *, submission_id: uuid.UUID, viewer: AbstractBaseUser | AnonymousUser
) -> tuple[Submission, Visibility] | None:
    submission = Submission.objects.select_related("uploader", "signing_key").filter(pk=submission_id).first()
    if submission is None:
        return None
    visibility = submission_visibility(submission, viewer)
    if visibility is None:
        return None
    return submission, visibility


def stranded_submission_ids(*, now=None) -> list[uuid.UUID]:
    """Submissions no worker is taking care of: still `received` after a grace period (the queue lost them or was
    down at upload time), in a worker's hands with no live lease (that worker died: submissions.leases), or in a
    worker's hands longer than a task may live (a worker hung with its lease alive)."""
    now = now or timezone.now()
    received_before = now - timedelta(seconds=settings.NVMEDB_REQUEUE_RECEIVED_AFTER_S)
    working_before = now - timedelta(seconds=settings.NVMEDB_REQUEUE_WORKING_AFTER_S)
    lease_lapsed_before = now - timedelta(seconds=leases.lease_seconds())
    working = [SubmissionStatus.VALIDATING, SubmissionStatus.INGESTING]
    candidates = list(
        Submission.objects.filter(
            Q(status=SubmissionStatus.RECEIVED, status_changed__lte=received_before)
            | Q(status__in=working, status_changed__lte=lease_lapsed_before)
        )
        .order_by("status_changed")
        .values_list("id", "status", "status_changed")[:500]
    )
    alive = leases.leased_ids(pk for pk, status, _ in candidates if status in working)
    return [
        pk
        for pk, status, changed in candidates
        if status == SubmissionStatus.RECEIVED or pk not in alive or changed <= working_before
    ]
