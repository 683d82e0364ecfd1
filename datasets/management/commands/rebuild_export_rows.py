"""manage.py rebuild_export_rows: write the measurements export's rows (datasets.export_rows) of every
submission, or only of those that have none yet."""

from django.core.management.base import BaseCommand

from datasets import export_rows


class Command(BaseCommand):
    help = (
        "Write the rows the measurements CSV export reads (one per measurement of a PTS run, spreadsheet-safe, "
        "replaced per submission in one transaction). New and changed submissions get theirs when they are stored "
        "or change status; run this once after the deployment that adds the table, and --missing at every start "
        "(it visits only submissions with a measurement that has no row).\n\n"
        "Example: manage.py rebuild_export_rows --missing"
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--missing", action="store_true", help="only submissions with a measurement that has no export row"
        )

    def handle(self, *args, **options):
        visited, rows = export_rows.rebuild_all(export_rows.missing_submissions() if options["missing"] else None)
        self.stdout.write(f"{visited} submissions rebuilt, {rows} export rows written")
