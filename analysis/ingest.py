"""Turn one verified bundle into dataset rows: the single entry point the intake pipeline calls.

Contract with intake (submissions.hooks.Ingest): `ingest_submission(*, submission, bundle, review_reason="") ->
IngestOutcome`, registered in AnalysisConfig.ready(). Everything slow (reading and
parsing every fio output, the cross-checks, steady state, the hardware normalisation) happens first, without the
database; then every row of the submission is written in one transaction (all or nothing), after deleting whatever
an earlier attempt wrote, so running it twice yields the same rows.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

from django.db import transaction

from analysis import raw_identifiers
from analysis.bundle_reader import read_bundle
from analysis.poison import UnreadableBundle
from analysis.selectors import TRIAL_PROFILE, TRIAL_TARGET_KIND
from analysis.services import store_submission
from analysis.tasks import queue_held_figures
from submissions.hooks import IngestOutcome

if TYPE_CHECKING:
    from analysis.records import SubmissionRecord
    from nvmedb_client.bundle import VerifiedBundle
    from submissions.models import Submission

logger = logging.getLogger(__name__)

__all__ = ["IngestOutcome", "ingest_submission"]


def ingest_submission(*, submission: Submission, bundle: VerifiedBundle, review_reason: str = "") -> IngestOutcome:
    """Parse, cross-check and store every run of `bundle` for `submission`; say what should happen to it.

    Rejected: no rows are left for the submission and `reasons` names each failed check exactly. Held: the rows are
    stored for staff to review and `reasons` says why (smart-log counters that disagree with fio, a failed
    plausibility gate). Published: the rows are stored and the model's aggregates include them; a result far from
    the model's other contributors is published with an outlier flag, never held for it. A bundle
    that makes the reader fail unexpectedly is rejected at once with the file it failed on (analysis.poison).

    `review_reason` is intake's decision, taken before anything is stored: the rows are stored as held from the
    start, so no aggregate ever counts them, unless the bundle is a trial (never public: review holds nothing back).
    """
    try:
        record = read_bundle(bundle)
    except UnreadableBundle as unreadable:
        logger.warning("submission %s: %s", submission.pk, unreadable.reason, exc_info=unreadable.error)
        return IngestOutcome(status="rejected", reasons=[unreadable.reason])
    review_hold = bool(review_reason) and not is_trial_record(record)
    if review_hold:
        record.hold_reasons.append(review_reason)
    result = store_submission(submission=submission, record=record)
    if result.status != "rejected":
        storage_name = submission.storage_name
        transaction.on_commit(lambda: raw_identifiers.remember_verified(storage_name, bundle))
    if result.status == "held":  # its figures, fitted with the drive's public units, for its page and staff's review
        transaction.on_commit(partial(queue_held_figures, submission.pk))
    reasons = result.reasons
    if review_hold and result.status != "rejected":  # the review sentence last, after the data's own reasons
        reasons = [reason for reason in reasons if reason != review_reason] + [review_reason]
    return IngestOutcome(status=result.status, reasons=reasons, review_hold=review_hold and result.status == "held")


def is_trial_record(record: SubmissionRecord) -> bool:
    """A run made to try the tool (a file target or the quick profile), as analysis.selectors.trial_q reads rows."""
    return record.target_kind == TRIAL_TARGET_KIND or record.profile == TRIAL_PROFILE
