"""What the pages need from every public run of a drive (DriveSummary): read from its stored page summary
(browse.summaries writes it after every change), else computed from the runs and cached per data version;
and how fresh a stored one is."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import QuerySet
from django.utils import timezone

from analysis.models import (
    DriveModel,
    DriveModelAggregate,
    DrivePageSummary,
)
from analysis.selectors import (
    public_flags,
    public_submissions,
    public_test_runs,
)
from browse.counts import pts_flags, run_counts
from browse.run_rows import STATISTICS_SECONDS, TEST_ORDER, public_runs_of, representative_run


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
# Which build of browse.summaries a stored summary is: change it whenever what they hold changes; pages
# compute per request from a summary of another format until `manage.py refresh_aggregates` rewrites them.
# 2: n_runs, n_submissions and n_units count PTS runs only; n_surface_runs. 3: n_compliant_runs, the factors' run counts
# 4: aggregates by unit, the list cells say "unconfirmed" (one contributor); aggregates gained n_contributors
SUMMARY_FORMAT = 4


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
    """The summaries written with the drives' data (browse.summaries), in one query; a drive without one of
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
    queued after every change: browse.summaries); nothing while it is current or the rebuild is due."""
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
    runs: dict[int, list[dict]] | None = None,
) -> tuple[dict[int, DriveSummary], dict[int, list[dict]]]:
    """Each drive's summary read from every public run (of `runs_of` and `flags_of`, by default the public ones),
    in three queries whatever the number of drives (two when the caller read the drives' `runs` already, as light
    rows newest first), and the drives' run lists."""
    missing = drive_ids
    found: dict[int, DriveSummary] = {}
    runs = public_runs_of(missing, runs_of) if runs is None else runs
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
        # each (drive, kind, submission) once, counted here: a hash aggregate, not COUNT(DISTINCT)'s sort of every flag
        for drive_id, kind, _ in flags.values_list(drive_field, "kind", "submission_id").distinct().order_by():
            counted[drive_id][kind] += 1
    for pk in missing:
        overall = {a.metric: a for a in aggregates.get(pk, []) if a.factor == "all"}
        by_test: dict[str, list[dict]] = defaultdict(list)  # each test's runs, newest first: one pass, not one a test
        for run in runs[pk]:
            by_test[run["test"]].append(run)
        found[pk] = DriveSummary(
            **run_counts(runs[pk]),
            representative={
                test: run["id"]
                for test in TEST_ORDER
                if (run := representative_run(by_test.get(test, []), test, overall))
            },
            newest=[
                {key: run[key] for key in NEWEST_FIELDS if key in run}  # undated rows: the summary rebuild's
                for run in list({r["submission_id"]: r for r in reversed(runs[pk])}.values())[::-1][:NEWEST_SUBMISSIONS]
            ],
            flag_counts=[{"kind": kind, "n_submissions": n} for kind, n in sorted(counted[pk].items())],
            steady_runs={
                test: (sum(1 for r in of_test if r["steady"]), len(of_test))
                for test in TEST_ORDER
                if (of_test := by_test.get(test))
            },
            tests=tuple(sorted(by_test)),
        )
    return found, runs
