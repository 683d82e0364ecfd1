"""Things that read the dataset. Only honest results are public: published, unhidden submissions, and never a trial.

A trial is a run made to try the tool (a file target, or the `quick` profile): it is its contributor's own, shown on
their profile and submission page, and never enters a public drive, list, count, aggregate, export or release.
Every public surface reads through the functions below, so this is the one place that says what is public.

Its owner sees a trial while it is stored and theirs (OWN_TRIAL_STATUSES): published, or held by a check that staff
look at, hidden by staff or not; a rejected or withdrawn trial is gone for its owner too.
"""

from __future__ import annotations

from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from analysis.models import DriveModel, DriveModelAggregate, Flag, Measurement, SteadyStateWindow, TestRun
from submissions.models import Submission
from submissions.selectors import public_submissions as published_submissions

PUBLIC_STATUS = "published"
OWN_TRIAL_STATUSES = (PUBLIC_STATUS, "held")
TRIAL_TARGET_KIND = "file"
TRIAL_PROFILE = "quick"
# Tests that are nvmedb extensions, not SNIA PTS tests: never counted, exported or compared as PTS results (their
# rows live in their own tables and page sections). Plain strings: analysis.models imports nothing from here.
EXTENSION_TESTS = ("surface",)
# "A drive's newest run" on every page: the latest finished, a run without a finish time last, then the latest stored
NEWEST_RUN_FIRST = (F("finished_at").desc(nulls_last=True), "-pk")


def newest_run_per(runs: QuerySet, *fields: str) -> QuerySet:
    """The newest run (NEWEST_RUN_FIRST) of each group of `fields` among `runs`. A window rank rather than
    PostgreSQL's DISTINCT ON, so the same query runs on SQLite."""
    rank = Window(RowNumber(), partition_by=[F(f) for f in fields], order_by=list(NEWEST_RUN_FIRST))
    return runs.annotate(newest_rank=rank).filter(newest_rank=1)


def trial_q(prefix: str = "") -> Q:
    """Runs made to try the tool: a file target or the quick profile (imports have neither)."""
    return Q(**{f"{prefix}target_kind": TRIAL_TARGET_KIND}) | Q(**{f"{prefix}profile": TRIAL_PROFILE})


def is_trial(run: TestRun) -> bool:
    return run.target_kind == TRIAL_TARGET_KIND or run.profile == TRIAL_PROFILE


def _published_q(prefix: str) -> Q:
    return Q(**{f"{prefix}submission__status": PUBLIC_STATUS, f"{prefix}submission__hidden": False})


def own_trials_q(prefix: str = "", *, of: int) -> Q:
    """The trial runs user `of` sees as theirs: published or held (OWN_TRIAL_STATUSES), hidden by staff or not."""
    owned = {f"{prefix}submission__uploader_id": of, f"{prefix}submission__status__in": OWN_TRIAL_STATUSES}
    return trial_q(prefix) & Q(**owned)


def shows_own_trial(submission: Submission) -> bool:
    """Whether the owner of a trial submission sees its results (charts, include=trial exports) in its status."""
    return submission.status in OWN_TRIAL_STATUSES


def public_runs_q(prefix: str = "", *, trials_of: int | None = None) -> Q:
    """Runs anyone may see; with `trials_of` (a user id) also that user's own trial runs (own_trials_q)."""
    public = _published_q(prefix) & ~trial_q(prefix)
    return public if trials_of is None else public | own_trials_q(prefix, of=trials_of)


def pts_q(prefix: str = "") -> Q:
    """Runs of a SNIA PTS test (or a WSAT workload): not of an nvmedb extension such as the surface."""
    return ~Q(**{f"{prefix}test__in": EXTENSION_TESTS})


def extension_q(prefix: str = "") -> Q:
    return Q(**{f"{prefix}test__in": EXTENSION_TESTS})


def is_extension(test: str) -> bool:
    return test in EXTENSION_TESTS


