from django.core.management.base import BaseCommand

from submissions import services
from submissions.models import Submission


class Command(BaseCommand):
    help = (
        "Record the fio-output digests of published submissions that have none (validated before digests existed), "
        "so their content cannot be published again under another account. Safe to run again. "
        "Example: python manage.py fingerprint_submissions"
    )

    def handle(self, *args, **options) -> None:
        from nvmedb_client.bundle import BundleError

        pending = (
            Submission.objects.filter(published_at__isnull=False, fio_fingerprints__isnull=True)
            .exclude(storage_name="")
            .order_by("published_at")
        )
        done = failed = 0
        for submission in pending.iterator():
            try:
                count = services.submission_fingerprint_stored(submission=submission)
            except (BundleError, OSError) as exc:
                failed += 1
                self.stderr.write(f"{submission.pk}: {exc}")
                continue
            done += 1
            self.stdout.write(f"{submission.pk}: {count} digests")
        self.stdout.write(f"Fingerprinted {done} submission(s); {failed} could not be read.")
