"""manage.py import_results: ingest a result directory written by another open-source PTS tool."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from importers.common import ImportError_, ImportMetadata, store_import
from importers.tree import READERS


class Command(BaseCommand):
    help = (
        "Import a result directory written by SSSPT or py-sss-pts as an unsigned, labelled submission. "
        "Steady state is re-derived with the PTS rule; where the source tool judged differently, the difference is "
        "recorded. Importing the same files again replaces that submission's rows.\n\n"
        "Example: manage.py import_results --format ssspt ../SSSPT/analysis/data/platforms/hp/iops/1 --edition client"
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="The result directory.")
        parser.add_argument("--format", required=True, choices=sorted(READERS), help="Which tool wrote it.")
        parser.add_argument("--vendor", default="", help="Drive vendor, when the directory does not say.")
        parser.add_argument("--model", default="", help="Drive model number.")
        parser.add_argument("--serial", default="", help="Serial number (stored only as a keyed hash).")
        parser.add_argument("--firmware", default="", help="Firmware revision.")
        parser.add_argument("--capacity-bytes", type=int, default=None, help="Raw capacity in bytes.")
        parser.add_argument("--interface", default="", choices=["", "nvme", "sata", "sas"])
        parser.add_argument("--edition", default="", choices=["", "enterprise", "client"])
        parser.add_argument("--license", default="", help="License of the results (default: the tool's).")
        parser.add_argument("--source-reference", default="", help="Where the results were published (URL).")
        parser.add_argument("--kernel", default="", help="Kernel release of the host.")
        parser.add_argument("--uploader", default="", help="Username to credit (default: the nvmedb-import user).")
        parser.add_argument("--json", action="store_true", help="Print the outcome as JSON.")

    def handle(self, *args, **options):
        from django.contrib.auth import get_user_model

        metadata = ImportMetadata(
            vendor=options["vendor"],
            model=options["model"],
            serial=options["serial"],
            firmware=options["firmware"],
            capacity_bytes=options["capacity_bytes"],
            interface=options["interface"],
            edition=options["edition"],
            license=options["license"],
            source_reference=options["source_reference"],
            kernel=options["kernel"],
        )
        uploader = None
        if options["uploader"]:
            try:
                uploader = get_user_model().objects.get(username=options["uploader"])
            except get_user_model().DoesNotExist as exc:
                raise CommandError(f"no user named {options['uploader']!r}") from exc
        path: Path = options["path"].resolve()
        try:
            record, files = READERS[options["format"]](path, metadata)
            submission, result = store_import(record=record, root=path, files=files, uploader=uploader)
        except (ImportError_, OSError) as exc:
            raise CommandError(f"cannot import {path}: {exc}") from exc
        if options["json"]:
            self.stdout.write(
                json.dumps({"submission": str(submission.id), "status": result.status, "reasons": result.reasons})
            )
            return
        self.stdout.write(f"submission {submission.id}: {result.status}")
        for reason in result.reasons:
            self.stdout.write(f"  - {reason}")
