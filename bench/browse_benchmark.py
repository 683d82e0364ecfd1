"""Latency of the browse pages, cold and warm, in-process and over HTTP, on realistically large PostgreSQL datasets.

For each size (measurement rows; default 100,000 and 1,000,000) it seeds its own database beside DATABASE_URL
(`nvmedb_bench_browse_pages_<size>`, kept between runs; --reseed rebuilds) with bench/_seed.py: 20 drive models,
one of them (`bench-big-drive`) with one submission per 1,000 rows (1,000 at 1 M). Each size runs in its own process:

- in-process (Django's test client: middleware, view, ORM, template; no network): each page warm (the same URL
  again) and cold: before every cold request one submission of the big drive changes through the real services
  (withdrawn with submissions.services.submission_withdraw, then held again and published with
  submission_approve, alternately) and the cache is cleared, so the request is the first after a data change;
- over HTTP against gunicorn started from gunicorn.conf.py with production settings (DEBUG off, the Redis cache,
  WhiteNoise's manifest) on loopback, with a bounded load generator (threads with one httpx client each): every page
  warm and cold at concurrency 1; the drive page at concurrency 8, warm (req/s) and cold (a data change and a flushed
  cache, then 8 clients at once). Warm requests reuse a kept-alive connection; every cold request opens a new one, as
  a reader arriving after a change does, so it meets whichever worker gunicorn gives it.

Every size's process, database and server stay up for the whole run, and the sizes take --rounds rounds (default
10) in turn ascending and descending (100k, 1M, 1M, 100k, ...), each round with its share of the requests; each
page's samples are pooled per size. The growth so compares sizes measured within seconds of each other: a machine
that drifts during the run (another job, this one's own caches) is not mistaken for growth. (With each size's
samples taken in one or two stretches of minutes, the filtered drive list's first requests at 100 k rows measured
15.5 to 16.8 ms p50 from one stretch to the next on a quiet machine, its p95 18 to 23 ms.) Each
page gets 100 warm and 40 cold requests per size (--requests, --cold-requests), so a p95 is not one stray request. It
prints each goal of issue 12 beside its figure with PASS / FAIL, the queries per page at each size and the growth
of each p95 from the smallest to the largest size, and exits 1 when a goal is missed. Timings depend on what else the
machine runs: the load average is printed at the start and the end, and in-process each page's CPU time in this
process (Django, not PostgreSQL), which load inflates less than wall time. Over HTTP needs PostgreSQL and REDIS_URL
(the Redis database NVMEDB_BENCH_REDIS_DB, default 7, is flushed); without them it runs in-process only, on SQLite
too (DATABASE_URL=sqlite:///...: the databases are files in the var folder). BENCH_SMOKE=1: a fresh database of
5,000 rows and 4 drives, a few requests: a check that it runs, not of its goals (one size, so no growth).

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/browse_benchmark.py --sizes 100000,1000000
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _seed  # noqa: E402
from _report import SMOKE, Report  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BENCH_DB_PREFIX = "nvmedb_bench_browse_pages"
DRIVE_P95_MS = 50.0
LIST_P95_MS = 100.0
CONCURRENT_CLIENTS = 8
CONCURRENT_P95_MS = 100.0
CONCURRENT_RPS = 200.0
GROWTH = 1.2
# new connections at once while warming up: more than gunicorn.conf.py's workers × threads (3 × 8), so every thread
# of every worker serves some, as they have in a server that has run for a while
WARM_UP_CLIENTS = 32
# the benchmark's gunicorn caches in this database of REDIS_URL's server, flushed for cold requests
REDIS_BENCH_DB = int(os.environ.get("NVMEDB_BENCH_REDIS_DB", "7"))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def figures(timings: list[float]) -> dict:
    return {"p50": statistics.median(timings), "p95": percentile(timings, 0.95), "n": len(timings)}


# --- one size, in its own process ---------------------------------------------------------------------------------


class DataChange:
    """Alternately withdraws one public submission of the big drive and publishes it again, through the services
    that publish and withdraw (each refreshes the drive's aggregates and summary in its transaction)."""

    def __init__(self, drive_slug: str):
        from analysis.selectors import public_submissions

        self.submission = (
            public_submissions().filter(test_runs__drive_model__slug=drive_slug).distinct().order_by("created").first()
        )
        self.withdrawn = False
        self.write_ms: list[float] = []

    def __call__(self) -> None:
        from django.contrib.auth import get_user_model

        from submissions.models import Submission
        from submissions.services import submission_approve, submission_withdraw

        started = time.perf_counter()
        if not self.withdrawn:
            submission_withdraw(submission=self.submission, by=self.submission.uploader)
        else:  # a withdrawn submission cannot come back by itself: held again, then approved by staff
            Submission.objects.filter(pk=self.submission.pk).update(status="held", withdrawn_at=None)
            staff = get_user_model().objects.filter(is_staff=True).first() or get_user_model().objects.create_user(
                username="bench-staff", is_staff=True
            )
            submission_approve(submission=self.submission, by=staff)
        self.withdrawn = not self.withdrawn
        self.write_ms.append((time.perf_counter() - started) * 1000)

    def restore(self) -> None:
        if self.withdrawn:
            self()


class QueryCounter:
    def __init__(self):
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def in_process(pages: dict[str, str], change: DataChange, requests: int, cold_requests: int) -> dict:
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client

    client = Client(SERVER_NAME="localhost")
    found = {}
    for name, url in pages.items():
        assert client.get(url).status_code == 200, url
        warm, warm_cpu = [], []
        for _ in range(requests):
            started, started_cpu = time.perf_counter(), time.process_time()
            assert client.get(url).status_code == 200
            warm.append((time.perf_counter() - started) * 1000)
            warm_cpu.append((time.process_time() - started_cpu) * 1000)
        cold, cold_cpu, cold_queries = [], [], 0
        for _ in range(cold_requests):
            change()
            cache.clear()
            # the change ran its tasks here (eagerly); in a deployment a worker runs them and a web process never
            # holds their garbage: collected before the clock starts (left, a full collection of it, ~150 ms, fell
            # into every eighth first request at 1 M rows)
            gc.collect()
            counter = QueryCounter()
            started, started_cpu = time.perf_counter(), time.process_time()
            with connection.execute_wrapper(counter):
                assert client.get(url).status_code == 200
            cold.append((time.perf_counter() - started) * 1000)
            cold_cpu.append((time.process_time() - started_cpu) * 1000)
            cold_queries = max(cold_queries, counter.count)
        counter = QueryCounter()
        with connection.execute_wrapper(counter):
            client.get(url)
        found[name] = {"warm": warm, "warm_cpu": warm_cpu, "cold": cold, "cold_cpu": cold_cpu,
                       "queries": counter.count, "cold_queries": cold_queries}  # fmt: skip
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """gunicorn from gunicorn.conf.py with production settings, on loopback."""

    def __init__(self, database_url: str, redis_url: str):
        self.port = _free_port()
        self.redis_url = redis_url.rsplit("/", 1)[0] + f"/{REDIS_BENCH_DB}"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "nvmedb.settings.production",
            "DATABASE_URL": database_url,
            "REDIS_URL": self.redis_url,
            "SECRET_KEY": "browse-benchmark-only",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "false",
            "SECURE_COOKIES": "false",
            "GUNICORN_BIND": f"127.0.0.1:{self.port}",
            "LOG_LEVEL": "WARNING",
        }
        self.log_path = Path(tempfile.gettempdir()) / f"nvmedb-browse-benchmark-gunicorn-{self.port}.log"

    def __enter__(self) -> Server:
        import httpx

        subprocess.run(  # WhiteNoise's manifest, as a deployment has it
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=REPO, env=self.env, check=True
        )
        self.flush()
        self.log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "nvmedb.wsgi"],
            cwd=REPO, env=self.env, stdout=self.log, stderr=self.log,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url("/drives/"), timeout=10).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"gunicorn did not answer; see {self.log_path}")
            time.sleep(0.3)

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def flush(self) -> None:
        import redis

        redis.Redis.from_url(self.redis_url).flushdb()


