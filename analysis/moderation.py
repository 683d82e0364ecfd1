"""The dataset's half of a staff approval: the flags that held a unit back, or labelled it an outlier among its
model's peers, leave its runs once staff judged it. The decision itself stays in the moderation log
(submissions.models.ModerationDecision)."""

from analysis.models import Flag, FlagKind

# what a staff approval answers: the hold itself and the crowd's doubt about the unit
CLEARED_BY_APPROVAL = (FlagKind.HELD_FOR_REVIEW, FlagKind.OUTLIER)


def clear_review_flags(*, submission) -> int:
    """Deletes the held-for-review and outlier flags of `submission`'s runs, so they leave its drive page and the
    exports; returns how many were deleted. The caller refreshes the drive's aggregates and summary afterwards."""
    deleted, _ = Flag.objects.filter(submission=submission, kind__in=CLEARED_BY_APPROVAL).delete()
    return deleted
