"""Decisions about a submission after validation: its owner withdraws it; staff approve a held one, hide or reject
it. Each is logged in the moderation log (ModerationDecision), and the dataset follows through submissions.hooks."""

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from submissions import hooks
from submissions.first_received import first_received_conflict, later_copies, lock_fingerprints
from submissions.models import ModerationAction, ModerationDecision, Submission, SubmissionStatus
from submissions.transitions import report, transition


class NotApprovable(Exception):
    """Staff cannot publish this submission as it is (not held, no dataset rows, or its content is someone else's)."""


def decision_record(
    *, submission: Submission, action: str, reason: str = "", by: AbstractBaseUser | None = None
) -> ModerationDecision:
    """Appends a decision to the moderation log; `by` is None when the pipeline decided on its own."""
    return ModerationDecision.objects.create(
        submission=submission,
        decided_by=by,
        decided_by_name=by.get_username() if by is not None else "",
        action=action,
        reason=reason,
    )


@transaction.atomic
def submission_withdraw(*, submission: Submission, by: AbstractBaseUser) -> Submission:
    """The owner takes a submission back: it leaves pages and future releases; the row stays as a tombstone."""
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    if locked.uploader_id != by.pk:
        raise PermissionDenied("Only the contributor who uploaded a submission can withdraw it.")
    if locked.status != SubmissionStatus.WITHDRAWN:
        transition(locked, SubmissionStatus.WITHDRAWN, note="withdrawn by its owner")
        locked.withdrawn_at = timezone.now()
        locked.save()
        decision_record(submission=locked, action=ModerationAction.WITHDRAW, reason="withdrawn by its owner", by=by)
        hooks.refresh_dataset.call(submission=locked)
    return locked


@transaction.atomic
def submission_hide(*, submission: Submission, reason: str, by: AbstractBaseUser) -> Submission:
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    locked.hidden = True
    locked.moderation_reason = reason
    locked.events.create(from_status=locked.status, to_status=locked.status, note=f"hidden by {by}: {reason}")
    locked.save()
    decision_record(submission=locked, action=ModerationAction.HIDE, reason=reason, by=by)
    hooks.refresh_dataset.call(submission=locked)
    return locked


@transaction.atomic
def submission_reject(*, submission: Submission, reason: str, by: AbstractBaseUser) -> Submission:
    """Staff rejection. Works on published submissions too: the dataset only ever shows published ones."""
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    if locked.status in (SubmissionStatus.REJECTED, SubmissionStatus.WITHDRAWN):
        return locked
    transition(locked, SubmissionStatus.REJECTED, note=f"rejected by {by}: {reason}", reasons=[reason])
    locked.report = report(outcome="rejected", rule="moderation", detail=reason)
    locked.moderation_reason = reason
    locked.finished_at = timezone.now()
    locked.save()
    decision_record(submission=locked, action=ModerationAction.REJECT, reason=reason, by=by)
    hooks.refresh_dataset.call(submission=locked)
    return locked


def _has_dataset_rows(submission: Submission) -> bool:
    """Whether the dataset stored rows for `submission` (its test runs point back at it)."""
    return Submission.objects.filter(pk=submission.pk, test_runs__isnull=False).exists()


@transaction.atomic
def submission_approve(*, submission: Submission, by: AbstractBaseUser, reason: str = "") -> Submission:
    """Staff publish a held submission whose dataset rows were stored (held for review, for a failed plausibility
    gate or a cross-check staff judged harmless). Staff judged the unit, so its held-for-review and outlier flags
    leave its runs (the decision stays in the moderation log); the drive models' aggregates follow in the same
    transaction."""
    locked = Submission.objects.select_for_update().get(pk=submission.pk)
    if locked.status != SubmissionStatus.HELD:
        raise NotApprovable(f"Submission {locked.pk} is {locked.status}; only a held submission can be approved.")
    if not _has_dataset_rows(locked):
        raise NotApprovable(
            f"Submission {locked.pk} has no dataset rows (validation never finished); it cannot be published as is."
        )
    matching_rows = lock_fingerprints(locked)
    conflict = first_received_conflict(locked, matching_rows)
    if conflict is not None:
        raise NotApprovable(f"Submission {locked.pk}: {conflict.sentence()}")
    held_for = "; ".join(str(r) for r in (locked.report or {}).get("reasons", []))
    transition(locked, SubmissionStatus.PUBLISHED, note=f"approved by {by}")
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
    reason = reason or (f"held for: {held_for}" if held_for else "")
    decision_record(submission=locked, action=ModerationAction.APPROVE, reason=reason, by=by)
    hooks.clear_review_flags.call(submission=locked)
    hooks.refresh_dataset.call(submission=locked)
    withdraw_later_copies(locked)
    return locked


def withdraw_later_copies(original: Submission) -> None:
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
        transition(locked, SubmissionStatus.WITHDRAWN, note=f"withdrawn: {reason}")
        locked.report = report(outcome="withdrawn", rule="copy_withdrawn", detail=reason)
        locked.withdrawn_at = timezone.now()
        locked.hidden = True  # a stolen copy counts as no accepted submission of its account
        locked.moderation_reason = reason
        locked.save()
        decision_record(submission=locked, action=ModerationAction.WITHDRAW, reason=reason)
        hooks.refresh_dataset.call(submission=locked)
