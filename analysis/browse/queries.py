"""Page data for the browse pages, each loaded in a fixed number of queries whatever the number of submissions.

A drive page leads with statistics over every public run (the aggregates, the per-run headline values) and draws the
PTS charts of one run per test: the run whose headline value is closest to the drive's median (or the runs of a
submission the reader picked). Measurements are read only for those runs, so the page costs the same for a drive
with one submission and for one with a thousand.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from django.core.cache import cache
from django.db.models import Count, Exists, F, FloatField, Max, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.safestring import mark_safe

from analysis.browse import units
from analysis.browse.counts import pts_flags, pts_runs, run_counts
from analysis.headline import HEADLINES
from analysis.models import (
    DriveModel,
    DriveModelAggregate,
    DrivePageSummary,
    Flag,
    Measurement,
    PhysicalUnit,
    SteadyStateWindow,
)
from analysis.selectors import (
    TRIAL_TARGET_KIND,
    is_trial,
    public_flags,
    public_measurements,
    public_submissions,
    public_test_runs,
)
from nvmedb_client.steady_state import WINDOW_ROUNDS

TEST_ORDER = ("iops", "tp", "lat", "wsat")
STATISTICS_SECONDS = 24 * 3600
HOME_COUNTS_KEY = "browse:home-counts:v1"
# the home page's totals may lag a minute behind; counting a million rows on every hit does not
HOME_COUNTS_SECONDS = 60
PRIMARY_METRIC = {"iops": "iops_4k_read", "tp": "bw_1m_read", "lat": "lat_4k_mean"}
RUN_FIELDS = (
    "id",
    "test",
    "submission_id",
    "submission__published_at",
    "firmware__revision",
    "pcie_link__generation",
    "pcie_link__width",
    "pcie_link__usable_bandwidth_bytes_per_s",
    "unit_id",
    "profile",
    "edition",
    "compliant",
    "source",
    "steady",
    "steady_round",
    "threads",
    "iodepth",
    "started_at",
    "warning_temperature_k",
    "critical_temperature_k",
)
# Every public run of a drive is read for the statistics; only these columns, the metrics extracted by the database.
LIGHT_RUN_FIELDS = ("id", "test", "submission_id", "submission__published_at", "firmware__revision",
                    "pcie_link__generation", "unit_id", "steady", "compliant")  # fmt: skip
CHARTED_METRICS = ("iops_4k_read", "bw_1m_read", "lat_4k_mean")


def metric_column(key: str) -> str:
    return f"m_{key}"


def light_runs(queryset: QuerySet, *extra_fields: str) -> QuerySet:
    """Runs as small dicts with the charted headline metrics as floats (JSON parsed by the database, not Python)."""
    metrics = {metric_column(key): Cast(KT(f"headline__{key}"), FloatField()) for key in CHARTED_METRICS}
    return queryset.annotate(**metrics).values(*LIGHT_RUN_FIELDS, *extra_fields, *metrics)


MEASUREMENT_FIELDS = (
    "id",
    "test_run_id",
    "round__phase",
    "round__series",
    "round__number",
    "run_key",
    "block_size_bytes",
    "read_pct",
    "total_iops",
    "read_iops",
    "write_iops",
    "read_bw_bytes_per_s",
    "write_bw_bytes_per_s",
    "total_bw_bytes_per_s",
    "lat_mean_ns",
    "lat_p9999_ns",
    "lat_max_ns",
    "temperature_before_k",
    "temperature_after_k",
    "cumulative_write_bytes",
    "in_steady_window",
    "started_at",
    "raw_file",
)

# what the drive page's charts read (fewer columns: the page reads several hundred rows on every request)
CHARTED_MEASUREMENT_FIELDS = ("test_run_id", "round__phase", "round__number", "run_key", "block_size_bytes", "read_pct",
                              "total_iops", "read_bw_bytes_per_s", "write_bw_bytes_per_s", "lat_mean_ns",
                              "lat_p9999_ns", "lat_max_ns", "temperature_after_k", "cumulative_write_bytes",
                              "in_steady_window", "started_at")  # fmt: skip


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


# --- drive page ---------------------------------------------------------------------------------------------------


@dataclass
class DriveData:
    drive: DriveModel
    aggregates: list[DriveModelAggregate]
    summary: DriveSummary
    all_runs: list[dict] | None  # every public run, when the summary had to be computed; else loaded on demand
    selected: dict[str, dict]  # test -> run row
    selection_reason: str
    flags: list[Flag]
    flag_counts: list[dict]
    submissions: list[uuid.UUID] = field(default_factory=list)
    version: str | None = None  # of the drive's public data (dataset_version), for caching what derives from it
    chosen_submission: uuid.UUID | None = None
    stored: dict | None = None  # what analysis.browse.summaries wrote from the drive's data
    runs_of: QuerySet | None = None  # the runs counted as public (None: selectors' public runs)
    freshness: str = ""  # said on the page when the summary lags more than FRESH_SECONDS behind the drive's data

    @cached_property
    def measurements(self) -> dict[int, list[dict]]:
        """Test run id -> the charted columns of its measurements in round order (read on first use: a page whose
        charts are cached never reads them)."""
        measurements: dict[int, list[dict]] = defaultdict(list)
        rows = (
            Measurement.objects.filter(test_run_id__in=[run["id"] for run in self.selected.values()])
            .order_by("test_run_id", "round__phase", "round__series", "round__number", "block_size_bytes", "read_pct")
            .values(*CHARTED_MEASUREMENT_FIELDS)
        )
        for row in rows:
            measurements[row["test_run_id"]].append(row)
        return dict(measurements)

    @cached_property
    def windows(self) -> list[SteadyStateWindow]:
        run_ids = [run["id"] for run in self.selected.values()]
        return list(SteadyStateWindow.objects.filter(test_run_id__in=run_ids).order_by("test_run_id", "variable"))

    @property
    def is_default_selection(self) -> bool:
        return self.chosen_submission is None

    @property
    def runs(self) -> list[dict]:
        if self.all_runs is None:
            self.all_runs = public_runs_of([self.drive.pk], self.runs_of)[self.drive.pk]
        return self.all_runs

    @property
    def overall(self) -> dict[str, DriveModelAggregate]:
        return {a.metric: a for a in self.aggregates if a.factor == "all"}


class SubmissionNotOfDrive(LookupError):
    pass


class DriveNotPublic(LookupError):
    pass


def drive_by_slug(slug: str) -> DriveModel:
    drive = DriveModel.objects.select_related("vendor").filter(slug=slug).first()
    if drive is None:
        raise DriveNotPublic(f"No drive {slug!r}.")
    return drive


def dataset_version(aggregates: list[DriveModelAggregate]) -> str | None:
    """Which state of a drive's public data these aggregates describe. refresh_aggregates rewrites every aggregate
    row of a drive (new ids, new `updated` times) whenever a submission of it is published, withdrawn, hidden or
    rejected, so the newest of its all-runs rows changes exactly when its statistics may have."""
    rows = [a for a in aggregates if a.factor == "all"]
    if not rows:
        return None
    return f"{max(a.pk for a in rows)}-{max(a.updated for a in rows).timestamp()}"


@dataclass
class DriveSummary:
    """What the pages need from every public run of a drive, small enough to cache and unpickle on each request."""

    n_runs: int  # these three count runs of PTS tests only: a surface run (an nvmedb extension) is n_surface_runs
    n_submissions: int
    n_units: int
    representative: dict[str, int]  # test -> id of the run closest to the drive's median
    newest: list[dict]  # a run (light row) of each of the newest submissions, newest first
    flag_counts: list[dict]  # {"kind", "n_submissions"}
    steady_runs: dict[str, tuple[int, int]] = field(default_factory=dict)  # test -> (steady runs, runs)
    tests: tuple[str, ...] = ()  # every test the drive has a public run of (the extra tests' sections query only then)
    list_cells: list[str | None] | None = None  # the drive list's cells, when written with the drive's data
    n_surface_runs: int = 0
    n_compliant_runs: int = 0  # of n_runs, those that followed the PTS procedure: only these are "PTS test runs"

    @property
    def all_compliant(self) -> bool:
        return self.n_compliant_runs == self.n_runs


NEWEST_SUBMISSIONS = 15
NEWEST_FIELDS = ("submission_id", "submission__published_at", "firmware__revision")
# Which build of analysis.browse.summaries a stored summary is: change it whenever what they hold changes; pages
# compute per request from a summary of another format until `manage.py refresh_aggregates` rewrites them.
# 2: n_runs, n_submissions and n_units count PTS runs only; n_surface_runs. 3: n_compliant_runs, the factors' run counts
# 4: aggregates by unit, the list cells say "unconfirmed" (one contributor); aggregates gained n_contributors
SUMMARY_FORMAT = 4


def public_runs_of(drive_ids: list[int], runs_of: QuerySet | None = None) -> dict[int, list[dict]]:
    """Every public run of these drives (of `runs_of`, by default the public runs) as light rows, newest first (a
    submission being published in this transaction has no date yet: it is the newest), in one query."""
    runs: dict[int, list[dict]] = {pk: [] for pk in drive_ids}
    source = public_test_runs() if runs_of is None else runs_of
    ordered = source.filter(drive_model_id__in=drive_ids).order_by(
        F("submission__published_at").desc(nulls_first=True), "test", "id"
    )
    for run in light_runs(ordered, "drive_model_id"):
        runs[run["drive_model_id"]].append(run)
    return runs


def drive_summaries(
    drive_ids: list[int], aggregates: dict[int, list[DriveModelAggregate]]
) -> tuple[dict[int, DriveSummary], dict[int, list[dict]]]:
    """Each drive's summary as written with its data (one query for every drive), else cached per data version
    (three queries on a miss whatever the number of drives), and the full run lists of the drives that had to be
    summarised here (usually none)."""
    found = stored_summaries(drive_ids)
    unstored = [pk for pk in drive_ids if pk not in found]
    if not unstored:
        return found, {}
    cached, runs = cached_summaries(unstored, aggregates)
    return {**found, **cached}, runs


def cached_summaries(
    drive_ids: list[int], aggregates: dict[int, list[DriveModelAggregate]]
) -> tuple[dict[int, DriveSummary], dict[int, list[dict]]]:
    """Before a drive's summary is written (an older deployment, or a drive no refresh has visited yet): computed
    from every public run and cached per data version."""
    versions = {pk: dataset_version(aggregates.get(pk, [])) for pk in drive_ids}
    keys = {pk: f"browse:drive-summary:v5:{pk}:{versions[pk]}" for pk in drive_ids if versions[pk]}
    cached = cache.get_many(list(keys.values())) if keys else {}
    found = {pk: cached[key] for pk, key in keys.items() if key in cached}
    missing = [pk for pk in drive_ids if pk not in found]
    if not missing:
        return found, {}
    computed, runs = compute_summaries(missing, aggregates)
    found.update(computed)
    cache.set_many({keys[pk]: found[pk] for pk in missing if pk in keys}, STATISTICS_SECONDS)
    return found, runs


def stored_summaries(drive_ids: list[int]) -> dict[int, DriveSummary]:
    """The summaries written with the drives' data (analysis.browse.summaries), in one query; a drive without one of
    the current format is left out (its pages compute it)."""
    rows = DrivePageSummary.objects.filter(drive_model_id__in=drive_ids, format=SUMMARY_FORMAT).values(
        "drive_model_id", "n_runs", "n_submissions", "n_units", "summary"
    )
    return {row["drive_model_id"]: _summary(row, row["summary"]) for row in rows}


def stored_row(drive: DriveModel) -> DrivePageSummary | None:
    """The drive's newest complete summary (the previous one until a change's rebuild writes), if it is of the
    current format and drive slug (its chart links name the slug)."""
    found = DrivePageSummary.objects.filter(drive_model=drive, format=SUMMARY_FORMAT, slug=drive.slug)
    return found.defer("breakdowns", "compare").first()


def summary_of(row: DrivePageSummary) -> DriveSummary:
    """A stored summary, with the publication dates of its newest submissions (one query); one withdrawn or hidden
    since the summary was built is left out at once."""
    summary = _summary(vars(row), row.summary)
    dates = dict(
        public_submissions()
        .filter(pk__in=[r["submission_id"] for r in summary.newest])
        .values_list("pk", "published_at")
    )
    summary.newest = [run for run in summary.newest if run["submission_id"] in dates]
    for run in summary.newest:
        run["submission__published_at"] = dates[run["submission_id"]]
    return summary


FRESH_SECONDS = 60


def freshness(drive: DriveModel, row: DrivePageSummary) -> str:
    """What the page says of a summary still behind the drive's newest change a minute after it (its rebuild is
    queued after every change: analysis.browse.summaries); nothing while it is current or the rebuild is due."""
    if row.data_version >= drive.data_version or drive.data_changed_at is None:
        return ""
    if (timezone.now() - drive.data_changed_at).total_seconds() <= FRESH_SECONDS:
        return ""
    return (
        f"These figures describe this drive's public data as of {row.updated:%Y-%m-%d %H:%M} UTC; a change made at "
        f"{drive.data_changed_at:%Y-%m-%d %H:%M} UTC is not summarised yet."
    )


def names_gone_runs(row: DrivePageSummary, drive: DriveModel) -> bool:
    """Whether a summary behind the drive's data charts a run that is no longer public (withdrawn, hidden): then
    the page is computed from the public runs rather than show it until the rebuild (one query, when behind)."""
    if row.data_version >= drive.data_version:
        return False
    ids = {int(pk) for pk in (row.summary.get("representative") or {}).values()}
    return public_test_runs().filter(pk__in=ids).count() != len(ids)


def _summary(counts: dict, stored: dict) -> DriveSummary:
    return DriveSummary(
        n_runs=counts["n_runs"],
        n_submissions=counts["n_submissions"],
        n_units=counts["n_units"],
        representative={test: int(pk) for test, pk in stored["representative"].items()},
        newest=[{**run, "submission_id": uuid.UUID(run["submission_id"])} for run in stored["newest"]],
        flag_counts=stored["flag_counts"],
        steady_runs={test: tuple(counts) for test, counts in stored["steady_runs"].items()},
        list_cells=stored["list_cells"],
        tests=tuple(stored.get("tests", ())),
        n_surface_runs=stored.get("n_surface_runs", 0),
        n_compliant_runs=stored.get("n_compliant_runs", 0),
    )


def compute_summaries(
    drive_ids: list[int],
    aggregates: dict[int, list[DriveModelAggregate]],
    runs_of: QuerySet | None = None,
    flags_of: QuerySet | None = None,
) -> tuple[dict[int, DriveSummary], dict[int, list[dict]]]:
    """Each drive's summary read from every public run (of `runs_of` and `flags_of`, by default the public ones),
    in three queries whatever the number of drives, and the drives' run lists."""
    missing = drive_ids
    found: dict[int, DriveSummary] = {}
    runs = public_runs_of(missing, runs_of)
    flags_of = public_flags() if flags_of is None else flags_of
    counted: dict[int, dict[str, int]] = {pk: defaultdict(int) for pk in missing}
    # flags about a whole submission (its link, its source) carry no run: they reach the drive through its runs
    for drive_field, flags in (
        ("test_run__drive_model_id", pts_flags(flags_of).filter(test_run__drive_model_id__in=missing)),
        (
            "submission__test_runs__drive_model_id",
            flags_of.filter(test_run__isnull=True, submission__test_runs__drive_model_id__in=missing),
        ),
    ):
        for row in flags.values(drive_field, "kind").annotate(n=Count("submission", distinct=True)).order_by():
            counted[row[drive_field]][row["kind"]] += row["n"]
    for pk in missing:
        overall = {a.metric: a for a in aggregates.get(pk, []) if a.factor == "all"}
        found[pk] = DriveSummary(
            **run_counts(runs[pk]),
            representative={
                test: run["id"] for test in TEST_ORDER if (run := representative_run(runs[pk], test, overall))
            },
            newest=[
                {key: run[key] for key in NEWEST_FIELDS}
                for run in list({r["submission_id"]: r for r in reversed(runs[pk])}.values())[::-1][:NEWEST_SUBMISSIONS]
            ],
            flag_counts=[{"kind": kind, "n_submissions": n} for kind, n in sorted(counted[pk].items())],
            steady_runs={
                test: (sum(1 for r in of_test if r["steady"]), len(of_test))
                for test in TEST_ORDER
                if (of_test := [r for r in runs[pk] if r["test"] == test])
            },
            tests=tuple(sorted({r["test"] for r in runs[pk]})),
        )
    return found, runs


