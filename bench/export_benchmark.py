"""How fast the live exports stream, against PostgreSQL's own COPY of the same query.

Seeds a separate database (nvmedb_bench_datasets on the DATABASE_URL server; kept between runs, --reseed rebuilds it)
with about 1.1 million measurement rows (800 IOPS runs × 25 rounds × 56 cells; a few percent withdrawn or hidden,
1 % of rows flagged). Then, for CSV and Parquet at 100 000 and 1 000 000 rows, it runs the export the way the site
serves it — Django's WSGI application called in a fresh subprocess, the response iterated to the end — and prints
rows per second, time to first byte, time to the first row, peak RSS of that server process (and its peak RSS
before the request, after one small warm-up request), and the ratio of the export's time to
`COPY (the same query) TO STDOUT WITH CSV` on the same data. "The same query" is the SQL the ORM builds for the
table (`filters.rows_queryset`); on PostgreSQL the CSV and Parquet exports are themselves a COPY of that query with
booleans and datetimes spelled out (see analysis/datasets/pg_copy.py).

Targets: CSV ratio ≤ 2; memory flat (≤ 150 MB RSS) as rows grow from 100 thousand to 1 million.

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb .venv/bin/python bench/export_benchmark.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
import _seed  # noqa: E402  (bench/_seed.py: benchmark databases, shared with browse_benchmark.py)

BENCH_DB = "nvmedb_bench_datasets"
RUNS = 800
ROUNDS = 25
SIZES = (100_000, 1_000_000)
FORMATS = ("csv", "parquet")


def bench_url() -> str:
    return _seed.bench_database_url(BENCH_DB)


def seed() -> None:
    """Parent rows through the ORM (a few thousand), measurements and flags in two INSERT … SELECT statements."""
    from django.core.management import call_command
    from django.db import connection

    from analysis.models import Measurement, Round
    from analysis.tests import factories

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    user = factories.UserFactory(username="bench")
    vendors = [factories.VendorFactory(name=f"Bench Vendor {i}") for i in range(10)]
    drives = [factories.DriveModelFactory(vendor=vendors[i % 10]) for i in range(60)]
    hosts = [factories.HostFactory() for _ in range(20)]
    links = [factories.PcieLinkFactory(generation=g, speed_gts={3: 8.0, 4: 16.0, 5: 32.0}[g]) for g in (3, 4, 5)]
    runs = []
    for i in range(RUNS):
        status, hidden = ("withdrawn", False) if i % 25 == 0 else ("published", i % 40 == 1)
        drive = drives[i % len(drives)]
        runs.append(
            factories.TestRunFactory(
                submission=factories.SubmissionFactory(uploader=user, status=status, hidden=hidden),
                drive_model=drive,
                firmware=factories.FirmwareFactory(drive_model=drive, revision=f"FW{i % 3}"),
                host=hosts[i % len(hosts)],
                pcie_link=links[i % len(links)],
                steady_round=ROUNDS,
            )
        )
    Round.objects.bulk_create(
        [Round(test_run=run, phase="wdpc", number=n) for run in runs for n in range(1, ROUNDS + 1)], batch_size=5000
    )
    table = Measurement._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {table} (round_id, test_run_id, drive_model_id, run_key, block_size_bytes, read_pct, threads,
                iodepth, read_iops, write_iops, total_iops, read_bw_bytes_per_s, write_bw_bytes_per_s,
                total_bw_bytes_per_s, read_bytes, write_bytes, lat_mean_ns, lat_max_ns, lat_p99_ns, lat_p9999_ns,
                percentiles_ns, runtime_s, temperature_before_k, temperature_after_k, link_utilization,
                in_steady_window, started_at, raw_file, json_path, missing, clat_percentiles_ns)
            SELECT r.id, r.test_run_id, t.drive_model_id,
                format('iops-r%s-rw%s-bs%s', r.number, mix, bs), bs, mix, 4, 32,
                v.total * mix / 100.0, v.total * (100 - mix) / 100.0, v.total,
                v.total * mix / 100.0 * bs, v.total * (100 - mix) / 100.0 * bs, v.total * bs,
                (v.total * mix / 100.0 * bs * 60)::bigint, (v.total * (100 - mix) / 100.0 * bs * 60)::bigint,
                128 / v.total * 1e9, 9e6 + r.id % 1000, 9e5 + r.id % 777, 3e6 + r.id % 555,
                '{{}}'::jsonb, 60.0, 318.0 + r.number % 7, 325.0 + r.number % 9, LEAST(v.total * bs / 7e9, 1.0),
                r.number > {ROUNDS - 5}, now() - (r.id || ' seconds')::interval,
                format('fio/iops-r%s-rw%s-bs%s.json', r.number, mix, bs), '$.jobs[*]', '{{}}'::jsonb, '{{}}'::jsonb
            FROM analysis_round r
            JOIN analysis_testrun t ON t.id = r.test_run_id
            CROSS JOIN unnest(ARRAY[100, 95, 65, 50, 35, 5, 0]) AS mix
            CROSS JOIN unnest(ARRAY[1048576, 131072, 65536, 32768, 16384, 8192, 4096, 512]) AS bs
            CROSS JOIN LATERAL (SELECT 800000 * power(4096.0 / GREATEST(bs, 4096), 0.8)
                                       * (0.4 + 0.6 * mix / 100.0) * (1 + 0.01 * r.number) + r.id % 97 AS total) v
            """
        )
        cursor.execute(
            f"""
            INSERT INTO analysis_flag (submission_id, test_run_id, measurement_id, kind, reason)
            SELECT t.submission_id, m.test_run_id, m.id, 'bus_bound', 'benchmark flag'
            FROM {table} m JOIN analysis_testrun t ON t.id = m.test_run_id WHERE m.id % 100 = 0
            """
        )
        cursor.execute("ANALYZE")
    print(f"seeded {Measurement.objects.count():,} measurement rows in {time.perf_counter() - started:.0f} s")


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(fmt: str, size: int) -> None:
    """In a fresh process: one export through the WSGI application; prints its figures as JSON."""
    import io

    from django.core.wsgi import get_wsgi_application

    application = get_wsgi_application()

    def environ(rows: int) -> dict:
        return {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": f"/datasets/measurements.{fmt}",
            "QUERY_STRING": f"_size={rows}",
            "SERVER_NAME": "localhost",
            "SERVER_PORT": "80",
            "HTTP_HOST": "localhost",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(),
            "wsgi.errors": sys.stderr,
        }

    # A warm server: URLs, views and writers loaded by one small request first.
    warm_up = application(environ(1), lambda s, headers, exc_info=None: None)
    b"".join(warm_up)
    warm_up.close()
    status = []
    before = rss_mb()
    started = time.perf_counter()
    result = application(environ(size), lambda s, headers, exc_info=None: status.append(s))
    first_byte = first_row = None
    total = 0
    for chunk in result:
        if chunk and first_byte is None:
            first_byte = time.perf_counter() - started
        elif chunk and first_row is None:
            first_row = time.perf_counter() - started
        total += len(chunk)
    result.close()
    elapsed = time.perf_counter() - started
    print(
        json.dumps(
            {
                "status": status[0],
                "seconds": elapsed,
                "first_byte_s": first_byte,
                "first_row_s": first_row,
                "bytes": total,
                "rss_before_mb": before,
                "peak_rss_mb": rss_mb(),
            }
        )
    )


