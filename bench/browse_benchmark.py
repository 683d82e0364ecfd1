"""Server-side latency of the browse pages on a realistically large PostgreSQL dataset.

Seeds its own database (nvmedb_bench_browse on the DATABASE_URL server, or the CI default; kept between runs,
--reseed rebuilds it) with bench/_seed.py: 20 drive models, one of them with 1,000 submissions, about 1 million
measurement rows overall. Then requests each page N times in-process through Django's test client (the full
middleware, view, ORM and template stack, no network) and prints p50 / p95 / p99 latency and the queries per request.

Target: p95 ≤ 100 ms for the drive page (of the 1,000-submission model), the drive list and compare.

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb .venv/bin/python bench/browse_benchmark.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _seed  # noqa: E402

BENCH_DB = "nvmedb_bench_browse"
TARGET_P95_MS = 100.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class QueryCounter:
    """Counts the SQL statements a request runs (the test client resets Django's own query log per request)."""

    def __init__(self):
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def measure(client, url: str, requests: int, *, cold: bool = False) -> tuple[list[float], list[float], int, int]:
    """Wall and CPU (this process: Django, not PostgreSQL) milliseconds of `requests` GETs of `url` after one
    warm-up, its query count and response size.

    `cold` clears the cache before each request, so the page computes everything it may otherwise reuse."""
    from django.core.cache import cache
    from django.db import connection

    response = client.get(url)  # warm-up
    if response.status_code != 200:
        raise SystemExit(f"{url} answered {response.status_code}")
    size = len(response.content)
    timings, cpu = [], []
    for _ in range(requests):
        if cold:
            cache.clear()
        started, started_cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        timings.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
        assert response.status_code == 200
    counter = QueryCounter()
    if cold:
        cache.clear()
    with connection.execute_wrapper(counter):
        client.get(url)
    return timings, cpu, counter.count, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50, help="requests per page (default 50)")
    parser.add_argument("--reseed", action="store_true", help="drop and re-seed the benchmark database")
    parser.add_argument("--measurements", type=int, default=1_000_000)
    parser.add_argument("--big-submissions", type=int, default=1000)
    args = parser.parse_args()

    url = _seed.bench_database_url(BENCH_DB)
    must_seed = _seed.ensure_database(url, reseed=args.reseed)
    _seed.setup_django(url)
    _seed.migrate()
    if must_seed:
        summary = _seed.seed(
            drive_models=20, submissions_for_big_model=args.big_submissions, measurements_total=args.measurements
        )
        print(
            f"seeded {summary.submissions} submissions ({summary.big_model_submissions} of {summary.big_model_slug}), "
            f"{summary.measurements:,} measurements in {summary.seconds:.0f} s"
        )
    from django.test import Client

    from analysis.models import DriveModel, Measurement, TestRun

    big = DriveModel.objects.get(slug="bench-big-drive")
    others = list(DriveModel.objects.exclude(pk=big.pk).order_by("slug").values_list("slug", flat=True)[:3])
    print(
        f"dataset: {DriveModel.objects.count()} drive models, {Measurement.objects.count():,} measurements; "
        f"{big.slug}: {TestRun.objects.filter(drive_model=big).values('submission').distinct().count()} submissions, "
        f"{Measurement.objects.filter(drive_model=big).count():,} measurements"
    )
    client = Client(SERVER_NAME="localhost")
    pages = {
        "drive page (1,000 submissions)": f"/drives/{big.slug}/",
        "drive page (1,000), cold cache": f"/drives/{big.slug}/",
        "drive page (smaller model)": f"/drives/{others[0]}/",
        "drive list": "/drives/",
        "drive list, filtered + sorted": "/drives/?sort=-iops_4k_read&pcie_generation=4&compliance=pts",
        "compare (4 drives)": "/compare/?drives=" + ",".join([big.slug, *others]),
        "home": "/",
    }
    print(
        f"\n{'page':34} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'CPU p50':>8} {'queries':>8} {'KiB':>6}  target p95 ≤ {TARGET_P95_MS:.0f} ms"
    )
    failed = []
    for name, page_url in pages.items():
        timings, cpu, queries, size = measure(client, page_url, args.requests, cold="cold" in name)
        p95 = percentile(timings, 0.95)
        targeted = name != "home" and "cold" not in name
        verdict = ("ok" if p95 <= TARGET_P95_MS else "OVER") if targeted else "(no target)"
        if targeted and p95 > TARGET_P95_MS:
            failed.append(name)
        print(
            f"{name:34} {statistics.median(timings):8.1f} {p95:8.1f} {percentile(timings, 0.99):8.1f} "
            f"{statistics.median(cpu):8.1f} {queries:8d} {size / 1024:6.0f}  {verdict}"
        )
    print("\nall targeted pages within p95 ≤ 100 ms" if not failed else f"\nover target: {', '.join(failed)}")
    print(f"load average during the run: {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
