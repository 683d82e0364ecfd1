"""What analysis answers when intake (submissions) asks: the functions it registers in submissions.hooks and the
other registries of that app, from AnalysisConfig.ready()."""

from analysis import moderation
from analysis.explain import explain_submission
from analysis.ingest import ingest_submission
from analysis.selectors import trial_submission_q
from analysis.services import refresh_aggregates_for_submission, runs_follow_status
from browse.queries import submission_dataset
from browse.trial_page import surface_url, trial_sections
from submissions import hooks
from submissions.private import register_private_filter


def submission_page(*, submission, with_files: bool, viewer_id: int | None, owner_view: bool) -> dict:
    """The submission's runs, rounds, windows and flags, its surface page's address when the viewer may see it, and
    for a trial seen by its owner (or staff), the trial's own charts."""
    context = submission_dataset(submission=submission, with_files=with_files)
    context["surface_url"] = surface_url(submission, viewer_id)
    if context["trial"] and owner_view:  # only its owner (and staff) ever see a trial
        context["sections"] = trial_sections(submission)
    return context


def register() -> None:
    hooks.ingest.register(ingest_submission)
    hooks.refresh_dataset.register(refresh_aggregates_for_submission)
    hooks.runs_follow_status.register(runs_follow_status)
    hooks.submission_page.register(submission_page)
    # "why is my unit different?" on the submission page and in its API answer
    hooks.explain.register(explain_submission)
    hooks.clear_review_flags.register(moderation.clear_review_flags)
    # a trial's page is its contributor's own, and a trial is no evidence that its contributor can be trusted
    register_private_filter(trial_submission_q)