def drive_data(*, drive: DriveModel, submission_id: uuid.UUID | None = None) -> DriveData:
    """Everything the drive page and its CSVs need, for a request: six queries when the drive's summary was written
    with its data (one more with `submission_id`), the old computation from every public run when it was not; its
    measurements and windows (two more) are read when what the page draws needs them."""
    aggregates = list(DriveModelAggregate.objects.filter(drive_model=drive).order_by("metric", "factor", "level"))
    row = stored_row(drive)
    if row is not None and not names_gone_runs(row, drive):
        data = drive_data_of(drive=drive, aggregates=aggregates, summary=summary_of(row), all_runs=None,
                             submission_id=submission_id, stored=row)  # fmt: skip
        data.freshness = freshness(drive, row)
        return data
    found, all_runs = cached_summaries([drive.pk], {drive.pk: aggregates})
    return drive_data_of(drive=drive, aggregates=aggregates, summary=found[drive.pk],
                         all_runs=all_runs.get(drive.pk), submission_id=submission_id)  # fmt: skip


def drive_data_of(
    *,
    drive: DriveModel,
    aggregates: list[DriveModelAggregate],
    summary: DriveSummary,
    all_runs: list[dict] | None,
    submission_id: uuid.UUID | None = None,
    stored=None,
    runs_of: QuerySet | None = None,
) -> DriveData:
    """The drive page's data around its summary: the charted runs, their flags (three queries, one more with
    `submission_id`). `runs_of` are the runs counted as public (a refresh passes the set it is about to publish)."""
    if not (summary.n_runs or summary.n_surface_runs):
        raise DriveNotPublic(f"{drive.slug} has no public run.")
    source = public_test_runs() if runs_of is None else runs_of
    if submission_id is not None:
        chosen = dict(source.filter(drive_model=drive, submission_id=submission_id).values_list("test", "id"))
        if not chosen:
            raise SubmissionNotOfDrive(f"Submission {submission_id} has no public run of this drive.")
        reason = f"Charts show the runs of submission {submission_id}."
    else:
        chosen = summary.representative
        reason = "Charts show, for each test, the public run closest to this drive's median (the most recent on a tie)."
    run_ids = list(chosen.values())
    full = {r["id"]: r for r in source.filter(id__in=run_ids).values(*RUN_FIELDS)}
    selected = {test: full[run_id] for test in TEST_ORDER if (run_id := chosen.get(test)) in full}
    submission_ids = list(dict.fromkeys(run["submission_id"] for run in selected.values()))
    flags = list(
        pts_flags(Flag.objects.filter(submission_id__in=submission_ids))
        .filter(measurement__isnull=True)
        .order_by("kind", "id")[:200]
    )
    measurement_flags = list(
        pts_flags(Flag.objects.filter(submission_id__in=submission_ids, measurement__isnull=False))
        .values("kind", "test_run_id")
        .annotate(n=Count("id"))
        .order_by("kind")
    )
    return DriveData(
        drive=drive,
        aggregates=aggregates,
        summary=summary,
        all_runs=all_runs,
        selected=selected,
        selection_reason=reason,
        flags=flags + [_MeasurementFlagSummary(**row) for row in measurement_flags],
        flag_counts=[dict(row) for row in summary.flag_counts],  # the page adds labels: keep the cached rows clean
        submissions=submission_ids,
        version=stored.version if stored is not None else dataset_version(aggregates),
        chosen_submission=submission_id,
        stored=stored.page if stored is not None else None,
        runs_of=runs_of,
    )


