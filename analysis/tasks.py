"""Thin Celery tasks for the dataset: they only orchestrate services."""

import logging

from celery import shared_task
from django.core.cache import cache
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerUnavailable

from analysis import factor_effects
from analysis.models import DriveModel
from browse import summaries
from datasets import releases
from nvmedb.storage import StorageUnavailable
from submissions.models import Submission

logger = logging.getLogger(__name__)

# A factor fit (a drive's public units, or a held submission's): acknowledged once done, so a killed worker's runs
# again; retried on a database fault; ten minutes at most.
FIT_TASK = {
    "acks_late": True,
    "ignore_result": True,
    "soft_time_limit": 600,
    "time_limit": 660,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 30,
    "max_retries": 3,
}


@shared_task(
    acks_late=True,
    soft_time_limit=3 * 3600,
    time_limit=3 * 3600 + 300,
    autoretry_for=(OperationalError, InterfaceError, StorageUnavailable),
    retry_backoff=60,
    max_retries=3,
)
def build_release(force: bool = False) -> int | None:
    """Build the next data set release (weekly from beat, or on demand by staff). Safe to run twice: builds are
    serialized by a lock, a second one with nothing new publishes nothing, and a killed one leaves no release."""
    result = releases.build_release(force=force)
    logger.info(result.message)
    return result.number


@shared_task(**FIT_TASK)
def refresh_factor_effects(drive_model_id: int) -> int | None:
    """Refit a drive model's factor effects after its public data changed (analysis.factor_effects). Returns the
    effect rows written; 0 for a drive model deleted since; None when an earlier refit already read this change."""
    drive_model = DriveModel.objects.filter(pk=drive_model_id).first()
    if drive_model is None:
        return 0
    return factor_effects.refresh_factor_effects(drive_model, only_if_changed=True)


@shared_task(**FIT_TASK)
def refresh_held_figures(submission_id) -> int:
    """Fit a held submission's units with its drives' public units (analysis.factor_effects.refresh_held_figures).
    Returns the rows written; 0 for a submission gone or no longer held."""
    submission = Submission.objects.filter(pk=submission_id).first()
    cache.delete(_held_figures_key(submission_id))  # a change from here on may queue another refit
    if submission is None:
        return 0
    return factor_effects.refresh_held_figures(submission)


@shared_task(
    acks_late=True,
    ignore_result=True,
    soft_time_limit=600,
    time_limit=660,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=5,
    max_retries=5,
)
def rebuild_page_summary(drive_model_id: int) -> str:
    """Rebuild a drive's page summary from its committed public runs (browse.summaries), queued after the
    commit of every change of its public data. Idempotent: a second run, or one after a later change's, does
    nothing; a killed one leaves the previous summary whole and runs again (acks_late)."""
    return summaries.rebuild_summary(drive_model_id)


def queue_page_summary(sender=None, *, drive_model_id: int, **kwargs) -> None:
    """Receives analysis.drive_changes.drive_data_changed (connected in analysis.apps): queue the rebuild. While the
    broker is away the page keeps its previous summary (and says how old it is) until the drive's next change or
    `manage.py refresh_aggregates --missing`."""
    _queue(rebuild_page_summary, drive_model_id, "page summary rebuild")


def queue_factor_refit(sender=None, *, drive_model_id: int, **kwargs) -> None:
    """Receives analysis.drive_changes.drive_data_changed (connected in analysis.apps): queue the refit of the drive's
    factor effects. A broker outage only delays the refit to the drive's next change or
    `manage.py refresh_factor_effects`."""
    _queue(refresh_factor_effects, drive_model_id, "factor refit")


def _queue(task, object_id, what: str, of: str = "drive model") -> bool:
    """The change is committed; a broker outage only delays what derives from it, so it is logged, not raised.
    Whether the task was queued."""
    try:
        task.delay(object_id)
    except (BrokerUnavailable, OSError):
        logger.warning("could not queue the %s of %s %s", what, of, object_id, exc_info=True)
        return False
    return True


HELD_FIGURES_QUEUED_SECONDS = 600


def queue_held_figures(submission_id) -> None:
    """Queue the refit of a held submission's figures, once until that task starts (or ten minutes pass): called
    when a submission is held, and by each view of a held submission's page whose figures are stale. Not queued (the
    broker away), the next view tries again."""
    key = _held_figures_key(submission_id)
    try:
        if not cache.add(key, 1, HELD_FIGURES_QUEUED_SECONDS):
            return
    except Exception:  # noqa: BLE001 - without the cache, each stale view queues one (a fit of one held unit)
        logger.warning("held figures of %s: queued without the cache's guard", submission_id, exc_info=True)
    if not _queue(refresh_held_figures, str(submission_id), "figures refit", of="held submission"):
        cache.delete(key)


def _held_figures_key(submission_id) -> str:
    return f"held-figures-queued:{submission_id}"
