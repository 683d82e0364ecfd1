"""How fast, how cheaply and how independently the live exports stream.

Seeds a separate database (--db-name, nvmedb_bench_datasets by default, on the DATABASE_URL server; kept between
runs, --reseed rebuilds it) with about 1.1 million measurement rows (800 IOPS runs × 25 rounds × 56 cells; a few
percent withdrawn or hidden, 1 % of rows flagged). Then, for every format at each size (100 000 and 1 000 000 rows by
default), it runs the export the way the site serves it — Django's WSGI application called in a fresh subprocess, the
response iterated to the end — and prints its time, time to first byte, the server process's CPU time (and its
PostgreSQL backend's, read from /proc: the server runs on this machine) and peak RSS (VmHWM), beside:

- COPY: `COPY (plain public measurement rows) TO STDOUT WITH CSV`, the measurement table's own published columns for
  the public runs, no joins to drives, hosts or flags: the physical limit of reading those rows. (Not the export's
  own query, whose ratio to itself would be near 1 by construction.)
- COPY of the export's own query (a second reference: what PostgreSQL alone spends on the same bytes). The CSV
  export's own query reads the stored CSV records of one table, the prepared export rows (datasets.export_rows,
  datasets.csv_lines), with `COPY … TO STDOUT` in text format.
- psql CPU: the CPU time `psql` spends receiving the export's own records (the same bytes as the CSV export, less
  its header) through that `COPY … TO STDOUT`, written to a pipe this script drains.

The peak RSS printed there is of that fresh process, which served nothing else. The memory goal is judged
(unless --no-memory) in a production worker instead (bench/_worker_memory.py): gunicorn from gunicorn.conf.py with
production settings and the Redis cache (REDIS_URL; without it this part is skipped), one worker that serves the
site's pages and then one export, for every format at each size; its VmHWM is read from /proc, and the peak of the
process a Parquet export runs in (datasets.parquet_pipe) is printed beside it.

The same worker's CSV download is timed over HTTP and judged against the same COPY (the in-process time above has no
web server in it).

Then (unless --no-pages, and with REDIS_URL) the production web server beside exports: gunicorn started from
gunicorn.conf.py with production settings and the Redis cache on 127.0.0.1 (a free port), three concurrent CSV
downloads of the largest size, and one client requesting the busiest drive's page one request at a time while they
stream; it prints the page's p95 idle and beside the exports.
`--worker-class sync` runs the same scenario with the old sync workers for comparison.

Goals (issues 12 and 24), each printed with its verdict: CSV time ≤ 1.5 × COPY of the plain rows (in-process and over
HTTP); server CPU (web
worker + its database backend) ≤ 2 × psql's plus its COPY's backend for the same bytes (CSV); the production worker's
peak RSS ≤ 150 MB for every format, flat (≤ 10 MB more) from the smallest to the largest size; drive page p95
≤ 200 ms while three exports stream. It exits 1 when one is missed (bench/_report.py), and prints the load average at
its start and end. The data set is bench/_seed.py's seed_export (--runs, --rounds); BENCH_SMOKE=1 seeds a fresh one
of 2,800 rows and exports 2,000 of them: a check that it runs, not of its goals. Without PostgreSQL it says it is
skipped and exits 0.

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/export_benchmark.py
    … bench/export_benchmark.py --sizes 100000 --formats csv parquet      # a quicker look
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
import _seed  # noqa: E402  (bench/_seed.py: benchmark databases, shared with browse_benchmark.py)
import _worker_memory  # noqa: E402
from _report import SMOKE, Report  # noqa: E402
from browse_benchmark import Server  # noqa: E402

BENCH_DB = "nvmedb_bench_datasets"
RUNS = 800
ROUNDS = 25


def bench_url(name: str = BENCH_DB) -> str:
    return _seed.bench_database_url(name)


def seed(runs: int = RUNS, rounds: int = ROUNDS) -> None:
    """bench/_seed.py's seed_export on the migrated database: parent rows through the factories, measurements and
    flags through the models (COPY)."""
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    _seed.seed_export(runs=runs, rounds=rounds)


SIZES = (100_000, 1_000_000)
FORMATS = ("csv", "parquet", "json", "ndjson")
GOAL_COPY_RATIO = _worker_memory.GOAL_COPY_RATIO
GOAL_CPU_RATIO = 2.0
GOAL_PAGE_P95_MS = 200
CONCURRENT_EXPORTS = 3
READ_BYTES = 64 * 1024


def rss_mb() -> float:
    """This process's peak resident memory. Linux's VmHWM belongs to the process image started by exec; getrusage's
    ru_maxrss also counts the process it was forked from (Python spawns with vfork), so every worker reported at
    least this script's own memory, 136 MB where the worker itself held 103 MB."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def backend_cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of PostgreSQL backend `pid` so far, from /proc (the server runs on this machine);
    NaN when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(who=resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


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

    from django.db.backends.signals import connection_created

    backends: list[int] = []

    def note_backend(sender, connection, **kwargs) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backends.append(cursor.fetchone()[0])

    connection_created.connect(note_backend)
    # A warm server: URLs, views and writers loaded by one small request first.
    warm_up = application(environ(1), lambda s, headers, exc_info=None: None)
    b"".join(warm_up)
    warm_up.close()
    status = []
    before = rss_mb()
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    result = application(environ(size), lambda s, headers, exc_info=None: status.append(s))
    first_byte = first_row = None
    total = chunks = 0
    for chunk in result:
        if chunk and first_byte is None:
            first_byte = time.perf_counter() - started
        elif chunk and first_row is None:
            first_row = time.perf_counter() - started
        total += len(chunk)
        chunks += 1
    db_cpu = backend_cpu_seconds(backends[-1]) if backends else float("nan")  # before closing ends the backend
    result.close()
    elapsed = time.perf_counter() - started
    print(
        json.dumps(
            {
                "status": status[0],
                "seconds": elapsed,
                "cpu_s": cpu_seconds() - cpu_before,
                "db_cpu_s": db_cpu,  # the export's PostgreSQL backend (this request's own connection)
                "first_byte_s": first_byte,
                "first_row_s": first_row,
                "bytes": total,
                "chunks": chunks,
                "rss_before_mb": before,
                "peak_rss_mb": rss_mb(),
            }
        )
    )


def plain_rows_query(size: int) -> tuple[str, tuple]:
    """The public measurement rows with the measurement table's own published columns: no joins beyond what
    deciding 'public' needs, no flags."""
    from analysis.selectors import public_measurements
    from datasets.tables import MEASUREMENT_COLUMNS

    own = [c.source for c in MEASUREMENT_COLUMNS if isinstance(c.source, str) and "__" not in c.source]
    return public_measurements().order_by("pk").values_list(*own)[:size].query.sql_with_params()


def export_csv_query(size: int) -> tuple[str, tuple]:
    """The CSV export's own query: the stored CSV records of the export rows (datasets.export_rows), sent by COPY in
    text format (EXPORT_COPY)."""
    from datasets import export_rows
    from datasets.filters import Filters

    return export_rows.records(Filters(size=size)).query.sql_with_params()


PLAIN_COPY = "WITH CSV HEADER"
EXPORT_COPY = "WITH (FORMAT text)"


def copy_seconds(sql: str, params: tuple) -> tuple[float, int]:
    return copy_figures(sql, params)[:2]


def copy_figures(sql: str, params: tuple, options: str = PLAIN_COPY) -> tuple[float, int, float]:
    """Seconds and bytes of `COPY (sql) TO STDOUT {options}`, and the CPU its PostgreSQL backend spent."""
    from django.db import connection

    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    db_before = backend_cpu_seconds(pid)
    started = time.perf_counter()
    total = 0
    with (
        connection.connection.cursor() as cursor,
        cursor.copy(f"COPY ({sql}) TO STDOUT {options}", params) as copy,
    ):
        for data in copy:
            total += len(data)
    return time.perf_counter() - started, total, backend_cpu_seconds(pid) - db_before


def psql_cpu(url: str, sql: str, params: tuple, options: str = PLAIN_COPY) -> tuple[float, int]:
    """CPU seconds (user + system) of `psql` receiving `COPY (sql) TO STDOUT {options}`, and the bytes it wrote."""
    import psycopg

    with psycopg.connect(url) as conn:
        literal = psycopg.ClientCursor(conn).mogrify(sql, params)
    process = subprocess.Popen(
        ["psql", "-X", "-q", url, "-c", f"COPY ({literal}) TO STDOUT {options}"], stdout=subprocess.PIPE
    )
    total = 0
    while data := process.stdout.read(READ_BYTES):
        total += len(data)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        sys.exit(f"psql failed (exit {process.returncode})")
    return usage.ru_utime + usage.ru_stime, total


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


def formats_table(sizes: list[int], formats: list[str], url: str, env: dict, public_rows: int) -> list[tuple]:
    """Every format at every size; returns the goals summary: (figure, verdict or None, goal)."""
    print(
        f"{'format':<8} {'rows':>9} {'seconds':>8} {'rows/s':>9} {'TTFB ms':>8} {'chunks':>7} {'CPU s':>6} "
        f"{'RSS before':>10} {'peak RSS':>9} {'MB out':>7}"
    )
    summary = []
    for size in sizes:
        rows = min(size, public_rows)
        copy_s, copy_bytes = copy_seconds(*plain_rows_query(size))
        own_s, own_bytes, own_db_s = copy_figures(*export_csv_query(size), EXPORT_COPY)
        psql_s, psql_bytes = psql_cpu(url, *export_csv_query(size), EXPORT_COPY)
        for fmt in formats:
            figures = run_worker(fmt, size, env)
            assert figures["status"].startswith("200"), figures
            print(
                f"{fmt:<8} {rows:>9,} {figures['seconds']:>8.2f} {rows / figures['seconds']:>9,.0f} "
                f"{figures['first_byte_s'] * 1000:>8.1f} {figures['chunks']:>7,} {figures['cpu_s']:>6.2f} "
                f"{figures['rss_before_mb']:>8.0f}MB {figures['peak_rss_mb']:>7.0f}MB {figures['bytes'] / 1e6:>7.1f}"
            )
            # server CPU: the worker's and its PostgreSQL backend's, against psql's and the same COPY's backend
            server_s, reference_s = figures["cpu_s"] + figures["db_cpu_s"], psql_s + own_db_s
            ratio, cpu_ratio = figures["seconds"] / copy_s, server_s / reference_s
            if fmt != "csv":  # no goal: how far each format is from the physical limit and from psql
                summary.append(
                    (f"{fmt} {rows:,} rows: {figures['seconds']:.2f} s = {ratio:.2f} x COPY of the plain public rows, "
                     f"server CPU {server_s:.2f} s = {cpu_ratio:.2f} x psql's (no goal)", None, "")
                )  # fmt: skip
            else:
                summary.append(
                    (f"csv {rows:,} rows: {figures['seconds']:.2f} s = {ratio:.2f} x COPY of the plain public rows "
                     f"({copy_s:.2f} s; a COPY of the export's own query takes {own_s:.2f} s)",
                     ratio <= GOAL_COPY_RATIO, f"<= {GOAL_COPY_RATIO}")
                )  # fmt: skip
                summary.append(
                    (f"csv {rows:,} rows: server CPU (web {figures['cpu_s']:.2f} s + database {figures['db_cpu_s']:.2f} s)"
                     f" = {cpu_ratio:.2f} x psql's {psql_s:.2f} s + its COPY's database {own_db_s:.2f} s for the same "
                     f"{psql_bytes / 1e6:.0f} MB", cpu_ratio <= GOAL_CPU_RATIO,
                     f"<= {GOAL_CPU_RATIO}")
                )  # fmt: skip
        print(f"{'COPY':<8} {rows:>9,} {copy_s:>8.2f}  (plain public rows: {copy_bytes / 1e6:.1f} MB of CSV)")
        print(f"{'COPY':<8} {rows:>9,} {own_s:>8.2f}  (the CSV export's own query: {own_bytes / 1e6:.1f} MB)")
        print(f"{'psql':<8} {rows:>9,} {'':>8} {'':>9} {'':>8} {'':>7} {psql_s:>6.2f}  (the CSV export's query)")
    return summary


def _get(port: int, path: str, timeout: float = 300) -> tuple[int, int]:
    """GET `path`, read the body to the end in READ_BYTES reads; (status, bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        total = 0
        while data := response.read(READ_BYTES):
            total += len(data)
        return response.status, total
    finally:
        conn.close()


def _timed_get(port: int, path: str) -> float:
    started = time.perf_counter()
    status, _ = _get(port, path, timeout=120)
    if status != 200:
        raise RuntimeError(f"{path} answered {status}")
    return (time.perf_counter() - started) * 1000


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def busiest_drive_slug() -> str:
    from django.db.models import Count

    from analysis.selectors import public_test_runs

    return public_test_runs().values("drive_model__slug").annotate(n=Count("id")).order_by("-n")[0]["drive_model__slug"]


def pages_beside_exports(size: int, database_url: str, worker_class: str | None, public_rows: int) -> list[tuple]:
    """gunicorn from gunicorn.conf.py with production settings and the Redis cache (browse_benchmark.Server) on
    loopback; a drive page's p95 alone, then beside three CSV downloads."""
    if not os.environ.get("REDIS_URL"):
        return [("drive page beside exports not measured: gunicorn with production settings needs REDIS_URL", None, "")]
    page = f"/drives/{busiest_drive_slug()}/"
    server = Server(database_url, _worker_memory.redis_url())
    if worker_class:  # gunicorn runs gthread for sync with threads > 1
        server.env["GUNICORN_CMD_ARGS"] = f"-k {worker_class}" + (" --threads 1" if worker_class == "sync" else "")
    with server:
        port = server.port
        for _ in range(12):  # every worker process warm, its cache filled
            _timed_get(port, page)
        idle = [_timed_get(port, page) for _ in range(10 if SMOKE else 40)]
        downloads: list[tuple[int, int, float]] = []

        def download() -> None:
            started = time.perf_counter()
            status, total = _get(port, f"/datasets/measurements.csv?_size={size}")
            downloads.append((status, total, time.perf_counter() - started))

        threads = [threading.Thread(target=download) for _ in range(CONCURRENT_EXPORTS)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)  # the exports have started streaming
        busy = [_timed_get(port, page)]  # at least one, however soon small exports end
        while any(thread.is_alive() for thread in threads):
            busy.append(_timed_get(port, page))
            time.sleep(0.05)
        for thread in threads:
            thread.join()
    name = worker_class or "gunicorn.conf.py (gthread)"
    rows = min(size, public_rows)
    print(
        f"\ngunicorn [{name}] on 127.0.0.1, drive page {page}: alone median {statistics.median(idle):.0f} ms, "
        f"p95 {p95(idle):.0f} ms ({len(idle)} requests); beside {CONCURRENT_EXPORTS} concurrent {rows:,}-row CSV "
        f"exports median {statistics.median(busy):.0f} ms, p95 {p95(busy):.0f} ms, max {max(busy):.0f} ms "
        f"({len(busy)} requests)"
    )
    for status, total, seconds in downloads:
        print(f"  export: HTTP {status}, {total / 1e6:.1f} MB in {seconds:.1f} s")
    if not all(status == 200 for status, _, _ in downloads):
        raise RuntimeError(f"an export beside the pages failed: {downloads}")
    return [
        (f"[{name}] drive page p95 beside {CONCURRENT_EXPORTS} x {rows:,}-row exports {p95(busy):.0f} ms, alone "
         f"{p95(idle):.0f} ms", p95(busy) <= GOAL_PAGE_P95_MS, f"<= {GOAL_PAGE_P95_MS} ms beside them")
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reseed", action="store_true", help="Drop and seed the benchmark database again.")
    parser.add_argument("--db-name", default=BENCH_DB, help=f"Benchmark database name (default {BENCH_DB}).")
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES), help="Row counts (default 100k 1M).")
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    parser.add_argument("--no-formats", action="store_true", help="Only the pages-beside-exports scenario.")
    parser.add_argument("--no-pages", action="store_true", help="Skip the pages-beside-exports scenario.")
    parser.add_argument("--no-memory", action="store_true", help="Skip the production worker's memory per export.")
    parser.add_argument("--worker-class", help="gunicorn worker class for the scenario (default: the config's).")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"IOPS runs to seed (default {RUNS})")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds of 56 cells per run (default {ROUNDS})")
    parser.add_argument("--worker", nargs=2, metavar=("FORMAT", "ROWS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if args.worker:
        _seed.setup_django(url)
        worker(args.worker[0], int(args.worker[1]))
        return 0
    if not url.startswith("postgres"):
        print("export benchmark skipped: it compares with COPY and psql, so DATABASE_URL must be PostgreSQL")
        return 0
    if SMOKE:  # a fresh database of 2,800 rows, one small size
        args.db_name, args.runs, args.rounds, args.sizes = f"{args.db_name}_smoke", 10, 5, [2000]
        args.reseed = True
    goals = Report("export benchmark")
    database_url = bench_url(args.db_name)
    must_seed = _seed.ensure_database(database_url, reseed=args.reseed)
    _seed.setup_django(database_url)
    if must_seed:
        seed(args.runs, args.rounds)
    else:  # a database seeded by an older checkout: bring its schema and its drive summaries up to date
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("refresh_aggregates", "--missing", stdout=open(os.devnull, "w"))  # noqa: SIM115
        call_command("rebuild_export_rows", "--missing", stdout=open(os.devnull, "w"))  # noqa: SIM115
    from datasets.filters import Filters, rows_queryset
    from datasets.tables import TABLES

    public_rows = rows_queryset(TABLES["measurements"], Filters()).count()
    print(f"public measurement rows: {public_rows:,}")
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "nvmedb.settings.test"}
    summary = []
    if not args.no_formats:
        summary += formats_table(sorted(args.sizes), args.formats, database_url, env, public_rows)
    if not args.no_memory:
        summary += _worker_memory.memory_goals(
            database_url, args.formats, sorted(args.sizes), public_rows,
            lambda size: copy_seconds(*plain_rows_query(size))[0],
        )  # fmt: skip
    if not args.no_pages:
        summary += pages_beside_exports(max(args.sizes), database_url, args.worker_class, public_rows)
    print("\ngoals:")
    for text, ok, goal in summary:
        if ok is None:
            goals.note(text)
        else:
            goals.check(text, ok, goal=goal)
    return goals.finish()


if __name__ == "__main__":
    sys.exit(main())