@dataclass
class _MeasurementFlagSummary:
    """Flags raised on single measurements (bus-bound cells), counted per kind and run instead of listed."""

    kind: str
    test_run_id: int
    n: int
    measurement_level: bool = True

    @property
    def reason(self) -> str:
        return f"{self.n} measurement(s) of this run carry this flag (see the submission page for each)."

    def get_kind_display(self) -> str:
        from analysis.models import FlagKind

        return FlagKind(self.kind).label if self.kind in FlagKind.values else self.kind


def representative_run(runs: list[dict], test: str, overall: dict[str, DriveModelAggregate]) -> dict | None:
    candidates = [r for r in runs if r["test"] == test]  # newest first
    if not candidates:
        return None
    key = PRIMARY_METRIC.get(test)
    aggregate = overall.get(key) if key else None
    if aggregate is None:
        return candidates[0]
    column = metric_column(key)
    with_value = [r for r in candidates if r[column] is not None]
    if not with_value:
        return candidates[0]
    return min(with_value, key=lambda r: abs(r[column] - aggregate.median))


def window_cells(rows: list[dict]) -> dict[tuple[str, int, int], list[dict]]:
    """(phase, block size, read %) -> the rows of the measurement window (the steady window, else the last rounds)."""
    cells: dict[tuple[str, int, int], list[dict]] = defaultdict(list)
    for row in rows:
        cells[(row["round__phase"], row["block_size_bytes"], row["read_pct"])].append(row)
    chosen = {}
    for key, cell in cells.items():
        cell.sort(key=lambda r: r["round__number"])
        chosen[key] = [r for r in cell if r["in_steady_window"]] or cell[-WINDOW_ROUNDS:]
    return chosen


