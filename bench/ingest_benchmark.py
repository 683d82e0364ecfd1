"""How long a worker takes to validate a full-size PTS bundle, against merely decompressing and parsing its JSON.

The bundle is written by the client's own bundle writer (nvmedb_client.bundle.write_bundle, format 2) from the real
fio 3.8 json+ outputs of the SSSPT run in ../shared/samples: IOPS to steady state in 6 rounds (8 block sizes × 7 mixes
× 6 = 336 runs) plus WIPC, throughput (2 block sizes, write and read, 5 rounds each), latency (3 block sizes × 3
mixes × 5 rounds) and 30 WSAT samples. Each run's output is the sample of the same cell; for throughput, latency and
WSAT runs a copy of a sample has its job options set to what the run declares and its timestamp moved onto the run's
clock, so every cross-check runs and passes. Every run has a job file and a smart-log before and after it (the real
nvme-cli sample, its data-unit counters moved by what fio read and wrote), and the bundle carries the system files the
client collects (nvme id-ctrl, smart-log, lspci -vvv, lshw, facts.json), declared by kind.

It runs on PostgreSQL in its own database (default nvmedb_bench_ingest), seeded once with --submissions published
submissions of the bundle's drive model (bench/_seed.py), so the outlier vote and the aggregate refresh see a
realistic model. Bundles are stored in a temporary FileSystemStorage and validated by
submissions.services.submission_validate exactly as the Celery task calls it.

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb .venv/bin/python bench/ingest_benchmark.py
    ... bench/ingest_benchmark.py --profile          # cProfile of one full path, top functions
    ... bench/ingest_benchmark.py --celery           # also a cold run through a real Celery worker (needs REDIS_URL)

Prints the baseline (gunzip + tar + orjson.loads of every JSON member), the full worker path, verification alone
and ingest alone, and the goal: full path / baseline <= 3 (issue 12), with a verdict.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "samples"
SAMPLES = SHARED / "ssspt-hp-iops-1"
ID_CTRL = (
    SHARED
    / "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
SMART_LOG = SHARED / "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"
LSPCI = (
    SHARED
    / "lspci/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__lspci_vvv_3"
)
LSHW = SHARED / "lshw/local__lshw-02.19__kvm_vm.json"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

GOAL_RATIO = 3.0
DATA_UNIT_BYTES = 512_000

KIB = 1024
IOPS_BLOCK_SIZES = (
    (1024 * KIB, "1024KB"),
    (128 * KIB, "128KB"),
    (64 * KIB, "64KB"),
    (32 * KIB, "32KB"),
    (16 * KIB, "16KB"),
    (8 * KIB, "8KB"),
    (4 * KIB, "4KB"),
    (512, "512B"),
)
IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
REPEATS = 5


def sample(name: str, read: int, round_number: int) -> dict:
    for n in (round_number, 5, 1):
        path = SAMPLES / f"wdpc_bs{name}_read{read}_round{n}.json"
        if path.exists():
            return json.loads(path.read_text())
    raise FileNotFoundError(path)


def build_run_dir(root: Path) -> tuple[dict, list[str]]:
    """The run directory and manifest of a full-size bundle (see the module docstring)."""
    from nvmedb_client.fio_output import summarize
    from nvmedb_client.system.collect import FILE_KINDS
    from nvmedb_client.tracking import evaluate_runs

    for folder in ("fio", "jobs", "smart", "system"):
        (root / folder).mkdir(parents=True)
    clock = datetime(2026, 11, 22, 8, 0, tzinfo=timezone.utc)
    runs, files, summaries = [], [], {}
    smart = json.loads(SMART_LOG.read_text())

    def snapshot(path: str) -> str:
        (root / path).write_text(json.dumps(smart, indent=2))
        files.append(path)
        return path

    def add(run_id, test, phase, round_number, pattern, bs, bs_name, read, doc_read, options=None):
        nonlocal clock
        doc = copy.deepcopy(sample(bs_name, doc_read, round_number))
        start, end = clock, clock + timedelta(seconds=61)
        clock = end + timedelta(seconds=1)
        doc["timestamp"] = int(end.timestamp())
        doc["jobs"][0]["job options"].update(options or {})
        summary = summarize(doc)
        before = snapshot(f"smart/{run_id}.before.json")
        # the drive's counters move with the run, as a real drive's do: no two snapshots are the same bytes
        smart["data_units_read"] += -(-int(summary.read_bytes or 0) // DATA_UNIT_BYTES)
        smart["data_units_written"] += -(-int(summary.write_bytes or 0) // DATA_UNIT_BYTES)
        smart["host_read_commands"] += int(summary.read_bytes or 0) // max(bs, 512)
        smart["host_write_commands"] += int(summary.write_bytes or 0) // max(bs, 512)
        smart["controller_busy_time"] += 1
        smart["temperature"] = 309 + len(runs) % 5
        smart["power_on_hours"] = 4974 + int(
            (end - datetime(2026, 11, 22, 8, 0, tzinfo=timezone.utc)).total_seconds() // 3600
        )
        after = snapshot(f"smart/{run_id}.after.json")
        run = {
            "id": run_id,
            "test": test,
            "phase": phase,
            "round": round_number,
            "pattern": pattern,
            "block_size_bytes": bs,
            "read_pct": read,
            "threads": 2,
            "iodepth": 16,
            "runtime_s": 60,
            "job_file": f"jobs/{run_id}.fio",
            "output_file": f"fio/{run_id}.json",
            "smart_before": before,
            "smart_after": after,
            "started_at": start.isoformat().replace("+00:00", "Z"),
            "finished_at": end.isoformat().replace("+00:00", "Z"),
        }
        (root / run["output_file"]).write_text(json.dumps(doc, indent=2))
        (root / run["job_file"]).write_text(f"[{run_id}]\nrw={pattern}\nbs={bs}\nnumjobs=2\niodepth=16\nruntime=60\n")
        files.extend([run["job_file"], run["output_file"]])
        runs.append(run)
        summaries[run_id] = summary

    add("iops-wipc", "iops", "wipc", 1, "write", 128 * KIB, "128KB", 0, 0, {"rw": "write"})
    for r in range(1, 7):
        for mix in IOPS_MIXES:
            for bs, name in IOPS_BLOCK_SIZES:
                add(f"iops-r{r:02d}-rw{mix:03d}-bs{bs}", "iops", "wdpc", r, "randrw", bs, name, mix, mix)
    for bs, name in ((1024 * KIB, "1024KB"), (128 * KIB, "128KB")):
        add(f"tp-bs{bs}-wipc", "tp", "wipc", 1, "write", bs, name, 0, 0, {"rw": "write"})
        for r in range(1, 6):
            add(f"tp-write-r{r:02d}-bs{bs}", "tp", "tp-write", r, "write", bs, name, 0, 0, {"rw": "write"})
        for r in range(1, 6):
            add(f"tp-read-r{r:02d}-bs{bs}", "tp", "tp-read", r, "read", bs, name, 100, 100, {"rw": "read"})
    add("lat-wipc", "lat", "wipc", 1, "write", 128 * KIB, "128KB", 0, 0, {"rw": "write"})
    for r in range(1, 6):
        for mix in (100, 65, 0):
            for bs, name in ((512, "512B"), (4 * KIB, "4KB"), (8 * KIB, "8KB")):
                add(f"lat-r{r:02d}-rw{mix:03d}-bs{bs}", "lat", "wdpc", r, "randrw", bs, name, mix, mix)
    for n in range(1, 31):
        add(f"wsat-r{n:04d}", "wsat", "wsat", n, "randwrite", 4 * KIB, "4KB", 0, 0, {"rw": "randwrite"})

    facts = {
        "host": {
            "cpu": {"model": "Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz", "logical_cpus": 80},
            "memory_bytes": 196 * 1024**3,
            "kernel": {"name": "Linux", "release": "5.10.0-23-amd64"},
            "distribution": {"pretty_name": "Debian GNU/Linux 11 (bullseye)"},
        },
        "block_device": {"block_queue": {"scheduler": "none"}, "pci_path": ["0000:3b:00.0"]},
        "volatile_write_cache": {"value": 0, "enabled": False},
    }
    system = {
        "nvme-id-ctrl.json": ID_CTRL.read_bytes(),
        "nvme-smart-log.json": SMART_LOG.read_bytes(),
        "lspci.txt": LSPCI.read_bytes(),
        "lshw.json": LSHW.read_bytes(),
        "facts.json": json.dumps(facts, indent=2).encode(),
    }
    for name, data in system.items():
        (root / "system" / name).write_bytes(data)
        files.append(f"system/{name}")

    manifest = {
        "format_version": 2,
        "client": {"name": "nvmedb-client", "version": "bench"},
        "created_at": runs[-1]["finished_at"],
        "profile": "pts",
        "edition": "client",
        "compliance": {"compliant": False, "reasons": ["benchmark bundle generated from SSSPT samples"]},
        "target": {
            "kind": "device",
            "path": "/dev/nvme0n1",
            "size_bytes": 960 * 10**9,
            "active_range_bytes": 720 * 10**9,
        },
        "plan": {"profile": "pts", "tests": ["iops", "tp", "lat", "wsat"]},
        "timing": {"started_at": runs[0]["started_at"], "finished_at": runs[-1]["finished_at"]},
        "tools": {"fio": "fio-3.8", "nvme-cli": "nvme version 2.4"},
        "system": {
            "files": [{"path": f"system/{name}", "kind": FILE_KINDS[name]} for name in sorted(system)],
            "pci_path": facts["block_device"]["pci_path"],
        },
        "runs": runs,
        "steady_state": evaluate_runs(runs, summaries),
    }
    return manifest, files


class Timed:
    """Appends (wall seconds, CPU seconds of this process) of its block to a list. On a busy machine the CPU time
    is the steadier figure; it leaves out what PostgreSQL spends in its own process."""

    def __init__(self, into: list[tuple[float, float]]):
        self.into = into

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __exit__(self, *exc_info) -> None:
        self.into.append((time.perf_counter() - self.wall, time.process_time() - self.cpu))


def baseline(bundle_path: Path) -> None:
    """The physical floor: decompress the archive, read every member and parse each JSON one with orjson."""
    import orjson

    with tarfile.open(bundle_path, "r|gz") as archive:
        for member in archive:
            if member.isfile():
                data = archive.extractfile(member).read()
                if member.name.endswith(".json"):
                    orjson.loads(data)


def prepare_database(url: str, *, submissions: int, reseed: bool) -> None:
    """Create, migrate and seed the bench database once; later runs reuse it."""
    from bench import _seed

    needs_seed = _seed.ensure_database(url, reseed=reseed)
    _seed.setup_django(url)
    _seed.migrate()
    if needs_seed:
        from django.db import connection

        # bench/_seed.py writes measurements through COPY with a fixed column list; a JSON column added to the
        # model since (NOT NULL, no database default) would refuse its rows, so it gets an empty default here
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'analysis_measurement' "
                "AND data_type = 'jsonb' AND is_nullable = 'NO' AND column_default IS NULL"
            )
            for (column,) in cursor.fetchall():
                cursor.execute(f"ALTER TABLE analysis_measurement ALTER COLUMN \"{column}\" SET DEFAULT '{{}}'")
        _seed.seed(drive_models=1, submissions_for_big_model=submissions, measurements_total=0, log=print)


def align_drive_model() -> int:
    """Make the seeded drive model the bundle's drive (vendor, model number and capacity of its id-ctrl)."""
    from analysis.identity import identity_from_id_ctrl
    from analysis.models import DriveModel, Vendor
    from nvmedb_client.system import nvme

    identity = identity_from_id_ctrl(nvme.parse_id_ctrl(ID_CTRL.read_bytes()))
    model = DriveModel.objects.get(slug="bench-big-drive")
    vendor = Vendor.objects.filter(name=identity.vendor).first()
    if vendor is None:
        vendor = model.vendor
        vendor.name = identity.vendor
        vendor.save(update_fields=["name"])
    model.vendor, model.model_number, model.capacity_bytes = vendor, identity.model_number, identity.capacity_bytes
    model.save(update_fields=["vendor", "model_number", "capacity_bytes"])
    return model.test_runs.values("submission").distinct().count()


