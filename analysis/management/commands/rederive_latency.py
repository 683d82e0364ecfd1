"""manage.py rederive_latency: rewrite every latency column from the stored raw fio outputs (see analysis.latency)."""

from django.core.files.storage import default_storage
from django.core.management.base import BaseCommand

from analysis.latency import rederive_latency
from analysis.models import DriveModel, Measurement, SteadyStateWindow, TestRun
from analysis.services import refresh_aggregates
from datasets import export_rows
from submissions.models import Submission


class Command(BaseCommand):
    help = (
        "Re-read each measurement's own fio output from its stored bundle and write every latency column again "
        "(total latency under lat_*, completion and submission latency under clat_* and slat_*), re-judge the latency "
        "test's steady state and headlines, then refresh the aggregates. The migration 0003 does the same once; run "
        "this again after restoring bundles.\n\nExample: manage.py rederive_latency"
    )

    def handle(self, *args, **options):
        models = {
            "Submission": Submission,
            "TestRun": TestRun,
            "Measurement": Measurement,
            "SteadyStateWindow": SteadyStateWindow,
        }
        counts = rederive_latency(models=models, storage=default_storage)
        rows = sum(refresh_aggregates(drive_model=model) for model in DriveModel.objects.all())
        export_rows.rebuild_all()  # the measurements CSV's rows carry the latency columns
        self.stdout.write(
            f"{counts['reread']} measurements re-read from their raw files, {counts['unreadable']} without a readable "
            f"raw file (kept as completion latency, with the reason), {counts['rejudged']} latency tests re-judged; "
            f"{rows} aggregate rows written"
        )
