"""Drive page summaries, rebuilt after every change of a drive's public data instead of on every request, and never
inside the transaction that makes the change.

The write path records the change (analysis.drive_changes: the drive's `data_version` goes up in the publish,
withdraw, hide, reject or re-derive transaction); once it commits, a task (analysis.tasks.rebuild_page_summary)
calls `rebuild_summary`, which reads every public run of the drive once, from the committed data, and stores what
the pages need from them (counts, the representative runs, the newest submissions, flag counts, steady counts, the
spread factors, the breakdown charts, the compare figures and the default page's chart sections) in one
DrivePageSummary row, so a drive page, the drive list and compare read a row or two whatever the number of
submissions. A drive left with no public run loses its row.

Pages read the newest complete row (the previous one until the rebuild writes; browse.queries says how
fresh it is when it lags more than a minute behind the drive's newest change). The rebuild is a full one of that
one drive: the representative runs are the ones closest to the drive's medians and the breakdowns hold every
unit's point, so one submission can change every figure; it is idempotent and a killed one leaves the previous
row whole.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, fields
from operator import itemgetter

from django.db import transaction
from django.db.models import Case, IntegerField, Max, When
from django.urls import reverse
from django.utils import timezone

from analysis.filters import COMPLIANCE_RUNS
from analysis.models import DriveModel, DriveModelAggregate, DrivePageSummary
from analysis.selectors import is_extension, pts_q, public_flags, public_test_runs
from browse import compare, drive_page, queries
from browse.charts_breakdowns import breakdowns
from browse.factors import FACTOR_METRICS
from nvmedb.collector import cycle_collector_paused
from nvmedb.durability import snapshot_transaction
from reports.chart_kit import Chart

CURRENT, WRITTEN, DELETED, NEWER, GONE = "current", "written", "deleted", "newer", "gone"


def rebuild_summary(drive_model_id: int) -> str:
    """Rebuild the drive's summary from its committed public runs unless the stored one already describes the
    drive's data. Returns what it did: "current" (nothing to do), "written", "deleted" (no public run left),
    "newer" (a rebuild of a later change wrote first) or "gone" (no such drive).

    Safe to run twice or at once: the runs are read in one snapshot (REPEATABLE READ on PostgreSQL; a SQLite
    transaction is one), then the row is written in one short transaction under the drive's row lock, and only over
    a summary of an older data version. A worker killed before that write leaves the previous summary whole."""
    drive = DriveModel.objects.filter(pk=drive_model_id).first()
    if drive is None:
        return GONE
    if is_current(drive):
        return CURRENT
    # every query below sees the same committed state, and the version it is of (tens of thousands of short-lived
    # rows: nvmedb.collector)
    with snapshot_transaction(), cycle_collector_paused():
        drive = DriveModel.objects.get(pk=drive_model_id)
        fields = summary_fields(drive)
    return _write(drive, fields)


def is_current(drive: DriveModel) -> bool:
    return DrivePageSummary.objects.filter(
        drive_model=drive, format=queries.SUMMARY_FORMAT, slug=drive.slug, data_version__gte=drive.data_version
    ).exists()


def _write(drive: DriveModel, fields: dict | None) -> str:
    with transaction.atomic():
        list(DriveModel.objects.select_for_update(no_key=True).filter(pk=drive.pk).values_list("pk"))
        stored = DrivePageSummary.objects.filter(drive_model=drive).values_list("data_version", "format").first()
        if stored is not None and stored[1] == queries.SUMMARY_FORMAT and stored[0] > drive.data_version:
            return NEWER
        if fields is None:
            DrivePageSummary.objects.filter(drive_model=drive).delete()
            return DELETED
        if not _overwrite(drive, fields):
            DrivePageSummary.objects.update_or_create(drive_model=drive, defaults=fields)
        return WRITTEN


def _overwrite(drive: DriveModel, fields: dict) -> int:
    """The drive's stored summary overwritten as update_or_create saves it (every column given and `updated`) in
    one UPDATE, without first reading the ~200 kB row back into a model; 0 when the drive has none yet."""
    return DrivePageSummary.objects.filter(drive_model=drive).update(**fields, updated=timezone.now())


def summary_version(drive: DriveModel) -> str:
    """The same token in every process for the same data, format and slug: page caches are keyed by it."""
    named = f"{drive.pk}:{drive.data_version}:{queries.SUMMARY_FORMAT}:{drive.slug}"
    return hashlib.sha256(named.encode()).hexdigest()[:32]


def summary_fields(drive_model: DriveModel) -> dict | None:
    """The summary row's columns from the drive's public runs, or None when it has none left: every public run read
    once (the spread factors' and the list filters' PCIe generations from the same rows), the breakdowns computed
    once for the page's sections and their own column. The same row as `reference_summary_fields`, which reads each
    part as the pages do (the tests and scripts/compare_summaries.py hold them equal)."""
    runs_of, flags_of = public_test_runs(), public_flags()
    pk = drive_model.pk
    aggregates = list(DriveModelAggregate.objects.filter(drive_model=drive_model).order_by("metric", "factor", "level"))
    runs = queries.public_runs_of([pk], runs_of, extra_metrics=EXTRA_FACTOR_METRICS, dated=False,  # no date stored
                                  met=RUN_KIND_COLUMNS)  # fmt: skip
    computed, _ = queries.compute_summaries([pk], {pk: aggregates}, runs_of, flags_of, runs=runs)
    summary = computed[pk]
    if not (summary.n_runs or summary.n_surface_runs):  # a drive with only a surface run keeps its page
        return None
    data = queries.drive_data_of(drive=drive_model, aggregates=aggregates, summary=summary, all_runs=runs[pk],
                                 runs_of=runs_of, flagged=False)  # fmt: skip
    data.breakdowns = breakdowns(data)
    pts = [run for run in runs[pk] if not is_extension(run["test"])]  # the list's run filters: PTS runs only
    return _fields(
        drive_model, aggregates, data,
        generations=sorted({run["pcie_link__generation"] for run in pts} - {None}),
        kinds={kind: max((run[column] for run in pts), default=None) for kind, column in RUN_KIND_OF.items()},
        spread=drive_page.compute_spread(data, sorted(pts, key=itemgetter("id"))),  # factor_runs' rows, by id
        compare_figures=compare.charted_compare_figures(data),  # the charts' measurements, not read again
        breakdown_charts=[_chart_json(chart) for chart in data.breakdowns],
    )  # fmt: skip


# the spread factors' metrics the light run rows lack (they carry CHARTED_METRICS)
EXTRA_FACTOR_METRICS = tuple(key for key in FACTOR_METRICS if key not in queries.CHARTED_METRICS)
# the list's compliance filter read with the runs (each run's 0/1 per kind, their maximum over the PTS runs: what
# `_run_kinds` asks the database for in a query of its own)
RUN_KIND_OF = {kind: f"meets_{kind}" for kind in COMPLIANCE_RUNS}
RUN_KIND_COLUMNS = {RUN_KIND_OF[kind]: condition for kind, condition in COMPLIANCE_RUNS.items()}


def reference_summary_fields(drive_model: DriveModel) -> dict | None:
    """The summary row as first built, each part read as a page computing it would (its runs, its spread
    factors, its breakdowns, each on their own): what `summary_fields` must equal, field for field."""
    runs_of, flags_of = public_test_runs(), public_flags()
    pk = drive_model.pk
    aggregates = list(DriveModelAggregate.objects.filter(drive_model=drive_model).order_by("metric", "factor", "level"))
    computed, runs = queries.compute_summaries([pk], {pk: aggregates}, runs_of, flags_of)
    summary = computed[pk]
    if not (summary.n_runs or summary.n_surface_runs):
        return None
    data = queries.drive_data_of(
        drive=drive_model, aggregates=aggregates, summary=summary, all_runs=runs[pk], runs_of=runs_of
    )
    selected = runs_of.filter(pts_q(), drive_model=drive_model)
    return _fields(
        drive_model, aggregates, data,
        generations=sorted({g for g in selected.values_list("pcie_link__generation", flat=True) if g is not None}),
        kinds=_run_kinds(runs_of, drive_model),
        spread=drive_page.compute_spread(data),
        compare_figures=compare.computed_compare_figures({pk: summary.representative})[pk],
        breakdown_charts=[asdict(chart) for chart in breakdowns(data)],
    )  # fmt: skip


def _run_kinds(runs_of, drive_model: DriveModel) -> dict[str, int]:
    """Whether the drive has a PTS run of each kind of the list's compliance filter (filters.COMPLIANCE_RUNS)."""
    return runs_of.filter(pts_q(), drive_model=drive_model).aggregate(
        **{kind: Max(Case(When(condition, then=1), default=0, output_field=IntegerField()))
           for kind, condition in COMPLIANCE_RUNS.items()}
    )  # fmt: skip


