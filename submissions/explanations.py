"""Why a submission's unit differs from the others of its model. The app holding the results (analysis) registers
the function that answers here at startup, so this app shows the summary without reading that app's models."""

from collections.abc import Callable

from submissions.models import Submission

_explainers: list[Callable[[Submission], dict | None]] = []


def register_explainer(explainer: Callable[[Submission], dict | None]) -> None:
    if explainer not in _explainers:
        _explainers.append(explainer)


def explanation_of(submission: Submission) -> dict | None:
    """The first registered explainer's summary, or None when no app explains submissions or it has no test run."""
    for explainer in _explainers:
        summary = explainer(submission)
        if summary is not None:
            return summary
    return None
