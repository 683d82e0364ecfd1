"""The home page's totals, the drive list's rows and the compare page's drive picker, read from the drives' stored
summaries (one query for every drive) whatever the number of submissions."""

from __future__ import annotations

from collections import defaultdict

from django.core.cache import cache
from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet, Subquery
from django.utils.safestring import mark_safe

from analysis.headline import HEADLINES
from analysis.models import (
    DriveModel,
    DriveModelAggregate,
    PhysicalUnit,
)
from analysis.selectors import (
    public_measurements,
    public_submissions,
    public_test_runs,
)
from browse.drive_summary import cached_summaries, stored_summaries
from reports import units

HOME_COUNTS_KEY = "browse:home-counts:v1"
# the home page's totals may lag a minute behind; counting a million rows on every hit does not
HOME_COUNTS_SECONDS = 60


def public_drive_models() -> QuerySet[DriveModel]:
    """Drive models with at least one public run (a model seen only in held or rejected bundles stays unlisted): those
    with a page summary, which refresh_aggregates writes exactly while a drive has public runs (so pages never scan
    every public run to know it)."""
    return DriveModel.objects.filter(page_summary__isnull=False).select_related("vendor")


PICKER_LIMIT = 50


def compare_picker(form) -> dict:
    """The compare page's drive picker: public drives matching the search (by name, vendor or slug), the ones
    already picked first and ticked."""
    picked = (form.cleaned_data.get("drives") or []) if form.is_valid() else []
    query = (form.cleaned_data.get("q") or "").strip() if form.is_valid() else ""
    drives = public_drive_models().order_by("name")
    if query:
        drives = drives.filter(Q(name__icontains=query) | Q(vendor__name__icontains=query) | Q(slug__icontains=query))
    found = list(drives[:PICKER_LIMIT])
    ticked = [d for d in public_drive_models().filter(slug__in=picked)]
    choices = ticked + [d for d in found if d.slug not in picked]
    message = (
        f"You picked {len(picked)} drive{'s' if len(picked) != 1 else ''}: compare needs two to four. "
        "Tick the drives to compare below."
    )
    return {"picker": choices, "picked": picked, "picker_query": query, "picker_message": message,
            "picker_truncated": len(found) >= PICKER_LIMIT}  # fmt: skip


# --- home ---------------------------------------------------------------------------------------------------------


def home_page() -> dict:
    runs = public_test_runs()
    newest = public_submissions().order_by("-published_at", "-created")[:10]
    first_run = runs.filter(submission=OuterRef("pk")).order_by("test")
    newest = newest.annotate(
        drive_name=Subquery(first_run.values("drive_model__name")[:1]),
        drive_slug=Subquery(first_run.values("drive_model__slug")[:1]),
    )
    # refresh_aggregates rewrites aggregate rows whenever public data changes: their newest row versions the totals
    latest = DriveModelAggregate.objects.aggregate(n=Count("id"), top=Max("id"), at=Max("updated"))
    key = f"{HOME_COUNTS_KEY}:{latest['n']}:{latest['top']}:{latest['at'].timestamp() if latest['at'] else 0}"
    counts = cache.get(key)
    if counts is None:
        counts = {
            "n_drives": public_drive_models().count(),
            "n_units": PhysicalUnit.objects.filter(Exists(runs.filter(unit=OuterRef("pk")))).count(),
            "n_submissions": public_submissions().count(),
            "n_measurements": public_measurements().count(),
        }
        cache.set(key, counts, HOME_COUNTS_SECONDS)
    return {**counts, "newest": list(newest.select_related("uploader"))}


# --- drive list ---------------------------------------------------------------------------------------------------


def ordered_ids(queryset: QuerySet[DriveModel]) -> list[int]:
    """The ids the filtered, sorted list holds, in one query: the count and the page come from this list, so the
    filters' semi-joins over every public run run once per request, not twice (COUNT, then the page)."""
    return list(queryset.values_list("pk", flat=True))


def drive_models_in_order(ids: list[int]) -> list[DriveModel]:
    by_id = DriveModel.objects.select_related("vendor").in_bulk(list(ids))
    return [by_id[pk] for pk in ids if pk in by_id]


def headline_cells(drive_models: list[DriveModel]) -> None:
    """Attach `headline_cells` (one per headline: {"html": …} or None) and the numbers of public runs and units behind
    them to each drive model: one query when every drive's summary was written with its data (its cells too), five
    at most otherwise."""
    found = stored_summaries([d.pk for d in drive_models])
    missing = [d for d in drive_models if d.pk not in found]
    by_model: dict[int, dict[str, DriveModelAggregate]] = defaultdict(dict)
    if missing:
        for aggregate in DriveModelAggregate.objects.filter(drive_model__in=missing, factor="all"):
            by_model[aggregate.drive_model_id][aggregate.metric] = aggregate
        computed, _ = cached_summaries([d.pk for d in missing], {pk: list(a.values()) for pk, a in by_model.items()})
        found.update(computed)
    for drive_model in drive_models:
        summary = found[drive_model.pk]
        drive_model.n_runs, drive_model.n_units = summary.n_runs, summary.n_units
        drive_model.n_compliant_runs = summary.n_compliant_runs
        if summary.list_cells is not None:
            cells = [{"html": mark_safe(html)} if html else None for html in summary.list_cells]  # noqa: S308
        else:
            cells = [units.headline_cell(h, by_model[drive_model.pk].get(h.key)) for h in HEADLINES]
        drive_model.headline_cells = list(zip(HEADLINES, cells, strict=True))


def list_cells(aggregates: list[DriveModelAggregate]) -> list[str | None]:
    """The drive list's cells of a drive, one per headline (HTML, every value escaped), from its aggregates."""
    overall = {a.metric: a for a in aggregates if a.factor == "all"}
    return [str(cell["html"]) if (cell := units.headline_cell(h, overall.get(h.key))) else None for h in HEADLINES]
