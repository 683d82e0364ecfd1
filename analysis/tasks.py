"""Thin Celery tasks for the dataset: they only orchestrate services."""

import logging

from celery import shared_task
from django.db import InterfaceError, OperationalError

from analysis.datasets import releases
from nvmedb.storage import StorageUnavailable

logger = logging.getLogger(__name__)


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


@shared_task(
    acks_late=True,
    ignore_result=True,
    soft_time_limit=600,
    time_limit=660,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=30,
    max_retries=3,
)
def refresh_factor_effects(drive_model_id: int) -> int:
    """Refit a drive model's factor effects after its public data changed (analysis.factor_effects). Returns the
    effect rows written; 0 for a drive model deleted since."""
    from analysis.factor_effects import refresh_factor_effects as refit
    from analysis.models import DriveModel

    drive_model = DriveModel.objects.filter(pk=drive_model_id).first()
    return refit(drive_model) if drive_model is not None else 0
