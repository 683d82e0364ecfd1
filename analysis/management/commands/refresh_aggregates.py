"""manage.py refresh_aggregates: recompute every drive model's headline aggregates and page summary from published
runs."""

from django.core.management.base import BaseCommand
from django.db.models import F

from analysis.models import DriveModel
from analysis.services import refresh_aggregates
from browse.queries import SUMMARY_FORMAT
from browse.summaries import rebuild_summary


class Command(BaseCommand):
    help = (
        "Recompute the median and IQR over physical units and the run, unit and contributor counts of every headline "
        "metric per drive model and factor level, and each drive's page summary (what its page, the drive list and "
        "compare show), from published, unhidden submissions only, never trial runs (file target or quick "
        "profile); the summaries are rebuilt here, not left to the task queue. Run it once after a deployment that "
        "changes the summaries' format; --missing visits only drive models whose summary is missing, of another "
        "format or behind the drive's data (a rebuild lost while the broker was away; cheap enough to run at every "
        "start).\n\n"
        "Example: manage.py refresh_aggregates --missing"
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--missing",
            action="store_true",
            help="only drive models with runs whose page summary is missing, of another format or behind their data",
        )

    def handle(self, *args, **options):
        models = DriveModel.objects.order_by("pk")
        if options["missing"]:
            current = DriveModel.objects.filter(
                page_summary__format=SUMMARY_FORMAT, page_summary__data_version__gte=F("data_version")
            )
            models = models.filter(test_runs__isnull=False).exclude(pk__in=current).distinct()
        rows = visited = 0
        for model in models:
            rows += refresh_aggregates(drive_model=model)
            rebuild_summary(model.pk)
            visited += 1
        self.stdout.write(f"{visited} drive models refreshed, {rows} aggregate rows written")
