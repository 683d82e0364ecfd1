from django.core.management.base import BaseCommand
from django.db.models import Q

from nvmedb_client.bundle import BundleError
from submissions import pipeline
from submissions.models import Submission, SubmissionStatus


class Command(BaseCommand):
    help = (
        "Record the fio-output digests and near-duplicate signatures of submissions that claim their content (published "
        "at some point, held or withdrawn) and have none (validated before digests or signatures existed), so their "
        "content cannot be published again under another account. Safe to run again. "
        "Example: python manage.py fingerprint_submissions"
    )

    def handle(self, *args, **options) -> None:
        pending = (
            Submission.objects.filter(
                Q(published_at__isnull=False) | Q(status__in=[SubmissionStatus.HELD, SubmissionStatus.WITHDRAWN])
            )
            .filter(Q(fio_fingerprints__isnull=True) | Q(measurement_signatures__isnull=True))
            .exclude(storage_name="")
            .distinct()
            .order_by("created")
        )
        done = failed = 0
        for submission in pending.iterator():
            try:
                count = pipeline.submission_fingerprint_stored(submission=submission)
            except (BundleError, OSError) as exc:
                failed += 1
                self.stderr.write(f"{submission.pk}: {exc}")
                continue
            done += 1
            self.stdout.write(f"{submission.pk}: {count} digests")
        self.stdout.write(f"Fingerprinted {done} submission(s); {failed} could not be read.")