def _timed(client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"{url} answered {response.status_code}")
    return elapsed


def _first_request(url: str) -> float:
    """One request on a new connection, as a reader arriving after a change makes it: gunicorn hands it to any
    worker, not to the one a kept-alive connection already holds (the connection is made inside the timing)."""
    import httpx

    with httpx.Client(timeout=60) as client:
        return _timed(client, url)


def concurrently(server: Server, path: str, clients: int, per_client: int) -> tuple[list[float], float]:
    """`clients` threads, each with its own connection, each sending `per_client` GETs back to back: latencies and
    requests per second over the whole burst."""
    import httpx

    timings: list[float] = []
    lock, start = threading.Lock(), threading.Barrier(clients + 1)

    def run() -> None:
        with httpx.Client(timeout=60) as client:
            _timed(client, server.url(path))  # connected and warm before the clock starts
            start.wait()
            mine = [_timed(client, server.url(path)) for _ in range(per_client)]
        with lock:
            timings.extend(mine)

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    return timings, len(timings) / (time.perf_counter() - started)


def cold_concurrently(server: Server, path: str, change: DataChange, clients: int, rounds: int) -> list[float]:
    """`rounds` times: a data change and a flushed cache, then `clients` first requests at once, each on a new
    connection."""
    timings: list[float] = []
    lock = threading.Lock()
    for _ in range(rounds):
        change()
        server.flush()
        gc.collect()  # the change's garbage, held by this process (the clients'), not the server's: see in_process
        gate = threading.Barrier(clients)

        def one(gate: threading.Barrier = gate) -> None:
            import httpx

            with httpx.Client(timeout=60) as client:
                gate.wait()
                elapsed = _timed(client, server.url(path))
            with lock:
                timings.append(elapsed)

        threads = [threading.Thread(target=one) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return timings


def over_http(server: Server, pages: dict[str, str], change: DataChange, requests: int, cold_requests: int) -> dict:
    import httpx

    found: dict = {"c1": {}, "c8": {}}
    for path in pages.values():  # every worker thread has its database connection, every process its imports
        concurrently(server, path, WARM_UP_CLIENTS, 2)
    with httpx.Client(timeout=60) as client:
        for name, path in pages.items():
            _timed(client, server.url(path))
            warm = [_timed(client, server.url(path)) for _ in range(requests)]
            cold = []
            for _ in range(cold_requests):
                change()
                server.flush()
                gc.collect()  # as in cold_concurrently
                cold.append(_first_request(server.url(path)))
            found["c1"][name] = {"warm": warm, "cold": cold}
    drive = pages["drive page"]
    timings, rps = concurrently(server, drive, CONCURRENT_CLIENTS, max(requests // 2, 10))
    cold = cold_concurrently(server, drive, change, CONCURRENT_CLIENTS, max(cold_requests // 2, 3))
    found["c8"]["drive page"] = {"warm": timings, "rps": [rps], "cold": cold}
    return found


def one_size(args) -> None:
    """One size's process: sets up its database, pages and server, then runs one round of every measurement each
    time the parent asks ("round" on stdin), answering with the round's samples as one JSON line (see `Child`)."""
    answer = _answer_channel()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    size = args.size
    url = _seed.bench_database_url(f"{args.db_prefix}_{size}")
    must_seed = _seed.ensure_database(url, reseed=args.reseed)
    _seed.setup_django(url)
    _seed.migrate()
    big_submissions = max(size // 1000, 10)
    if must_seed:
        seeded = _seed.seed(
            drive_models=4 if SMOKE else 20,
            submissions_for_big_model=big_submissions,
            measurements_total=size,
            log=_log,
        )
        _log(f"seeded {seeded.submissions} submissions, {seeded.measurements:,} measurements in {seeded.seconds:.0f} s")
    from django.core.management import call_command

    from analysis.models import DriveModel, Measurement, TestRun

    call_command("refresh_aggregates", "--missing", stdout=open(os.devnull, "w"))  # noqa: SIM115 -- a seed older than summaries
    big = DriveModel.objects.get(slug="bench-big-drive")
    others = list(DriveModel.objects.exclude(pk=big.pk).order_by("slug").values_list("slug", flat=True)[:3])
    pages = {
        "drive page": f"/drives/{big.slug}/",
        "drive page, other": f"/drives/{others[0]}/",
        "drive list": "/drives/",
        "drive list, filtered + sorted": "/drives/?sort=-iops_4k_read&pcie_generation=4&compliance=pts",
        "compare (4 drives)": "/compare/?drives=" + ",".join([big.slug, *others]),
    }
    about = {
        "size": size,
        "measurements": Measurement.objects.count(),
        "big_submissions": TestRun.objects.filter(drive_model=big).values("submission").distinct().count(),
        "big_runs": TestRun.objects.filter(drive_model=big).count(),
    }
    change = DataChange(big.slug)
    try:
        with contextlib.ExitStack() as stack:
            server = None
            if not args.no_http:
                server = stack.enter_context(Server(url, os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"))
            answer(about)
            for command in sys.stdin:
                if command.strip() != "round":
                    break
                _log(f"{size:,} rows: a round in-process" + ("" if server is None else " and over HTTP"))
                result = {**about, "in_process": in_process(pages, change, args.requests, args.cold_requests)}
                if server is not None:
                    result["http"] = over_http(server, pages, change, args.requests, args.cold_requests)
                result["write_ms"], change.write_ms = change.write_ms, []
                answer(result)
    finally:
        change.restore()


def _answer_channel():
    """A private line to the parent on the process's standard output, which from here on is the standard error: what
    the site's code prints (task logs, warnings) cannot mix with the answers."""
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # (anything sys.stdout still buffers goes to stderr too)

    def answer(document: dict) -> None:
        channel.write(json.dumps(document) + "\n")
        channel.flush()

    return answer


def _log(message: str) -> None:  # stderr: the report alone goes to stdout
    print(message, file=sys.stderr, flush=True)


# --- the rounds, merged -------------------------------------------------------------------------------------------


def round_order(sizes: list[int], rounds: int) -> list[int]:
    """The sizes of every round, in turn ascending and descending (100k, 1M, 1M, 100k, ...): a machine that drifts
    (another job starting, a cache warming) weighs on every size alike, instead of on whichever size ran last."""
    order = []
    for number in range(rounds):
        order.extend(sizes if number % 2 == 0 else reversed(sizes))
    return order


class Child:
    """One size's process (`one_size`), alive for the whole run: every size's server and database stay up, so the
    rounds of the sizes alternate within seconds of each other instead of a size's every sample being taken in one
    stretch of minutes (which then compared two stretches of a drifting machine, not two sizes)."""

    def __init__(self, command: list[str]):
        self.process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._answer()  # its first answer: set up (seeded, migrated, its server answering)

    def round(self) -> dict:
        self.process.stdin.write("round\n")
        self.process.stdin.flush()
        return self._answer()

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the benchmark process {self.process.args} ended (exit {self.process.wait()})")
        return json.loads(line)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()  # the end of its commands: it restores its data and stops its server
        self.process.wait(timeout=120)


def merged(runs: list[dict]) -> dict:
    """One size's rounds as one result: each page's samples pooled, then their figures (p50, p95, CPU p50); the
    queries the most any round counted; req/s the median of the rounds'."""

    def pooled(path: tuple) -> list:
        values = []
        for run in runs:
            node = run
            for key in path:
                node = node[key]
            values.extend(node)
        return values

    first = runs[0]
    result = {key: first[key] for key in ("size", "measurements", "big_submissions", "big_runs")}
    result["rounds"] = len(runs)
    result["in_process"] = {}
    for name in first["in_process"]:
        where = ("in_process", name)
        result["in_process"][name] = {
            state: {**figures(pooled((*where, state))), "cpu": statistics.median(pooled((*where, f"{state}_cpu")))}
            for state in ("warm", "cold")
        }
        result["in_process"][name]["queries"] = max(run["in_process"][name]["queries"] for run in runs)
        result["in_process"][name]["cold_queries"] = max(run["in_process"][name]["cold_queries"] for run in runs)
    if all("http" in run for run in runs):
        http = {"c1": {}, "c8": {}}
        for name in first["http"]["c1"]:
            http["c1"][name] = {state: figures(pooled(("http", "c1", name, state))) for state in ("warm", "cold")}
        c8 = ("http", "c8", "drive page")
        http["c8"]["drive page"] = {
            "warm": {**figures(pooled((*c8, "warm"))), "rps": statistics.median(pooled((*c8, "rps")))},
            "cold": figures(pooled((*c8, "cold"))),
        }
        result["http"] = http
    writes = pooled(("write_ms",))
    result["write_ms"] = figures(writes) if writes else None
    return result


# --- the report ---------------------------------------------------------------------------------------------------


def goal_of(page: str) -> float:
    return DRIVE_P95_MS if page.startswith("drive page") else LIST_P95_MS


def report(results: list[dict], goals: Report) -> None:
    def line(text: str, ok: bool | None) -> None:
        if ok is None:
            goals.note(text)
            return
        figure, _, goal = text.rpartition(" goal")
        goals.check(figure.rstrip(","), ok, goal=goal.strip(" :"))

    for r in results:
        print(f"\n== {r['measurements']:,} measurement rows; bench-big-drive: {r['big_submissions']} submissions, "
              f"{r['big_runs']} runs; {r['rounds']} round(s) pooled ==")  # fmt: skip
        if r.get("write_ms"):
            w = r["write_ms"]
            print(f"  (each data change, withdraw or publish with its refresh: p50 {w['p50']:.0f} ms, "
                  f"p95 {w['p95']:.0f} ms)")  # fmt: skip
        for name, f in r["in_process"].items():
            for state in ("cold", "warm"):
                p95 = f[state]["p95"]
                line(f"in-process {state:4} {name:30} p95 {p95:6.1f} ms (p50 {f[state]['p50']:5.1f}, "
                     f"CPU {f[state]['cpu']:4.1f}) goal ≤ {goal_of(name):.0f}", p95 <= goal_of(name))  # fmt: skip
            line(f"in-process queries {name:30} {f['queries']} warm, {f['cold_queries']} cold", None)
        if "http" in r:
            for name, f in r["http"]["c1"].items():
                for state in ("cold", "warm"):
                    p95 = f[state]["p95"]
                    line(f"HTTP c=1  {state:4} {name:30} p95 {p95:6.1f} ms (p50 {f[state]['p50']:5.1f}) "
                         f"goal ≤ {goal_of(name):.0f}", p95 <= goal_of(name))  # fmt: skip
            c8 = r["http"]["c8"]["drive page"]
            for state in ("warm", "cold"):
                p95 = c8[state]["p95"]
                line(f"HTTP c={CONCURRENT_CLIENTS}  {state:4} drive page p95 {p95:6.1f} ms ({c8[state]['n']} requests) "
                     f"goal ≤ {CONCURRENT_P95_MS:.0f}", p95 <= CONCURRENT_P95_MS)  # fmt: skip
            rps = c8["warm"]["rps"]
            line(f"HTTP c={CONCURRENT_CLIENTS}  warm drive page {rps:6.0f} req/s goal ≥ {CONCURRENT_RPS:.0f}",
                 rps >= CONCURRENT_RPS)  # fmt: skip
    if len(results) >= 2:
        small, large = results[0], results[-1]
        factor = large["measurements"] / max(small["measurements"], 1)
        print(f"\n== growth from {small['measurements']:,} to {large['measurements']:,} rows ({factor:.1f}×) ==")
        for name in small["in_process"]:
            for state in ("cold", "warm"):
                a, b = small["in_process"][name][state]["p95"], large["in_process"][name][state]["p95"]
                cpu = large["in_process"][name][state]["cpu"] / small["in_process"][name][state]["cpu"]
                line(f"in-process {state:4} {name:30} p95 {b / a:5.2f}× (CPU p50 {cpu:4.2f}×) goal ≤ {GROWTH}",
                     b / a <= GROWTH)  # fmt: skip
            qa, qb = small["in_process"][name]["cold_queries"], large["in_process"][name]["cold_queries"]
            line(f"queries    cold {name:30} {qa} → {qb}, goal: the same", qa == qb)
        if "http" in small and "http" in large:
            for name in small["http"]["c1"]:
                a, b = small["http"]["c1"][name]["cold"]["p95"], large["http"]["c1"][name]["cold"]["p95"]
                line(f"HTTP c=1  cold {name:30} p95 {b / a:5.2f}× goal ≤ {GROWTH}", b / a <= GROWTH)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="100000,1000000", help="measurement rows, comma-separated (default 100k, 1M)"
    )
    # a p95 of 20 samples is their largest but one: a single stray request decided a growth verdict
    parser.add_argument("--requests", type=int, default=100, help="warm requests per page (default 100)")
    parser.add_argument("--cold-requests", type=int, default=40, help="cold requests per page (default 40)")
    parser.add_argument(
        "--rounds", type=int, default=10,
        help="rounds over the sizes, ascending then descending, each with its share of the requests (default 10)",
    )  # fmt: skip
    parser.add_argument("--reseed", action="store_true", help="drop and re-seed the benchmark databases")
    parser.add_argument("--no-http", action="store_true", help="in-process only (no gunicorn)")
    parser.add_argument("--db-prefix", default=BENCH_DB_PREFIX, help="benchmark databases are <prefix>_<size>")
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)  # one size, in a child process
    args = parser.parse_args()
    if args.size:
        one_size(args)
        return 0
    if SMOKE:  # a fresh database of a few thousand rows and 4 drives, a few requests
        args.sizes, args.requests, args.cold_requests, args.reseed = "5000", 3, 2, True
        args.db_prefix += "_smoke"
    if not args.no_http and not (
        os.environ.get("REDIS_URL") and _seed.bench_database_url(args.db_prefix).startswith("postgres")
    ):
        print("over HTTP skipped: gunicorn with production settings needs PostgreSQL and REDIS_URL (--no-http)")
        args.no_http = True
    goals = Report("browse benchmark")
    sizes = sorted(int(s) for s in args.sizes.split(","))
    rounds = 1 if SMOKE else max(args.rounds, 1)
    print(f"{rounds} round(s) over the sizes, each size's process alive throughout: "
          f"{', '.join(f'{size:,}' for size in round_order(sizes, min(rounds, 2)))}, ...")  # fmt: skip
    runs: dict[int, list[dict]] = {size: [] for size in sizes}
    children: dict[int, Child] = {}
    try:
        for size in sizes:  # one at a time: a size seeding its database does not slow the other's setting up
            children[size] = Child(
                [sys.executable, __file__, "--size", str(size),
                 "--requests", str(-(-args.requests // rounds)),
                 "--cold-requests", str(-(-args.cold_requests // rounds)),
                 "--db-prefix", args.db_prefix, *(["--reseed"] if args.reseed else []),
                 *(["--no-http"] if args.no_http else [])]
            )  # fmt: skip
        for size in round_order(sizes, rounds):
            runs[size].append(children[size].round())
    finally:
        for child in children.values():
            child.close()
    report([merged(runs[size]) for size in sizes], goals)
    return goals.finish()


if __name__ == "__main__":
    sys.exit(main())
