"""manage.py import_tree: import every SSSPT or py-sss-pts run under a directory tree (the launch dataset)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from importers.common import ImportError_
from importers.tree import TreeSummary, import_tree


class Command(BaseCommand):
    help = (
        "Import every run under PATH: each folder of SSSPT outputs (wdpc_*/wipc_* files) and each py-sss-pts result "
        "tree becomes one unsigned, labelled submission. Idempotent: a run whose files were imported before is "
        "skipped, so running it again imports nothing new. Ends with a summary: imported (published, held, rejected) "
        "and skipped, each with its reason.\n\n"
        "Example: manage.py import_tree ../SSSPT/analysis/data/platforms "
        "--source-base https://github.com/ljishen/SSSPT/tree/0e9fe2e949a4e6024167e56631939f6614c7e805/analysis/data/platforms"
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="The root of the tree of runs.")
        parser.add_argument("--license", default="", help="License of the results (default: the tool's).")
        parser.add_argument(
            "--source-base", default="", help="URL of the tree's root; each run's reference is this plus its path."
        )
        parser.add_argument("--uploader", default="", help="Username to credit (default: the nvmedb-import user).")
        parser.add_argument("--json", action="store_true", help="Print the summary as JSON instead of tables.")

    def handle(self, *args, **options):
        from django.contrib.auth import get_user_model

        uploader = None
        if options["uploader"]:
            try:
                uploader = get_user_model().objects.get(username=options["uploader"])
            except get_user_model().DoesNotExist as exc:
                raise CommandError(f"no user named {options['uploader']!r}") from exc
        console = Console(file=_Stream(self.stdout), highlight=False, soft_wrap=True)
        progress = Progress(
            TextColumn("[bold]importing"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=Console(file=_Stream(self.stderr), highlight=False),
            disable=options["json"],
        )
        task = progress.add_task("", total=None)
        started = time.monotonic()
        try:
            with progress:
                summary = import_tree(
                    options["path"],
                    uploader=uploader,
                    license=options["license"],
                    source_base=options["source_base"],
                    on_found=lambda n: progress.update(task, total=n),
                    on_run=lambda path: progress.update(task, advance=1, description=path),
                )
        except ImportError_ as exc:
            raise CommandError(f"cannot import {options['path']}: {exc}") from exc
        elapsed = time.monotonic() - started
        if options["json"]:
            self.stdout.write(json.dumps({**summary.to_dict(), "seconds": round(elapsed, 1)}))
            return
        _print_summary(console, summary, elapsed)


def _print_summary(console: Console, summary: TreeSummary, elapsed: float) -> None:
    totals = Table(title=f"Import summary ({elapsed:.1f} s)", show_header=True)
    for column in ("imported", "published", "held", "rejected", "skipped"):
        totals.add_column(column, justify="right")
    counts = summary.to_dict()
    totals.add_row(*(str(counts[column]) for column in ("imported", "published", "held", "rejected", "skipped")))
    console.print(totals)
    # one line per run rather than a table: reasons are long, and a line is easy to grep
    for run in summary.runs:
        test = f" [{run.test}]" if run.test else ""
        reason = f": {run.reason}" if run.reason else ""
        console.print(f"{run.status:<9} {run.path}{test}{reason}", markup=False)


class _Stream:
    """A management command's output wrapper as a plain stream: rich writes pieces, not lines."""

    def __init__(self, wrapper):
        self.wrapper = wrapper

    def write(self, text: str) -> int:
        self.wrapper.write(text, ending="")
        return len(text)

    def flush(self) -> None:
        self.wrapper.flush()

    def isatty(self) -> bool:
        return self.wrapper.isatty()
