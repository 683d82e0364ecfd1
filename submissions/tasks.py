"""Thin Celery tasks: load by id, call one function of the pipeline. Queued with transaction.on_commit."""

import errno
import logging
import uuid

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerUnavailable

from submissions import pipeline, selectors

logger = logging.getLogger(__name__)


class DiskFull(OSError):
    """The worker's disk (or quota) filled up while it extracted a bundle: a fault of this machine, not the bundle."""


DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
# Database hiccups, lost storage connections and a full disk are worth another try; a bad bundle is not (it gets a
# report).
TRANSIENT_ERRORS = (OperationalError, InterfaceError, ConnectionError, TimeoutError, DiskFull)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.NVMEDB_VALIDATION_SOFT_TIME_LIMIT_S,
    time_limit=settings.NVMEDB_VALIDATION_TIME_LIMIT_S,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=5,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=5,
)
def validate_submission(self, submission_id: str) -> str | None:
    try:
        submission = pipeline.submission_validate(submission_id=uuid.UUID(submission_id))
    except SoftTimeLimitExceeded:
        submission = pipeline.submission_time_out(submission_id=uuid.UUID(submission_id))
    except OSError as exc:
        if exc.errno in DISK_FULL_ERRNOS:  # the extraction was removed with its temporary directory
            logger.warning("disk full while validating submission %s; retrying later", submission_id)
            raise DiskFull(exc.errno, exc.strerror) from exc
        raise
    return submission.status if submission is not None else None


def submission_enqueue(*, submission_id: uuid.UUID) -> bool:
    """Queues validation. When the broker is down the submission stays `received` and requeue_stranded retries it."""
    try:
        validate_submission.delay(str(submission_id))
    except BrokerUnavailable as exc:
        logger.warning("could not queue submission %s (%s); the periodic requeue will retry", submission_id, exc)
        return False
    return True


@shared_task(acks_late=True, soft_time_limit=60, time_limit=120)
def requeue_stranded() -> int:
    """Queues again every submission no worker is taking care of; returns how many."""
    ids = selectors.stranded_submission_ids()
    queued = sum(submission_enqueue(submission_id=submission_id) for submission_id in ids)
    if ids:
        logger.info("requeued %d of %d stranded submissions", queued, len(ids))
    return queued
