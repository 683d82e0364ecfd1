"""manage.py rederive_compliance: judge again, from each stored client bundle, whether its runs are PTS results."""

from django.core.management.base import BaseCommand
from django.db import transaction

from analysis.bundle_reader import read_bundle
from analysis.models import TestRun
from analysis.services import runs_follow_status
from submissions.models import Submission, SubmissionStatus
from submissions.services import verify_stored_bundle


def rederive(submission: Submission, *, storage=None) -> int:
    """Read `submission`'s stored bundle again and lower each of its client runs to analysis.compliance's verdict
    (every cell of the PTS plan in every round, steady state or the round limit), adding the reasons. It only lowers:
    the gates store_submission ran with the database are not run again, so a verdict already lowered stays lowered.
    A held or rejected submission's runs keep their status reason first. Returns the number of runs lowered."""

    with verify_stored_bundle(submission=submission, storage=storage) as bundle:
        record = read_bundle(bundle)
    by_test = {tr.test: tr for tr in record.test_runs}
    lowered = 0
    with transaction.atomic():
        runs = list(TestRun.objects.select_for_update().filter(submission=submission, source="client"))
        for run in runs:
            test_record = by_test.get(run.test)
            if test_record is None or not run.derived_compliant:
                continue
            reasons = record.compliance_reasons + test_record.compliance_reasons
            if record.compliant and not test_record.compliance_reasons:
                continue
            run.derived_compliant = run.compliant = False
            run.compliance_reasons = run.compliance_reasons + [r for r in reasons if r not in run.compliance_reasons]
            lowered += 1
        TestRun.objects.bulk_update(runs, ["compliant", "derived_compliant", "compliance_reasons"])
        if submission.status in (SubmissionStatus.HELD, SubmissionStatus.REJECTED):
            runs_follow_status(submission=submission, status=submission.status, reasons=_status_reasons(submission))
    return lowered


def _status_reasons(submission: Submission) -> list[str]:
    report = submission.report or {}
    return [str(r) for r in report.get("reasons") or []] or ([str(report["detail"])] if report.get("detail") else [])


class Command(BaseCommand):
    help = (
        "Re-read each stored client bundle with test runs and lower its runs' compliance to what the server derives "
        "now (analysis.compliance: the whole PTS plan ran, to steady state or the round limit), with the reasons. "
        "For runs stored before that rule; it never raises a verdict.\n\nExample: manage.py rederive_compliance"
    )

    def add_arguments(self, parser):
        parser.add_argument("--submission", action="append", default=[], help="Only this submission (repeatable).")

    def handle(self, *args, **options):
        submissions = Submission.objects.filter(test_runs__source="client", test_runs__derived_compliant=True)
        if options["submission"]:
            submissions = submissions.filter(pk__in=options["submission"])
        lowered = failed = 0
        for submission in submissions.distinct().order_by("created"):
            try:
                lowered += rederive(submission)
            except Exception as exc:  # noqa: BLE001 - one unreadable bundle does not stop the others
                failed += 1
                self.stderr.write(f"submission {submission.pk}: {type(exc).__name__}: {exc}"[:300])
        self.stdout.write(f"{lowered} runs are no longer PTS-compliant; {failed} bundles could not be read")
