"""Drive page summaries, written once when a drive's public data changes instead of on every request.

`summary_refresh` runs inside analysis.services.refresh_aggregates: under the drive model's row lock, in the
transaction that publishes, withdraws, hides, rejects or re-derives a submission, right after the aggregates, and
over the very runs the aggregates count. It reads every public run of the drive once and stores what the pages need
from them (counts, the representative runs, the newest submissions, flag counts, steady counts, the spread factors,
the breakdown charts, the compare figures and the default page's chart sections) in one DrivePageSummary row, so a
drive page, the drive list and compare read a row or two whatever the number of submissions. A drive left with no
public run loses its row. Pages read rows through analysis.browse.queries, which computes per request from any drive
whose row is missing or of another format (SUMMARY_FORMAT).
"""

from __future__ import annotations

import uuid
from dataclasses import asdict

from django.db.models import Case, IntegerField, Max, QuerySet, When
from django.urls import reverse

from analysis.browse import charts, compare, drive_page, queries
from analysis.filters import COMPLIANCE_RUNS
from analysis.models import DriveModel, DriveModelAggregate, DrivePageSummary
from analysis.selectors import pts_q


def summary_refresh(*, drive_model: DriveModel, runs_of: QuerySet, flags_of: QuerySet) -> DrivePageSummary | None:
    """Rewrite `drive_model`'s summary from `runs_of` (the runs counted as public: the caller's selection, with a
    submission being published in this transaction) and `flags_of` (their flags). The caller holds the drive
    model's row lock and has just rewritten its aggregates."""
    pk = drive_model.pk
    aggregates = list(DriveModelAggregate.objects.filter(drive_model=drive_model).order_by("metric", "factor", "level"))
    computed, runs = queries.compute_summaries([pk], {pk: aggregates}, runs_of, flags_of)
    summary = computed[pk]
    if not (summary.n_runs or summary.n_surface_runs):  # a drive with only a surface run keeps its page
        DrivePageSummary.objects.filter(drive_model=drive_model).delete()
        return None
    data = queries.drive_data_of(
        drive=drive_model, aggregates=aggregates, summary=summary, all_runs=runs[pk], runs_of=runs_of
    )
    selected = runs_of.filter(pts_q(), drive_model=drive_model)  # the list's run filters: PTS runs only
    kinds = selected.aggregate(
        **{kind: Max(Case(When(condition, then=1), default=0, output_field=IntegerField()))
           for kind, condition in COMPLIANCE_RUNS.items()}
    )  # fmt: skip
    generations = sorted({g for g in selected.values_list("pcie_link__generation", flat=True) if g is not None})
    row, _ = DrivePageSummary.objects.update_or_create(
        drive_model=drive_model,
        defaults={
            "format": queries.SUMMARY_FORMAT,
            "version": uuid.uuid4().hex,
            "slug": drive_model.slug,
            "n_runs": summary.n_runs,
            "n_submissions": summary.n_submissions,
            "n_units": summary.n_units,
            "pcie_generations": listed(generations),
            "run_kinds": listed(kind for kind, met in kinds.items() if met),
            "summary": {
                "representative": summary.representative,
                "newest": [
                    {"submission_id": str(run["submission_id"]), "firmware__revision": run["firmware__revision"]}
                    for run in summary.newest
                ],
                "flag_counts": summary.flag_counts,
                "steady_runs": summary.steady_runs,
                "list_cells": queries.list_cells(aggregates),
                "tests": list(summary.tests),
                "n_surface_runs": summary.n_surface_runs,
                "n_compliant_runs": summary.n_compliant_runs,
            },
            "compare": compare.computed_compare_figures({pk: summary.representative})[pk],
            "page": {
                "sections": drive_page.build_sections(data, csv_link=lambda key: chart_csv_url(drive_model, key)),
                "spread": drive_page.spread_to_json(drive_page.compute_spread(data)),
                "level_table": drive_page.level_table_html(aggregates),
            },
            "breakdowns": [asdict(chart) for chart in charts.breakdowns(data)],
        },
    )
    return row


def chart_csv_url(drive_model: DriveModel, key: str) -> str:
    """A default drive page chart's CSV (the views add ?submission= for a chosen submission's charts)."""
    return reverse("drive-chart-csv", args=(drive_model.slug, key))


def listed(values) -> str:
    """Each value between commas (",3,4,"), so a filter is one substring test (",4,") on any database."""
    values = [str(v) for v in values]
    return f",{','.join(values)}," if values else ""
