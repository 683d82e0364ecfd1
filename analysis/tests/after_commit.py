"""What a change to a drive's public data leaves once its transaction has committed and the task queued after the
commit has run (analysis.drive_changes): its aggregates, its measurements' export rows as the store writes them
(datasets.export_rows), and its page summary rebuilt from the committed runs. Tests that set rows up by
hand, inside the test's transaction, call this where the site would publish."""

from __future__ import annotations

from analysis.services import refresh_aggregates
from browse.summaries import rebuild_summary
from datasets import export_rows


def refresh_and_summarise(*, drive_model, also_submission=None) -> int:
    rows = refresh_aggregates(drive_model=drive_model, also_submission=also_submission)
    export_rows.rebuild_for_drive_model(drive_model.pk)
    rebuild_summary(drive_model.pk)
    return rows
