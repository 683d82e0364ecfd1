"""What a change to a drive's public data leaves once its transaction has committed and the task queued after the
commit has run (analysis.drive_changes): its aggregates, and its page summary rebuilt from the committed runs. Tests
that set rows up by hand, inside the test's transaction, call this where the site would publish."""

from __future__ import annotations

from analysis.browse.summaries import rebuild_summary
from analysis.services import refresh_aggregates


def refresh_and_summarise(*, drive_model, also_submission=None) -> int:
    rows = refresh_aggregates(drive_model=drive_model, also_submission=also_submission)
    rebuild_summary(drive_model.pk)
    return rows