def public_test_runs(*, trials_of: int | None = None) -> QuerySet[TestRun]:
    """Every public run, the extensions' too (a drive with only a surface run still has a page)."""
    return TestRun.objects.filter(public_runs_q(trials_of=trials_of))


def public_pts_runs(*, trials_of: int | None = None) -> QuerySet[TestRun]:
    """Public runs of PTS tests only: what the runs export and every PTS count read."""
    return public_test_runs(trials_of=trials_of).filter(pts_q())


def public_measurements(*, trials_of: int | None = None) -> QuerySet[Measurement]:
    """Measurements of public PTS runs (a surface cell's fio run is in the surface table, not here)."""
    return Measurement.objects.filter(public_runs_q("test_run__", trials_of=trials_of), pts_q("test_run__"))


def public_windows(*, trials_of: int | None = None) -> QuerySet[SteadyStateWindow]:
    return SteadyStateWindow.objects.filter(public_runs_q("test_run__", trials_of=trials_of), pts_q("test_run__"))


def trial_submission_q(*, ref: str = "pk") -> Q:
    """Submissions (or rows pointing at one through `ref`) holding a trial run."""
    return Q(Exists(TestRun.objects.filter(trial_q(), submission=OuterRef(ref))))


def public_submissions(*, trials_of: int | None = None) -> QuerySet[Submission]:
    """Published, unhidden submissions that are not trials (with `trials_of`: plus that user's own trials, in
    OWN_TRIAL_STATUSES)."""
    public = published_submissions().exclude(trial_submission_q())
    if trials_of is None:
        return public
    own = Submission.objects.filter(trial_submission_q(), uploader_id=trials_of, status__in=OWN_TRIAL_STATUSES)
    return public | own


def run_flagged_q(**kinds) -> Q:
    """Test runs with a flag of `kinds` on the run (or on one of its measurements) or on its whole submission.

    Two subqueries that do not refer to the run, so the database reads the flags of those kinds once and looks each
    run up in what it read (PostgreSQL's hashed subplan). An EXISTS correlated on the run read them again for every
    run: at 3,620 runs of one drive that was 14 of the query's 18 ms, and it grew with the data set's flags."""
    flags = Flag.objects.filter(**kinds)
    on_run = flags.filter(test_run__isnull=False).values("test_run_id")
    on_submission = flags.filter(test_run__isnull=True, submission__isnull=False).values("submission_id")
    return Q(pk__in=on_run) | Q(submission_id__in=on_submission)


def public_flags() -> QuerySet[Flag]:
    return Flag.objects.filter(submission__status=PUBLIC_STATUS, submission__hidden=False).exclude(
        trial_submission_q(ref="submission_id")
    )


def drive_models_with_data() -> QuerySet[DriveModel]:
    """Drive models that have at least one public run, with their overall aggregates prefetched."""
    return (
        DriveModel.objects.filter(test_runs__in=public_test_runs())
        .distinct()
        .select_related("vendor")
        .prefetch_related(
            Prefetch("aggregates", queryset=DriveModelAggregate.objects.filter(factor="all"), to_attr="overall")
        )
    )


def headline_aggregates(*, drive_model: DriveModel) -> dict[str, dict[str, DriveModelAggregate]]:
    """metric -> factor level label ("" for all runs, "firmware=…", "pcie_generation=Gen4", …) -> aggregate."""
    result: dict[str, dict[str, DriveModelAggregate]] = {}
    for aggregate in drive_model.aggregates.all():
        label = "" if aggregate.factor == "all" else f"{aggregate.factor}={aggregate.level}"
        result.setdefault(aggregate.metric, {})[label] = aggregate
    return result


def run_detail(*, test_run: TestRun) -> dict:
    """One run with its rounds' measurements, windows and flags, in as few queries as the page needs."""
    return {
        "run": test_run,
        "measurements": list(
            Measurement.objects.filter(test_run=test_run).select_related("round").order_by("round__number", "id")
        ),
        "windows": list(SteadyStateWindow.objects.filter(test_run=test_run)),
        "flags": list(Flag.objects.filter(test_run=test_run).select_related("measurement")),
    }
