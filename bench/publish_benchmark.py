"""How long the transaction that publishes or withdraws a submission holds, on a realistically large dataset.

It seeds its own database beside DATABASE_URL (`nvmedb_bench_publish_<rows>`, kept between runs; --reseed rebuilds)
with bench/_seed.py: 20 drive models, one of them (`bench-big-drive`) with one submission per 1,000 measurement rows
(1,000 at the default 1,000,000 rows). Then, for --rounds submissions of the big drive, it times the real services:

- withdraw: submissions.services.submission_withdraw (the owner takes it back: status, aggregates, data version);
- publish: the same submission held again, then submissions.services.submission_approve (staff publish it: status,
  runs' compliance, aggregates, data version).

Each is timed from the call to the commit. What the site derives for readers after the commit (the drive's page
summary: browse.summaries, queued by analysis.drive_changes) is timed apart, as the task would run it; the
factor model's refit (another after-commit task) is not run. Goal (issue 23): publish and withdraw transaction
p50 <= 100 ms at 1 M rows. Prints the figures, the goals with PASS / FAIL and the load average; exits 1 when a goal is
missed. Works on PostgreSQL and on SQLite (DATABASE_URL=sqlite:///...: the database is a file in the var folder).
BENCH_SMOKE=1: a fresh database of about 5,000 rows and 3 drives, a few rounds: a check that it runs, in seconds.

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb .venv/bin/python bench/publish_benchmark.py \\
        [--rows 1000000] [--rounds 20] [--reseed]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _seed  # noqa: E402
from _report import SMOKE, Report  # noqa: E402

GOAL_MS = 100.0
GOAL_ROWS = 1_000_000


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=GOAL_ROWS, help="measurement rows to seed (default 1,000,000)")
    parser.add_argument("--rounds", type=int, default=20, help="submissions withdrawn and published again")
    parser.add_argument("--reseed", action="store_true", help="drop and re-seed the benchmark database")
    args = parser.parse_args()
    if SMOKE:
        args.rows, args.rounds, args.reseed = 5_000, 3, True
    report = Report("publish benchmark")
    url = _seed.bench_database_url(f"nvmedb_bench_publish_{args.rows}")
    must_seed = _seed.ensure_database(url, reseed=args.reseed)
    _seed.setup_django(url)
    _seed.migrate()
    if must_seed:
        seeded = _seed.seed(
            drive_models=3 if SMOKE else 20,
            submissions_for_big_model=max(args.rows // 1000, 10),
            measurements_total=args.rows,
            log=lambda line: print(f"  {line}", flush=True),
        )
        report.note(f"seeded {seeded.submissions} submissions, {seeded.measurements:,} rows in {seeded.seconds:.0f} s")

    from django.contrib.auth import get_user_model

    from analysis.drive_changes import drive_data_changed
    from analysis.models import DriveModel, Measurement, TestRun
    from analysis.tasks import queue_page_summary
    from browse.summaries import rebuild_summary
    from submissions.models import Submission
    from submissions.services import submission_approve, submission_withdraw

    big = DriveModel.objects.get(slug="bench-big-drive")
    rows = Measurement.objects.count()
    chosen = list(
        Submission.objects.filter(status="published", hidden=False, test_runs__drive_model=big)
        .distinct()
        .order_by("created")[: args.rounds]
    )
    staff = get_user_model().objects.filter(username="bench-staff").first() or get_user_model().objects.create_user(
        username="bench-staff", is_staff=True
    )
    announced: list[int] = []

    def record(sender=None, *, drive_model_id: int, **kwargs) -> None:
        announced.append(drive_model_id)

    timings: dict[str, list[float]] = {"withdraw": [], "publish": [], "rebuild": []}

    def after_commit() -> None:
        """The page summary rebuild the after-commit task runs, timed apart from the transaction."""
        for drive_model_id in dict.fromkeys(announced):
            started = time.perf_counter()
            rebuild_summary(drive_model_id)
            timings["rebuild"].append((time.perf_counter() - started) * 1000)
        announced.clear()

    drive_data_changed.disconnect(queue_page_summary, dispatch_uid="analysis.page-summary")
    drive_data_changed.connect(record, dispatch_uid="bench.publish")
    with _seed.no_factor_refits():
        for submission in chosen:
            started = time.perf_counter()
            submission_withdraw(submission=submission, by=submission.uploader)
            timings["withdraw"].append((time.perf_counter() - started) * 1000)
            after_commit()
            Submission.objects.filter(pk=submission.pk).update(status="held", withdrawn_at=None)  # awaiting review
            started = time.perf_counter()
            submission_approve(submission=submission, by=staff)
            timings["publish"].append((time.perf_counter() - started) * 1000)
            after_commit()
    drive_data_changed.disconnect(record, dispatch_uid="bench.publish")

    runs = TestRun.objects.filter(drive_model=big).count()
    report.note(f"database: {url.split('://', 1)[0]}, {rows:,} measurement rows; big drive: {runs:,} runs")
    report.note(f"rounds: {len(chosen)} submissions of the big drive withdrawn, then held and approved again")
    size = f"at {rows:,} rows" + ("" if rows >= GOAL_ROWS else f" (the goal is at {GOAL_ROWS:,})")
    for name in ("publish", "withdraw"):
        figure = p50(timings[name])
        report.check(f"{name} transaction p50 {figure:.1f} ms {size}", figure <= GOAL_MS, goal=f"<= {GOAL_MS:.0f} ms")
    report.note(f"page summary rebuild after commit (off the transaction): p50 {p50(timings['rebuild']):.1f} ms")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