def forget(submissions) -> None:
    """Remove what the benchmark added, so the seeded database stays at its size."""
    from analysis.models import DriveModel
    from analysis.services import delete_submission_rows, refresh_aggregates
    from submissions.models import Submission

    for submission in submissions:
        delete_submission_rows(submission=submission)
    Submission.objects.filter(pk__in=[s.pk for s in submissions]).delete()
    for model in DriveModel.objects.filter(slug="bench-big-drive"):
        refresh_aggregates(drive_model=model)


def report(label: str, values: list[tuple[float, float]]) -> None:
    wall, cpu = [v[0] for v in values], [v[1] for v in values]
    print(
        f"  {label:58} {statistics.median(wall) * 1000:8.1f} ms (min {min(wall) * 1000:7.1f}); "
        f"CPU {statistics.median(cpu) * 1000:7.1f} ms (min {min(cpu) * 1000:7.1f})"
    )


def ratios(label: str, index: int, base, full, verify, ingest) -> None:
    """The goal's ratio, by median and by best run, of wall time (index 0) or of this process's CPU time (1)."""
    for name, pick in (("median", statistics.median), ("min", min)):
        b, f, v, g = (pick(x[index] for x in values) for values in (base, full, verify, ingest))
        verdict = "MET" if f / b <= GOAL_RATIO else "NOT MET"
        print(
            f"  {label} {name:6}: full path / baseline {f / b:5.2f} (goal <= {GOAL_RATIO:g}: {verdict}); "
            f"verify / baseline {v / b:4.2f}; ingest / baseline {g / b:4.2f}"
            + (f"; bundles per second per worker {1 / f:4.2f}" if index == 0 else "")
        )


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="nvmedb_bench_ingest", help="bench database name (created if missing)")
    parser.add_argument("--submissions", type=int, default=1000, help="published submissions of the drive to seed")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reseed", action="store_true", help="drop and seed the bench database again")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one full worker path")
    parser.add_argument("--celery", action="store_true", help="also time a cold run through a real Celery worker")
    args = parser.parse_args()

    from bench import _seed

    url = _seed.bench_database_url(args.database)
    prepare_database(url, submissions=args.submissions, reseed=args.reseed)
    seeded = align_drive_model()

    from django.contrib.auth import get_user_model
    from django.core.files.storage import FileSystemStorage
    from django.db import transaction

    from analysis.bundle_reader import read_bundle
    from analysis.ingest import ingest_submission
    from analysis.models import Measurement
    from nvmedb_client.bundle import write_bundle
    from nvmedb_client.signing import load_or_create_signing_key, public_key_bytes
    from submissions import services
    from submissions.models import Submission

    added = []
    with tempfile.TemporaryDirectory(prefix="nvmedb-bench-") as tmp:
        work = Path(tmp)
        manifest, files = build_run_dir(work / "run")
        key = load_or_create_signing_key(work / "key")
        bundle_path = write_bundle(
            run_dir=work / "run", manifest=manifest, files=files, signing_key=key, out_path=work / "full.nvmedb.tar.gz"
        )
        data = bundle_path.read_bytes()
        raw_size = sum((work / "run" / f).stat().st_size for f in files)
        print(
            f"bundle: {len(data) / 1e6:.1f} MB compressed, {raw_size / 1e6:.1f} MB of {len(files)} files: "
            f"{sum(1 for f in files if f.startswith('fio/'))} fio json+ outputs, as many job files, "
            f"{sum(1 for f in files if f.startswith('smart/'))} smart-logs, "
            f"{sum(1 for f in files if f.startswith('system/'))} system files"
        )
        print(f"database: {args.database}, {seeded} submissions of the bundle's drive model before the run")

        user, _ = get_user_model().objects.get_or_create(username="bench-ingest")
        services.signing_key_register(user=user, public_key=public_key_bytes(key))
        storage = FileSystemStorage(location=str(work / "storage"))

        def new_submission(status: str = "received", storage=storage) -> Submission:
            n = len(added)
            name = storage.save(f"bundles/bench-{n}.nvmedb.tar.gz", __import__("io").BytesIO(data))
            submission = Submission.objects.create(
                uploader=user,
                sha256=hashlib.sha256(data + os.urandom(8)).hexdigest(),
                size=len(data),
                storage_name=name,
                status=status,
            )
            added.append(submission)
            return submission

        # The raw-file pages' identifier warm-up is a task of its own, queued when the rows commit; here it is
        # timed apart (below) instead of being queued to a broker no worker reads.
        from analysis import ingest as ingest_module
        from analysis.browse import raw_files

        ingest_module.queue_raw_file_warm_up = lambda storage_name: None
        try:
            base, full, verify, ingest, reading, warm = [], [], [], [], [], []
            for _ in range(args.repeats):
                with Timed(base):
                    baseline(bundle_path)

                submission = new_submission()
                with Timed(full):
                    done = services.submission_validate(submission_id=submission.pk, storage=storage)
                if done.status not in ("published", "held"):
                    sys.exit(f"the benchmark bundle was not accepted: {done.status} {done.report}")
                with Timed(warm):
                    raw_files.collect_bundle_identifiers(storage_name=done.storage_name, storage=storage)

                submission = new_submission(status="ingesting")
                with Timed(verify), verify_stored(services, submission, storage) as bundle:
                    pass
                with verify_stored(services, submission, storage) as bundle, Timed(reading):
                    read_bundle(bundle)
                # a bundle of its own: the first read of each fio output is kept on the bundle, and ingest must pay it
                with verify_stored(services, submission, storage) as bundle, Timed(ingest), transaction.atomic():
                    outcome = ingest_submission(submission=submission, bundle=bundle)
                if outcome.status == "rejected":
                    sys.exit(f"the benchmark bundle was rejected: {outcome.reasons[:3]}")
            rows = Measurement.objects.filter(test_run__submission=done).count()
            print(f"measurement rows per bundle: {rows}; outcome: {done.status}; {args.repeats} runs, median (min):")
            report("baseline: gunzip + tar + orjson.loads of every JSON member", base)
            report("full worker path: submission_validate (verify + ingest)", full)
            report("  verify alone (archive stream, hashes, signature, limits)", verify)
            report("  ingest alone: ingest_submission (parse, checks, rows)", ingest)
            report("    of which read_bundle (parse + checks, no database)", reading)
            report("raw-file identifier warm-up (its own task, after commit)", warm)
            ratios("wall", 0, base, full, verify, ingest)
            ratios("CPU ", 1, base, full, verify, ingest)
            if args.profile:
                profile_full_path(services, new_submission, storage)
            if args.celery:
                celery_cold_run(url, new_submission, work)
        finally:
            forget(added)


