"""manage.py seed_launch_sample: import the launch sample (importers/data/launch/) into a database with no results."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from importers.common import ImportError_
from importers.launch import ARCHIVE, seed_launch_sample


class Command(BaseCommand):
    help = (
        "Import the launch sample, SSSPT's published runs of two drives (an IOPS, a throughput and a latency run "
        "each; MIT, see importers/data/launch/README.md), when no submission is published yet; a database with "
        "published submissions is left alone. Prints one line saying what it did. `make run` calls it after migrate."
        "\n\nExample: manage.py seed_launch_sample"
    )

    def add_arguments(self, parser):
        parser.add_argument("--archive", type=Path, default=ARCHIVE, help="Another archive of the same layout.")

    def handle(self, *args, **options):
        try:
            outcome = seed_launch_sample(archive=options["archive"])
        except ImportError_ as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(outcome.message)