def window_mean(rows: list[dict], column: str) -> float | None:
    values = [r[column] for r in rows if r[column] is not None]
    return sum(values) / len(values) if values else None


# --- submission page ----------------------------------------------------------------------------------------------


@dataclass
class RoundRows:
    phase: str
    series: str
    number: int
    measurements: list[dict]


def submission_dataset(*, submission, with_files: bool) -> dict:
    """Runs, rounds (with every measurement), windows and flags of one submission in five queries, plus the raw
    files its bundle's manifest lists when `with_files` (the bundle is read, not extracted)."""
    from analysis.browse import raw_files
    from analysis.models import TestRun

    runs = list(
        TestRun.objects.filter(submission=submission)
        .select_related("drive_model", "firmware", "pcie_link", "host")
        .order_by("test")
    )
    rounds: dict[int, list[RoundRows]] = defaultdict(list)
    rows = (
        Measurement.objects.filter(test_run__submission=submission)
        .order_by("test_run_id", "round__phase", "round__series", "round__number", "block_size_bytes", "read_pct")
        .values(*MEASUREMENT_FIELDS, "link_utilization")
    )
    for row in rows:
        by_run = rounds[row["test_run_id"]]
        key = (row["round__phase"], row["round__series"], row["round__number"])
        if not by_run or (by_run[-1].phase, by_run[-1].series, by_run[-1].number) != key:
            by_run.append(RoundRows(*key, measurements=[]))
        by_run[-1].measurements.append(row)
    windows: dict[int, list[SteadyStateWindow]] = defaultdict(list)
    for window in SteadyStateWindow.objects.filter(test_run__submission=submission).order_by("variable"):
        windows[window.test_run_id].append(window)
    flags = list(Flag.objects.filter(submission=submission).select_related("test_run", "measurement"))
    for run in runs:
        run.round_rows = rounds.get(run.pk, [])
        run.window_rows = windows.get(run.pk, [])
    files, files_error = None, ""
    if with_files:
        try:
            files = raw_files.bundle_files(storage_name=submission.storage_name)
        except (raw_files.RawFileNotFound, OSError, ValueError) as exc:
            files_error = f"The stored bundle could not be read: {exc}"
    trial = any(is_trial(run) for run in runs)
    file_target = any(run.target_kind == TRIAL_TARGET_KIND for run in runs)  # a file, which says nothing of a drive
    return {"runs": runs, "flags": flags, "files": files, "files_error": files_error, "trial": trial,
            "file_target": file_target}  # fmt: skip


# --- drive page: over-provisioning ---------------------------------------------------------------------------------

FACTOR_RUN_FIELDS = ("id", "unit_id", "overprovisioning")


def factor_runs(drive_id: int, runs_of: QuerySet | None = None) -> list[dict]:
    """Every public PTS run of a drive with what the over-provisioning figures read (analysis.browse.factors), in one
    query: the headline metrics they break down as floats. (The factor model reads its own rows:
    analysis.factor_rows.)"""
    from analysis.browse.factors import FACTOR_METRICS

    metrics = {metric_column(key): Cast(KT(f"headline__{key}"), FloatField()) for key in FACTOR_METRICS}
    rows = (
        pts_runs(public_test_runs() if runs_of is None else runs_of)
        .filter(drive_model_id=drive_id)
        .annotate(**metrics)
        .order_by("id")
        .values(*FACTOR_RUN_FIELDS, *metrics)
    )
    return list(rows)
