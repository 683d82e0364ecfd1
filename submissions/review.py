"""Who is still in review: a contributor's first submissions wait for staff until NVMEDB_REVIEW_FIRST_N of theirs
were accepted. Staff accounts are trusted from the start, and a private submission (a trial run) is never held: it is
never public, so review would hold nothing back. The dataset reads `established_uploader_ids` so that only
contributors past review vote on what is an outlier."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count

from submissions.models import Submission, SubmissionStatus
from submissions.private import exclude_private, is_private


def review_first_n() -> int:
    return max(0, int(getattr(settings, "NVMEDB_REVIEW_FIRST_N", 3)))


def accepted_submissions():
    """Submissions that count as accepted: published (by the pipeline or a staff approval), not hidden or rejected
    by staff since, and public (a trial run kept to its contributor proves nothing); one its owner withdrew later
    still counts."""
    return exclude_private(
        Submission.objects.filter(
            published_at__isnull=False,
            status__in=[SubmissionStatus.PUBLISHED, SubmissionStatus.WITHDRAWN],
            hidden=False,
        )
    )


def accepted_count(user_id: int) -> int:
    return accepted_submissions().filter(uploader_id=user_id).count()


def review_reason(uploader, *, submission: Submission | None = None) -> str | None:
    """Why a submission of `uploader` waits for staff, or None when they are past review or `submission` (its rows
    stored) is private: a trial is published to its owner alone, and it does not count as accepted either."""
    needed = review_first_n()
    if needed == 0 or uploader.is_staff:
        return None
    if submission is not None and is_private(submission):
        return None
    accepted = accepted_count(uploader.pk)
    if accepted >= needed:
        return None
    return (
        f"A new contributor's first {needed} submissions are published after staff review them; "
        f"{accepted} of yours {'has' if accepted == 1 else 'have'} been accepted so far."
    )


def established_uploader_ids(user_ids: Iterable[int]) -> set[int]:
    """The accounts among `user_ids` that are past review (two queries)."""
    ids = set(user_ids)
    needed = review_first_n()
    if needed == 0 or not ids:
        return ids
    staff = get_user_model().objects.filter(pk__in=ids, is_staff=True).values_list("pk", flat=True)
    past_review = (
        accepted_submissions()
        .filter(uploader_id__in=ids)
        .values("uploader_id")
        .annotate(accepted=Count("pk"))
        .filter(accepted__gte=needed)
        .values_list("uploader_id", flat=True)
    )
    return set(staff) | set(past_review)
