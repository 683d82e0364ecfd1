"""manage.py refresh_factor_effects: refit the factor model of every drive model (or the ones named) in this
process."""

from django.core.management.base import BaseCommand

from analysis.factor_effects import refresh_factor_effects
from analysis.models import DriveModel


class Command(BaseCommand):
    help = (
        "Refit the factor model (what explains a drive's spread: each recorded factor's effect on each headline "
        "metric, with its interval) of every drive model from its public runs, and replace its stored effects. "
        "Publishing, withdrawing or hiding a submission refits its drive models by a task; run this after a "
        "deployment that changes the model, or to refit without a worker.\n\n"
        "Example: manage.py refresh_factor_effects --drive samsung-pm9a3-1-92tb"
    )

    def add_arguments(self, parser):
        parser.add_argument("--drive", action="append", default=[], help="a drive model's slug (repeatable)")

    def handle(self, *args, **options):
        models = DriveModel.objects.order_by("pk")
        if options["drive"]:
            models = models.filter(slug__in=options["drive"])
        rows = visited = 0
        for model in models:
            rows += refresh_factor_effects(model)
            visited += 1
        self.stdout.write(f"{visited} drive models refitted, {rows} factor effect rows written")
