"""Submissions kept to their contributor although published. Apps holding a submission's results (analysis: trial
runs) register a filter here instead of this app reading theirs: `private_filter()` is a Q over Submission rows that
matches the private ones."""

from collections.abc import Callable

from django.db.models import Q, QuerySet

from submissions.models import Submission

_private_filters: list[Callable[[], Q]] = []


def register_private_filter(private_filter: Callable[[], Q]) -> None:
    if private_filter not in _private_filters:
        _private_filters.append(private_filter)


def private_q() -> Q | None:
    """Submissions some app keeps to their contributor, or None when no app keeps any."""
    filters = [private_filter() for private_filter in _private_filters]
    if not filters:
        return None
    combined = filters[0]
    for extra in filters[1:]:
        combined |= extra
    return combined


def exclude_private(submissions: QuerySet[Submission]) -> QuerySet[Submission]:
    condition = private_q()
    return submissions if condition is None else submissions.exclude(condition)


def is_private(submission: Submission) -> bool:
    condition = private_q()
    return condition is not None and Submission.objects.filter(condition, pk=submission.pk).exists()
