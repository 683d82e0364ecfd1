"""A drive model's public data changed: recorded in the transaction that changes it, announced once it commits.

The write path (analysis.aggregate_refresh) bumps the drive's `data_version` and `data_changed_at` under the drive's
row lock, in the transaction that publishes, withdraws, hides, rejects or re-derives a submission. After the commit,
`drive_data_changed` is sent with the drive's id, and the read side rebuilds what it derives from the drive's data
(analysis.tasks queues the page summary's rebuild: browse.summaries). A rolled-back change announces
nothing. So the write path never imports page code nor waits on it, and a page knows how far its summary lags behind
(its summary's `data_version` against the drive's).
"""

from __future__ import annotations

from functools import partial

from django.db import transaction
from django.db.models import F
from django.dispatch import Signal
from django.utils import timezone

from analysis.models import DriveModel

# sent after the commit of a change to a drive model's public data, with `drive_model_id`
drive_data_changed = Signal()


def mark_drive_changed(drive_model_id: int) -> None:
    """Record, in the current transaction, that `drive_model_id`'s public data changed; announce it after commit."""
    DriveModel.objects.filter(pk=drive_model_id).update(
        data_version=F("data_version") + 1, data_changed_at=timezone.now()
    )
    transaction.on_commit(partial(announce_change, drive_model_id))


def announce_change(drive_model_id: int) -> None:
    drive_data_changed.send(sender=DriveModel, drive_model_id=drive_model_id)