def verify_stored(services, submission, storage):
    """Verification as the task does it (the stored bundle's stream, files held in memory), alone."""
    return services.verify_stored_bundle(submission=submission, storage=storage)


def profile_full_path(services, new_submission, storage) -> None:
    import cProfile
    import pstats

    submission = new_submission()
    profiler = cProfile.Profile(time.process_time)  # CPU time: steadier than wall time on a busy machine
    profiler.enable()
    services.submission_validate(submission_id=submission.pk, storage=storage)
    profiler.disable()
    stats = pstats.Stats(profiler).strip_dirs()
    print("\nprofile of one full worker path, by own time:")
    stats.sort_stats("tottime").print_stats(25)
    print("by cumulative time:")
    stats.sort_stats("cumulative").print_stats(40)


def celery_cold_run(url: str, new_submission, work: Path) -> None:
    """One bundle through a freshly started `celery worker` (its first task: imports, schema compilation and
    connections included), then a second one through the same worker; from queueing to the final status."""
    import signal
    import subprocess
    import uuid
    import warnings

    warnings.filterwarnings("ignore", message=".*has no effect on send_task")  # it goes to the broker, as meant

    from django.core.files.storage import FileSystemStorage

    from nvmedb.celery import app
    from submissions.models import Submission

    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url.startswith("redis"):
        print("celery: set REDIS_URL to time a run through a real worker")
        return
    storage_dir = work / "celery-storage"
    queue = f"ingest-bench-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "nvmedb.settings.local",
        "DATABASE_URL": url,
        "BUNDLE_STORAGE_DIR": str(storage_dir),
        "NVMEDB_VAR_DIR": str(work / "var"),
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "NVMEDB_REVIEW_FIRST_N": "0",
    }
    log = work / "worker.log"
    command = [sys.executable, "-m", "celery", "-A", "nvmedb", "worker", "--pool=solo", "--loglevel=INFO", "-Q", queue]
    with log.open("ab") as handle:
        worker = subprocess.Popen(
            command + ["--without-gossip", "--without-mingle"],
            cwd=REPO,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while "ready." not in log.read_text(errors="replace"):
            if time.monotonic() > deadline or worker.poll() is not None:
                print("celery: the worker did not start:\n" + log.read_text(errors="replace")[-2000:])
                return
            time.sleep(0.1)
        storage = FileSystemStorage(location=str(storage_dir))
        labels = ("cold (first task of a new worker)", "warm (second task, same worker)")
        for warmed, label in enumerate(labels, start=1):
            submission = new_submission(storage=storage)
            started = time.perf_counter()
            app.send_task("submissions.tasks.validate_submission", args=[str(submission.pk)], queue=queue)
            while True:
                status = Submission.objects.values_list("status", flat=True).get(pk=submission.pk)
                if status in ("published", "held", "rejected") or time.perf_counter() - started > 300:
                    break
                time.sleep(0.02)
            print(f"  celery worker, {label}: {(time.perf_counter() - started) * 1000:8.1f} ms, {status}")
            # the worker goes on with the raw-file warm-up this ingest queued; the next bundle must not wait for it
            while warm_ups_done(log) < warmed:
                if time.perf_counter() - started > 120:
                    break
                time.sleep(0.05)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)


def warm_ups_done(log: Path) -> int:
    lines = log.read_text(errors="replace").splitlines()
    return sum(1 for line in lines if "warm_raw_file_identifiers[" in line and "succeeded" in line)


if __name__ == "__main__":
    main()
