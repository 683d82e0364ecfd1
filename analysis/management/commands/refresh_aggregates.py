"""manage.py refresh_aggregates: recompute every drive model's headline aggregates from published runs."""

from django.core.management.base import BaseCommand

from analysis.models import DriveModel
from analysis.services import refresh_aggregates


class Command(BaseCommand):
    help = (
        "Recompute the median, IQR, run and unit counts of every headline metric per drive model and factor level, "
        "from published, unhidden submissions only, never trial runs (file target or quick profile).\n\n"
        "Example: manage.py refresh_aggregates"
    )

    def handle(self, *args, **options):
        rows = sum(refresh_aggregates(drive_model=model) for model in DriveModel.objects.all())
        self.stdout.write(f"{rows} aggregate rows written")
