"""What the browse pages show of a drive model, computed once when its public data changes (never per request)."""

from django.db import models

from analysis.models.hardware import DriveModel
from nvmedb.json_field import JSONField


class DrivePageSummary(models.Model):
    """One row per drive model with public runs: its counts, the runs its page charts, the figures read from every
    public run (flags, steady counts, spread factors, breakdowns) and the default page's chart sections.

    Rebuilt by a task after the commit of every change to the drive's public data (analysis.drive_changes,
    browse.summaries), from the committed runs: pages read the newest complete one, and `data_version` says
    which version of the drive's data it describes. `format` says which code built the JSON columns; a page finding
    another format computes per request until `manage.py refresh_aggregates` rebuilds it."""

    drive_model = models.OneToOneField(
        DriveModel, on_delete=models.CASCADE, primary_key=True, related_name="page_summary"
    )
    format = models.PositiveSmallIntegerField()
    version = models.CharField(
        max_length=32, help_text="Names the drive's data, format and slug it was built from: keys what derives from it."
    )
    data_version = models.PositiveBigIntegerField(default=0, help_text="The drive's data_version it describes.")
    slug = models.CharField(max_length=220, help_text="The drive's slug when written: the sections' links name it.")
    n_runs = models.PositiveIntegerField()
    n_submissions = models.PositiveIntegerField()
    n_units = models.PositiveIntegerField()
    # what the drive list's run filters test, as ",3,4," and ",pts,imported,": a substring test on every database
    pcie_generations = models.CharField(max_length=32, blank=True)
    run_kinds = models.CharField(max_length=64, blank=True)
    # Separate columns, each stored (and TOASTed) apart, so the list and compare never read the page's sections.
    summary = JSONField(help_text="Representative runs, newest submissions, flag counts, steady counts.")
    compare = JSONField(help_text="The compare page's figures of the representative runs.")
    page = JSONField(help_text="The drive page's chart sections, spread factors and level table.")
    breakdowns = JSONField(help_text="The breakdown charts with every unit's point, for CSVs and other runs.")
    updated = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"summary of drive model {self.drive_model_id} ({self.n_runs} runs)"
