"""A drive page's data for one request (DriveData): the drive's summary, its aggregates, the charted runs (the
representative ones, or those of a submission the reader picked) and their flags, in a fixed number of queries;
measurements and windows read only when what the page draws needs them."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from django.db.models import Count, QuerySet

from analysis.models import (
    DriveModel,
    DriveModelAggregate,
    Flag,
    FlagKind,
    Measurement,
    SteadyStateWindow,
)
from analysis.selectors import (
    public_test_runs,
)
from browse.counts import pts_flags
from browse.drive_summary import (
    DriveSummary,
    cached_summaries,
    dataset_version,
    freshness,
    names_gone_runs,
    stored_row,
    summary_of,
)
from browse.run_rows import CHARTED_MEASUREMENT_FIELDS, RUN_FIELDS, TEST_ORDER, public_runs_of, row_dicts


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
    stored: dict | None = None  # what browse.summaries wrote from the drive's data
    runs_of: QuerySet | None = None  # the runs counted as public (None: selectors' public runs)
    freshness: str = ""  # said on the page when the summary lags more than FRESH_SECONDS behind the drive's data
    breakdowns: list | None = None  # the breakdown charts, when the summary rebuild computed them already

    @cached_property
    def measurements(self) -> dict[int, list[dict]]:
        """Test run id -> the charted columns of its measurements in round order (read on first use: a page whose
        charts are cached never reads them)."""
        measurements: dict[int, list[dict]] = defaultdict(list)
        rows = Measurement.objects.filter(test_run_id__in=[run["id"] for run in self.selected.values()]).order_by(
            "test_run_id", "round__phase", "round__series", "round__number", "block_size_bytes", "read_pct"
        )
        for row in row_dicts(rows, CHARTED_MEASUREMENT_FIELDS):
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
    flagged: bool = True,
) -> DriveData:
    """The drive page's data around its summary: the charted runs, their flags (three queries, one more with
    `submission_id`; one without the flags, not `flagged`, as the summary rebuild has it: the page reads them).
    `runs_of` are the runs counted as public (a refresh passes the set it is about to publish)."""
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
    return DriveData(
        drive=drive,
        aggregates=aggregates,
        summary=summary,
        all_runs=all_runs,
        selected=selected,
        selection_reason=reason,
        flags=_charted_flags(submission_ids) if flagged else [],
        flag_counts=[dict(row) for row in summary.flag_counts],  # the page adds labels: keep the cached rows clean
        submissions=submission_ids,
        version=stored.version if stored is not None else dataset_version(aggregates),
        chosen_submission=submission_id,
        stored=stored.page if stored is not None else None,
        runs_of=runs_of,
    )


def _charted_flags(submission_ids: list) -> list:
    """The PTS flags of the charted runs' submissions: each one not on a measurement, and those on measurements
    counted per kind and run (two queries)."""
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
    return flags + [_MeasurementFlagSummary(**row) for row in measurement_flags]


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

        return FlagKind(self.kind).label if self.kind in FlagKind.values else self.kind
