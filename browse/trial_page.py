"""A trial's charts on its submission page, for its owner: the drive page's chart sections (browse.drive_page)
drawn from the trial's own runs, which no public page reads (analysis.selectors). They are drawn while the owner sees
the trial (published, or held by a check staff look at); a rejected or withdrawn trial has none."""

from __future__ import annotations

from django.urls import reverse
from django.utils.safestring import mark_safe

from analysis.models import DriveModel, Flag, TestRun
from analysis.selectors import TRIAL_TARGET_KIND, pts_q, public_test_runs, shows_own_trial
from browse import drive_page, queries
from reports import registry

# Not the drive page's "spread" section: one trial is no population of units, and a file target is no unit at all.
TRIAL_SECTIONS = (*registry.core_sections(), "conditions")
# How to read a section that speaks of a drive, for a file target: what was measured is the host's, not a drive's.
FILE_TARGET_HOW_TO_READ = {test: s.file_target_how_to_read for test, s in registry.core_sections().items()}


def trial_sections(submission) -> list[dict]:
    """[{key, title, how_to_read, html}] of the trial `submission`'s own PTS runs, every value escaped by the charts;
    empty in a status its owner does not see it in, or before its runs are stored."""
    if not shows_own_trial(submission):
        return []
    runs = TestRun.objects.filter(submission=submission)
    file_target = runs.filter(target_kind=TRIAL_TARGET_KIND).exists()
    drive_id = runs.filter(pts_q()).order_by("test").values_list("drive_model_id", flat=True).first()
    if drive_id is None:
        return []
    drive = DriveModel.objects.select_related("vendor").get(pk=drive_id)
    summaries, all_runs = queries.compute_summaries(
        [drive.pk], {}, runs_of=runs, flags_of=Flag.objects.filter(submission=submission)
    )
    data = queries.drive_data_of(drive=drive, aggregates=[], summary=summaries[drive.pk], all_runs=all_runs[drive.pk],
                                 submission_id=submission.pk, runs_of=runs)  # fmt: skip
    found = drive_page.build_sections(data, csv_link=lambda key: "")  # a drive's chart CSVs read public runs only
    how_to_read = FILE_TARGET_HOW_TO_READ if file_target else {}
    return [
        {**s, "how_to_read": how_to_read.get(s["key"], s["how_to_read"]), "html": mark_safe(s["html"])}  # noqa: S308
        for s in found
        if s["key"] in TRIAL_SECTIONS
    ]


def surface_url(submission, viewer_id: int | None) -> str:
    """The submission's surface page (an nvmedb extension) when the viewer may see its surface run: anyone when it is
    public, only its owner when it is a trial; '' otherwise."""
    runs = public_test_runs(trials_of=viewer_id).filter(submission=submission, test="surface")
    return reverse("submission-surface", args=[submission.pk]) if runs.exists() else ""
