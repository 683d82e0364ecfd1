"""manage.py refresh_factor_effects: refit the factor model of every drive model (or the ones named)."""

from django.core.management.base import BaseCommand
from django.db.models import F, Q

from analysis.factor_effects import refresh_factor_effects
from analysis.models import DriveModel, FactorFitSummary
from analysis.selectors import public_pts_runs
from analysis.tasks import queue_factor_refit


class Command(BaseCommand):
    help = (
        "Refit the factor model (what explains a drive's spread: each recorded factor's effect on each headline "
        "metric, with its interval) of every drive model from its public runs, and replace its stored effects. "
        "Publishing, withdrawing or hiding a submission refits its drive models by a task; run this after a "
        "deployment that changes the model (all drives), or with --missing at every start: only drives with public "
        "PTS runs and no fit of their current data (none yet, or one a lost refit left behind), cheap once they "
        "have one. --queue leaves the fits to the worker.\n\n"
        "Example: manage.py refresh_factor_effects --missing --queue"
    )

    def add_arguments(self, parser):
        parser.add_argument("--drive", action="append", default=[], help="a drive model's slug (repeatable)")
        parser.add_argument(
            "--missing", action="store_true", help="only drives with public PTS runs and no fit of their current data"
        )
        parser.add_argument("--queue", action="store_true", help="queue a task per drive instead of fitting here")

    def handle(self, *args, **options):
        models = DriveModel.objects.order_by("pk")
        if options["drive"]:
            models = models.filter(slug__in=options["drive"])
        if options["missing"]:
            fitted = FactorFitSummary.objects.values("drive_model_id")
            # no fit yet, none of known data (a migration forgot what it stored), or one of older data than the
            # drive's (a refit lost: the broker away, a worker killed, a database crash before its commit was flushed)
            unfitted = Q(factors_version__isnull=True) | Q(factors_version__lt=F("data_version")) | ~Q(pk__in=fitted)
            models = models.filter(unfitted, pk__in=public_pts_runs().values("drive_model_id"))
        if options["queue"]:
            ids = list(models.values_list("pk", flat=True))
            for pk in ids:
                queue_factor_refit(drive_model_id=pk)
            self.stdout.write(f"{len(ids)} drive model refits queued")
            return
        rows = visited = 0
        for model in models:
            rows += refresh_factor_effects(model)
            visited += 1
        self.stdout.write(f"{visited} drive models refitted, {rows} factor effect rows written")
