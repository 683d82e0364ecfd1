"""What a submission's status means for its test runs: a held or rejected submission is never compliant."""

from __future__ import annotations

from analysis.models import TestRun
from datasets import export_rows

PUBLISHED = "published"
HELD = "held"
REJECTED = "rejected"
# the compliance reason a held or rejected submission's runs carry first (runs_follow_status)
STATUS_MARKS = (f"{HELD}: ", f"{REJECTED}: ")


def runs_follow_status(*, submission, status: str, reasons: list[str] | tuple[str, ...] = ()) -> int:
    """A held or rejected submission is never compliant: its runs' `compliant` is lowered, with "held: <reasons>" (or
    "rejected: ...") as their first compliance reason. Any other status (staff approval publishing a held one) gives
    them back the verdict the server derived from the bundle, `derived_compliant`, and drops that reason. Returns the
    number of runs. Called by store_submission and, through submissions.services, on every status change."""
    runs = list(
        TestRun.objects.filter(submission=submission).only("compliant", "derived_compliant", "compliance_reasons")
    )
    held = status in (HELD, REJECTED)
    said = "; ".join(dict.fromkeys(str(r) for r in reasons)) or "see the submission's report"
    for run in runs:
        kept = [r for r in run.compliance_reasons or [] if not str(r).startswith(STATUS_MARKS)]
        run.compliance_reasons = [f"{status}: {said}"[:300], *kept] if held else kept
        run.compliant = run.derived_compliant and not held
    TestRun.objects.bulk_update(runs, ["compliant", "compliance_reasons"])
    export_rows.rebuild_for_submission(submission.pk)
    return len(runs)
