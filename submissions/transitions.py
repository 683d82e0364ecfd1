"""Status changes of a submission, each logged as an event, and the report a contributor reads. The dataset's runs
follow a change through submissions.hooks."""

import uuid

from django.db import transaction
from django.utils import timezone

from submissions import hooks
from submissions.models import SigningKey, Submission, SubmissionEvent, SubmissionStatus
from submissions.rules import rule_sentence


def transition(submission: Submission, to: str, *, note: str = "", reasons: list[str] | None = None) -> None:
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
        hooks.runs_follow_status.call(submission=submission, status=to, reasons=reasons or ([note] if note else []))


def report(*, outcome: str, rule: str = "", detail: str = "", reasons: list[str] | None = None) -> dict:
    return {
        "outcome": outcome,
        "rule": rule,
        "summary": rule_sentence(rule) if rule else "",
        "detail": storable(detail),
        "reasons": [storable(reason) for reason in reasons or []],
    }


def storable(text: str) -> str:
    """Reasons quote the bundle; PostgreSQL's JSON cannot hold a NUL character, so it is shown escaped."""
    return str(text).replace("\x00", "\\x00")


def finish(submission_id: uuid.UUID, *, status: str, report: dict, key: SigningKey | None = None) -> Submission:
    """Gives a submission its final status and report, under its row lock; a submission already final is left."""
    with transaction.atomic():
        submission = Submission.objects.select_for_update().get(pk=submission_id)
        if submission.is_final:
            return submission
        transition(submission, status, note=report.get("rule") or "", reasons=report.get("reasons"))
        submission.report = report
        submission.signing_key = key or submission.signing_key
        submission.finished_at = timezone.now()
        submission.save()
        return submission
