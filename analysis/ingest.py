"""Turn one verified bundle into dataset rows: the single entry point the intake pipeline calls.

Contract with intake: `ingest_submission(*, submission, bundle) -> IngestOutcome`. Everything slow (reading and
parsing every fio output, the cross-checks, steady state, the hardware normalisation) happens first, without the
database; then every row of the submission is written in one transaction (all or nothing), after deleting whatever
an earlier attempt wrote, so running it twice yields the same rows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from django.db import transaction

from analysis import raw_identifiers
from analysis.bundle_reader import read_bundle
from analysis.poison import UnreadableBundle
from analysis.services import store_submission

if TYPE_CHECKING:
    from nvmedb_client.bundle import VerifiedBundle
    from submissions.models import Submission

logger = logging.getLogger(__name__)

OutcomeStatus = Literal["published", "held", "rejected"]


@dataclass(frozen=True)
class IngestOutcome:
    """What became of a submission: published, held for review (rows kept, not public) or rejected (no rows)."""

    status: OutcomeStatus
    reasons: list[str] = field(default_factory=list)


def ingest_submission(*, submission: Submission, bundle: VerifiedBundle) -> IngestOutcome:
    """Parse, cross-check and store every run of `bundle` for `submission`; say what should happen to it.

    Rejected: no rows are left for the submission and `reasons` names each failed check exactly. Held: the rows are
    stored for staff to review and `reasons` says why (smart-log counters that disagree with fio, a failed
    plausibility gate). Published: the rows are stored and the model's aggregates include them; a result far from
    the model's other contributors is published with an outlier flag, never held for it. A bundle
    that makes the reader fail unexpectedly is rejected at once with the file it failed on (analysis.poison).
    """
    try:
        record = read_bundle(bundle)
    except UnreadableBundle as unreadable:
        logger.warning("submission %s: %s", submission.pk, unreadable.reason, exc_info=unreadable.error)
        return IngestOutcome(status="rejected", reasons=[unreadable.reason])
    result = store_submission(submission=submission, record=record)
    if result.status != "rejected":
        storage_name = submission.storage_name
        transaction.on_commit(lambda: raw_identifiers.remember_verified(storage_name, bundle))
    return IngestOutcome(status=result.status, reasons=result.reasons)
