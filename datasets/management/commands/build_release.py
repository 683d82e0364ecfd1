"""manage.py build_release: build the next immutable data set release now."""

from django.core.management.base import BaseCommand

from datasets import releases


class Command(BaseCommand):
    help = (
        "Build the next numbered data set release (tables as CSV and Parquet, datapackage.json, SHA256SUMS, "
        "CITATION.cff, CHANGELOG.md) in NVMEDB_RELEASES_DIR. Nothing is published when the public data has not "
        "changed since the last release, unless --force.\n\nExample: manage.py build_release"
    )

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="Build even when nothing changed.")

    def handle(self, *args, force: bool = False, **options):
        result = releases.build_release(force=force)
        self.stdout.write(result.message)