def _fields(
    drive_model: DriveModel, aggregates, data, *, generations, kinds, spread, compare_figures, breakdown_charts
) -> dict:
    summary = data.summary
    return {
        "format": queries.SUMMARY_FORMAT,
        "version": summary_version(drive_model),
        "data_version": drive_model.data_version,
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
        "compare": compare_figures,
        "page": {
            "sections": drive_page.build_sections(data, csv_link=lambda key: chart_csv_url(drive_model, key)),
            "spread": drive_page.spread_to_json(spread),
            "level_table": drive_page.level_table_html(aggregates),
        },
        "breakdowns": breakdown_charts,
    }


def _chart_json(chart: Chart) -> dict:
    """A chart's fields as asdict gives them, without its deep copy (the chart is built for this row only)."""
    return {f.name: getattr(chart, f.name) for f in fields(chart)}


def chart_csv_url(drive_model: DriveModel, key: str) -> str:
    """A default drive page chart's CSV (the views add ?submission= for a chosen submission's charts)."""
    return reverse("drive-chart-csv", args=(drive_model.slug, key))


def listed(values) -> str:
    """Each value between commas (",3,4,"), so a filter is one substring test (",4,") on any database."""
    values = [str(v) for v in values]
    return f",{','.join(values)}," if values else ""
