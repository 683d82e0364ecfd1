"""A burst of 200 uploads of one drive model through a real prefork Celery worker at the deployed concurrency (2).

Before the aggregate refresh took the drive model's row lock, 4-10 % of such a burst failed with an IntegrityError on
`aggregate_once_per_level` and waited ~32 min for the requeue. This prints how many were published, how many needed
more than one attempt, and whether the worker logged an IntegrityError, with the time the burst took.

Needs PostgreSQL (DATABASE_URL=postgres://...; it creates and drops its own database) and Redis (REDIS_URL; it uses
a queue of its own). Without them it says so and exits 0. Its goals (every upload published at the first attempt, no
IntegrityError) are printed with PASS / FAIL and the load average; it exits 1 when one is missed. BENCH_SMOKE=1: 4
uploads.

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python bench/burst_benchmark.py [--uploads 200] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "client" / "tests"))
SAMPLES = REPO.parent / "shared" / "samples"

from bench import _seed  # noqa: E402
from bench._report import SMOKE, Report  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the burst to finish")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres") or not os.environ.get("REDIS_URL"):
        print("burst benchmark skipped: it needs DATABASE_URL (PostgreSQL) and REDIS_URL")
        return 0
    if SMOKE:
        args.uploads, args.timeout = 4, 120.0
    goals = Report("burst benchmark")

    work = Path(tempfile.mkdtemp(prefix="nvmedb-burst-"))
    os.environ.update(BUNDLE_STORAGE_DIR=str(work / "storage"), NVMEDB_VAR_DIR=str(work / "var"))
    url = _seed.bench_database_url("nvmedb_bench_burst" + ("_smoke" if SMOKE else ""))
    _seed.ensure_database(url, reseed=True)
    _seed.setup_django(url)
    _seed.migrate()

    from kombu import pools

    import bundle_factory
    from nvmedb.celery import app
    from submissions import services
    from submissions.models import FINAL_STATUSES, Submission

    owner = services.user_create(username="burst", password=uuid.uuid4().hex)
    print(f"building {args.uploads} bundles ...", flush=True)
    bundles = []
    samples = bundle_factory.default_fio_samples(SAMPLES)
    for i in range(args.uploads):
        key = bundle_factory.new_signing_key()
        services.signing_key_register(user=owner, public_key=bundle_factory.public_key_bytes(key), name=f"key {i}")
        bundles.append(bundle_factory.make_bundle(work / f"b{i}", fio_samples=samples, signing_key=key))

    queue = f"burst-bench-{uuid.uuid4().hex[:8]}"
    pools.reset()
    app.conf.update(task_always_eager=False, broker_url=os.environ["REDIS_URL"], task_default_queue=queue)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "nvmedb.settings.local",
        "DATABASE_URL": url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "NVMEDB_REVIEW_FIRST_N": "0",  # the burst measures concurrency, not the review of new contributors
    }
    log = work / "worker.log"
    command = [sys.executable, "-m", "celery", "-A", "nvmedb", "worker", f"--concurrency={args.concurrency}"]
    command += ["--pool=prefork", "--loglevel=INFO", "-Q", queue, "--without-gossip", "--without-mingle"]
    with log.open("wb") as handle:
        worker = subprocess.Popen(command, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                  start_new_session=True)  # fmt: skip
    try:
        started = time.monotonic()
        ids = []
        for path in bundles:
            with open(path, "rb") as stream:
                submission, _ = services.submission_create(uploader=owner, stream=stream, original_name=path.name)
            ids.append(submission.pk)
        while time.monotonic() - started < args.timeout:
            statuses = list(Submission.objects.filter(pk__in=ids).values_list("status", "attempts"))
            if all(status in FINAL_STATUSES for status, _ in statuses):
                break
            time.sleep(1)
        elapsed = time.monotonic() - started
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=60)

    text = log.read_text(errors="replace")
    by_status = Counter(status for status, _ in statuses)
    retried = sum(attempts > 1 for _, attempts in statuses)
    errors = text.count("IntegrityError")
    goals.note(f"uploads: {len(ids)} of one drive model, worker concurrency {args.concurrency}")
    goals.note(f"finished in {elapsed:.1f} s ({len(ids) / elapsed:.2f} uploads/s)")
    goals.note("statuses: " + ", ".join(f"{status} {count}" for status, count in sorted(by_status.items())))
    goals.check(f"published: {by_status.get('published', 0)} of {len(ids)}", by_status.get("published") == len(ids),
                goal="every upload")  # fmt: skip
    goals.check(f"needed more than one attempt: {retried}", not retried, goal="0")
    goals.check(f"IntegrityError in the worker log: {errors}", not errors, goal="0")

    from django.db import connection

    connection.close()
    import psycopg

    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}"')  # its own, created above
    return goals.finish()


if __name__ == "__main__":
    sys.exit(main())