def copy_seconds(size: int) -> tuple[float, int]:
    """PostgreSQL's own COPY of the export's query as the ORM builds it for every format (`rows_queryset`)."""
    from django.db import connection

    from analysis.datasets.filters import Filters, rows_queryset
    from analysis.datasets.tables import TABLES

    sql, params = rows_queryset(TABLES["measurements"], Filters(size=size)).query.sql_with_params()
    connection.ensure_connection()
    started = time.perf_counter()
    total = 0
    with (
        connection.connection.cursor() as cursor,
        cursor.copy(f"COPY ({sql}) TO STDOUT WITH CSV HEADER", params) as copy,
    ):
        for data in copy:
            total += len(data)
    return time.perf_counter() - started, total


def run_worker(fmt: str, size: int, env: dict) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--worker", fmt, str(size)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(output.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reseed", action="store_true", help="Drop and seed the benchmark database again.")
    parser.add_argument("--worker", nargs=2, metavar=("FORMAT", "ROWS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if args.worker:
        _seed.setup_django(url)
        worker(args.worker[0], int(args.worker[1]))
        return
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL server (postgres://user:password@host:port/name).")
    must_seed = _seed.ensure_database(bench_url(), reseed=args.reseed)
    _seed.setup_django(bench_url())
    if must_seed:
        seed()
    from analysis.datasets.filters import Filters, rows_queryset
    from analysis.datasets.tables import TABLES

    public_rows = rows_queryset(TABLES["measurements"], Filters()).count()
    print(f"public measurement rows: {public_rows:,}")
    env = {**os.environ, "DATABASE_URL": bench_url(), "DJANGO_SETTINGS_MODULE": "nvmedb.settings.test"}
    print(
        f"{'format':<8} {'rows':>9} {'seconds':>8} {'rows/s':>9} {'TTFB ms':>8} {'1st row ms':>10} "
        f"{'RSS before':>10} {'peak RSS':>9} {'MB out':>7} {'COPY s':>7} {'ratio':>6}"
    )
    for size in SIZES:
        copy_s, copy_bytes = copy_seconds(size)
        for fmt in FORMATS:
            figures = run_worker(fmt, size, env)
            assert figures["status"].startswith("200"), figures
            rows = min(size, public_rows)
            print(
                f"{fmt:<8} {rows:>9,} {figures['seconds']:>8.2f} {rows / figures['seconds']:>9,.0f} "
                f"{figures['first_byte_s'] * 1000:>8.1f} {figures['first_row_s'] * 1000:>10.1f} "
                f"{figures['rss_before_mb']:>8.0f}MB {figures['peak_rss_mb']:>7.0f}MB "
                f"{figures['bytes'] / 1e6:>7.1f} {copy_s:>7.2f} {figures['seconds'] / copy_s:>6.2f}"
            )
        print(
            f"{'COPY':<8} {min(size, public_rows):>9,} {copy_s:>8.2f}  (CSV of the same query: {copy_bytes / 1e6:.1f} MB)"
        )
    print("targets: CSV ratio <= 2; peak RSS <= 150 MB and flat from 100k to 1M rows")


if __name__ == "__main__":
    main()
