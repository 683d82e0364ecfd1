"""gunicorn settings for the production web server (Dockerfile, docker-compose.yml): `gunicorn -c gunicorn.conf.py
nvmedb.wsgi`.

Threaded workers (gthread): a streamed export holds one thread for as long as the download lasts, so with sync workers
three exports occupied all three workers and a drive page waited 25.9 s behind them. Each worker process serves
GUNICORN_THREADS requests at once, pages between the chunks of the exports. A thread that streams does not stop its
worker's heartbeat, so `timeout` does not cut a long download short as it does a sync worker's.

A streaming export keeps its thread busy in Python between its socket writes, so a page thread of the same worker that
has waited on its database must wait for the interpreter lock after each query: up to the switch interval, 5 ms by
default, each time. Workers use GUNICORN_SWITCH_INTERVAL_MS (1 ms) instead: a drive page's p95 beside three 1 M-row
CSV exports was 135-329 ms (mean 230) with 1 ms against 189-620 ms (mean 418) with 5 ms, in 8 alternating runs of
bench/export_benchmark.py on a loaded 2-core machine.

On PostgreSQL a Parquet export is written by a process of its own (datasets.parquet_pipe), so a worker never loads
pyarrow; on other databases a worker that wrote one keeps it (about 35 MB more). Any worker whose resident memory
has grown past GUNICORN_MAX_RSS_MB after a request is recycled: it stops accepting, finishes the requests it holds
(up to graceful_timeout) and the arbiter starts a fresh one. max_requests (with jitter, so the
workers do not all restart at once) recycles any worker now and then, whatever else may grow slowly. A worker that
served the home page, the drive list, both launch drives' pages, compare, the methodology and a CSV and a JSON export
held 129 MB (SQLite, local settings), below the limit, so pages alone never make a worker recycle after each request.

A worker freezes what it holds once its application is loaded (`gc.freeze()` in post_worker_init): ~139 k objects
(Django, the apps, numpy) that live as long as the process. Left in the collector's oldest generation, each full
collection walked all of them: 99-228 ms in which every thread of the worker stood still, measured with gc callbacks in
the workers serving bench/browse_benchmark.py at 1 M rows (9-33 ms frozen). A frozen object is never examined again,
so a full collection walks only what requests have added since.

Environment: GUNICORN_BIND (0.0.0.0:8000), GUNICORN_WORKERS (3), GUNICORN_THREADS (8), GUNICORN_TIMEOUT (120 s),
GUNICORN_SWITCH_INTERVAL_MS (1), GUNICORN_MAX_RSS_MB (150, the memory goal; 0 never), GUNICORN_MAX_REQUESTS (5000),
GUNICORN_GRACEFUL_TIMEOUT (120 s: a streamed export in progress gets that long to finish when its worker recycles).
Each thread may hold one PostgreSQL connection: workers × threads must stay under the server's max_connections.
"""

import os
import sys

from nvmedb.collector import freeze_long_lived
from nvmedb.env import env_int, env_str

bind = env_str("GUNICORN_BIND", "0.0.0.0:8000")
workers = env_int("GUNICORN_WORKERS", 3)
worker_class = "gthread"
threads = env_int("GUNICORN_THREADS", 8)
timeout = env_int("GUNICORN_TIMEOUT", 120)
switch_interval_ms = env_int("GUNICORN_SWITCH_INTERVAL_MS", 1)
max_rss_mb = env_int("GUNICORN_MAX_RSS_MB", 150)
max_requests = env_int("GUNICORN_MAX_REQUESTS", 5000)
max_requests_jitter = max_requests // 10
graceful_timeout = env_int("GUNICORN_GRACEFUL_TIMEOUT", 120)
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def post_fork(server, worker):
    sys.setswitchinterval(switch_interval_ms / 1000)


def post_worker_init(worker):
    freeze_long_lived()  # what loading left as garbage is freed first, not frozen


def resident_mb() -> float | None:
    """This process's resident memory now (Linux; None elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * PAGE_BYTES / 2**20
    except OSError:
        return None


def post_request(worker, req, environ, resp):
    rss = resident_mb()
    if max_rss_mb and worker.alive and rss is not None and rss > max_rss_mb:
        worker.log.info("worker %s holds %.0f MB (> %s MB): recycled after its requests", worker.pid, rss, max_rss_mb)
        worker.alive = False
