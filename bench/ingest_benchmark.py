"""How long a worker takes to validate a full-size PTS bundle, against merely decompressing and parsing its JSON.

The bundle is written by the client's own bundle writer (nvmedb_client.bundle.write_bundle, format 2) from the real
fio 3.8 json+ outputs of the SSSPT run in ../shared/samples: IOPS to steady state in 6 rounds (8 block sizes × 7 mixes
× 6 = 336 runs) plus WIPC, throughput (2 block sizes, write and read, 5 rounds each), latency (3 block sizes × 3
mixes × 5 rounds) and 30 WSAT samples. Each run's output is the sample of the same cell; for throughput, latency and
WSAT runs a copy of a sample has its job options set to what the run declares and its timestamp moved onto the run's
clock, so every cross-check runs and passes. Every run has a job file and a smart-log before and after it (the real
nvme-cli sample, its data-unit counters moved by what fio read and wrote), and the bundle carries the system files the
client collects (nvme id-ctrl, smart-log, lspci -vvv, lshw, facts.json), declared by kind, and its manifest a plan
like the client's (bundle_plan), so the bundle publishes: the benchmark stops if it ends anything but `published`.

It runs on PostgreSQL in its own database (default nvmedb_bench_ingest), seeded once with --submissions published
submissions of the bundle's drive model (bench/_seed.py), so the outlier vote and the aggregate refresh see a
realistic model, each with content of its own (fio digests, and the bundle's signatures moved by a few percent:
_seed.seed_content), so the content check meets the rows a popular drive's submissions leave. Bundles are stored in
a temporary FileSystemStorage (the default storage for the run) and validated by
submissions.services.submission_validate exactly as the Celery task calls it; the tasks the ingest
queues on commit (the factor refit) run through Celery at the commit, eagerly as nvmedb.settings.test has it, inside
the measured full path, as does the caching of the bundle's raw-file identifiers, gathered on commit from the bundle
already in memory. The submissions of each repeat are removed before the next one (untimed), so every full path
meets the seeded database: one new upload, not the n-th copy of the repeats before it (their fio outputs would be
content matches, compared signature by signature, more with each repeat). With REDIS_URL set it also runs bundles
through a freshly started Celery worker (production task routing, local settings): one cold, one warm, then --burst
bundles of the same drive queued at once (copies of one account's bundle, each compared with those before it), each
timed until the worker has also run every task their ingests queued; a factor refit that finds the drive's change
already fitted (by the refit of an earlier bundle of the burst) does nothing. BENCH_SMOKE=1 (or --small): a small bundle, one run.

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb .venv/bin/python bench/ingest_benchmark.py
    ... bench/ingest_benchmark.py --profile          # cProfile of one full path, top functions
    ... bench/ingest_benchmark.py --no-celery        # skip the runs through a real Celery worker

Prints the baseline (gunzip + tar + orjson.loads of every JSON member), the full worker path, verification alone,
ingest alone, where the full path's time goes (each stage of the pipeline and each queued task, timed on the measured
paths themselves, after one untimed path that pays this process's imports: bench/_stages.py), and the goals: full
path / baseline <= 3 (issues 12 and 24) for one bundle and per bundle of a burst, with verdicts; exits 1 when one is
missed.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
import uuid
from dataclasses import dataclass
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


@dataclass(frozen=True)
class BundleSize:
    """The shape of the benchmark bundle: the full PTS size by default, SMALL for tests and the smoke run."""

    iops_rounds: int = 6
    iops_block_sizes: tuple = IOPS_BLOCK_SIZES
    iops_mixes: tuple = IOPS_MIXES
    tp_block_sizes: tuple = ((1024 * KIB, "1024KB"), (128 * KIB, "128KB"))
    tp_rounds: int = 5
    lat_block_sizes: tuple = ((512, "512B"), (4 * KIB, "4KB"), (8 * KIB, "8KB"))
    lat_mixes: tuple = (100, 65, 0)
    lat_rounds: int = 5
    wsat_samples: int = 30


FULL = BundleSize()
SMALL = BundleSize(
    iops_rounds=5,
    iops_block_sizes=((4 * KIB, "4KB"), (64 * KIB, "64KB")),
    iops_mixes=(100, 0),
    tp_block_sizes=((1024 * KIB, "1024KB"),),
    lat_block_sizes=((4 * KIB, "4KB"),),
    lat_mixes=(0,),
    wsat_samples=5,
)
THREADS, IODEPTH, RUNTIME_S = 2, 16, 60
TARGET = {"kind": "device", "path": "/dev/nvme0n1", "size_bytes": 960 * 10**9, "active_range_bytes": 720 * 10**9}
COMPLIANCE = {"compliant": False, "reasons": ["benchmark bundle generated from SSSPT samples"]}


def bundle_plan(runs: list[dict], *, profile: str, edition: str) -> dict:
    """The manifest's plan, as nvmedb_client.plan.plan_to_dict writes it for this run: the run's target, profile,
    edition and compliance, and one block per test whose series hold exactly the cells of the runs (the shape of
    client/tests/bundle_factory.py's plan), so the consistency gates check every run against it."""
    blocks: dict[str, dict] = {}
    for run in runs:
        block = blocks.setdefault(
            run["test"], {"test": run["test"], "label": run["test"], "purge": True, "wipc": None, "series": []}
        )
        if run["phase"] == "wipc":
            block["wipc"] = {
                "run_id": run["id"],
                "threads": run["threads"],
                "block_size_bytes": run["block_size_bytes"],
            }
            continue
        series = next((s for s in block["series"] if s["phase"] == run["phase"]), None)
        if series is None:
            series = {"phase": run["phase"], "threads": run["threads"], "iodepth": run["iodepth"],
                      "runtime_s": run["runtime_s"], "max_rounds": 25, "cells": [], "tracking_variables": []}  # fmt: skip
            block["series"].append(series)
        cell = {"pattern": run["pattern"], "block_size_bytes": run["block_size_bytes"], "read_pct": run["read_pct"]}
        if cell not in series["cells"]:
            series["cells"].append(cell)
        series["max_rounds"] = max(series["max_rounds"], run["round"])  # WSAT's 30 samples are 30 "rounds"
    return {
        "specification": "SNIA SSS PTS v2.0.2",
        "tests": sorted(blocks),
        "edition": {"name": edition},
        "profile": {"name": profile},
        "threads": THREADS,
        "iodepth": IODEPTH,
        "max_rounds": 25,
        "target_kind": TARGET["kind"],
        "capacity_bytes": TARGET["size_bytes"],
        "active_range_bytes": TARGET["active_range_bytes"],
        "compliance": dict(COMPLIANCE),
        "blocks": list(blocks.values()),
    }


def build_run_dir(root: Path, size: BundleSize = FULL) -> tuple[dict, list[str]]:
    """The run directory and manifest of the benchmark bundle (see the module docstring), `size` its shape."""
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
            "threads": THREADS,
            "iodepth": IODEPTH,
            "runtime_s": RUNTIME_S,
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
    for r in range(1, size.iops_rounds + 1):
        for mix in size.iops_mixes:
            for bs, name in size.iops_block_sizes:
                add(f"iops-r{r:02d}-rw{mix:03d}-bs{bs}", "iops", "wdpc", r, "randrw", bs, name, mix, mix)
    for bs, name in size.tp_block_sizes:
        add(f"tp-bs{bs}-wipc", "tp", "wipc", 1, "write", bs, name, 0, 0, {"rw": "write"})
        for r in range(1, size.tp_rounds + 1):
            add(f"tp-write-r{r:02d}-bs{bs}", "tp", "tp-write", r, "write", bs, name, 0, 0, {"rw": "write"})
        for r in range(1, size.tp_rounds + 1):
            add(f"tp-read-r{r:02d}-bs{bs}", "tp", "tp-read", r, "read", bs, name, 100, 100, {"rw": "read"})
    add("lat-wipc", "lat", "wipc", 1, "write", 128 * KIB, "128KB", 0, 0, {"rw": "write"})
    for r in range(1, size.lat_rounds + 1):
        for mix in size.lat_mixes:
            for bs, name in size.lat_block_sizes:
                add(f"lat-r{r:02d}-rw{mix:03d}-bs{bs}", "lat", "wdpc", r, "randrw", bs, name, mix, mix)
    for n in range(1, size.wsat_samples + 1):
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
        "compliance": dict(COMPLIANCE),
        "target": dict(TARGET),
        "plan": bundle_plan(runs, profile="pts", edition="client"),
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
        _seed.seed(drive_models=1, submissions_for_big_model=submissions, measurements_total=0, log=print)


def seed_content_once(run_dir: Path, files: list[str]) -> int:
    """The seeded submissions' content (bench/_seed.seed_content), moved from the bundle's own, written on the first
    run against the database; returns the signatures the drive's submissions hold."""
    from bench import _seed
    from submissions.content import file_fingerprints
    from submissions.models import MeasurementSignature, Submission

    drive_submissions = Submission.objects.filter(test_runs__drive_model__slug="bench-big-drive")
    held = MeasurementSignature.objects.filter(submission__in=drive_submissions)
    if not held.exists():
        outputs = [run_dir / f for f in files if f.startswith("fio/")]
        _seed.seed_content(file_fingerprints(run_dir, outputs))
        _seed.settle()
    return held.count()


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


def ratios(goals, label: str, index: int, base, full, verify, ingest) -> None:
    """The goal's ratio, by median and by best run, of wall time (index 0) or of this process's CPU time (1)."""
    for name, pick in (("median", statistics.median), ("min", min)):
        b, f, v, g = (pick(x[index] for x in values) for values in (base, full, verify, ingest))
        goals.check(
            f"{label} {name:6}: full path / baseline {f / b:5.2f}; verify / baseline {v / b:4.2f}; "
            f"ingest / baseline {g / b:4.2f}" + (f"; bundles/s per worker {1 / f:4.2f}" if index == 0 else ""),
            f / b <= GOAL_RATIO,
            goal=f"full path / baseline <= {GOAL_RATIO:g}",
        )


class TaskLog:
    """The Celery tasks that ran in this process (eagerly: settings.test runs every task queued on commit at the
    commit, through Celery's own tracer, as a worker runs it), with their wall time."""

    def __init__(self):
        from celery.signals import task_postrun, task_prerun

        self.started: dict[str, float] = {}
        self.ran: list[tuple[str, float]] = []
        task_prerun.connect(self._prerun, weak=False)
        task_postrun.connect(self._postrun, weak=False)

    def _prerun(self, task_id=None, task=None, **_) -> None:
        self.started[task_id] = time.perf_counter()

    def _postrun(self, task_id=None, task=None, **_) -> None:
        self.ran.append((task.name, time.perf_counter() - self.started.pop(task_id, time.perf_counter())))

    def take(self) -> list[tuple[str, float]]:
        ran, self.ran = self.ran, []
        return ran


def stored_submission(*, user, data: bytes, storage, status: str = "received"):
    """A submission of `data`, stored as the upload view stores it."""
    import io

    from submissions.models import Submission

    name = storage.save(f"bundles/bench-{uuid.uuid4().hex[:12]}.nvmedb.tar.gz", io.BytesIO(data))
    return Submission.objects.create(
        uploader=user, sha256=hashlib.sha256(data + os.urandom(8)).hexdigest(), size=len(data), storage_name=name,
        status=status,
    )  # fmt: skip


def worker_path(submission, storage):
    """What the worker does for one upload: submission_validate as the Celery task calls it, then every task the
    ingest runs on commit (the raw-file identifiers cached from the bundle in memory, the factor refit task, run
    eagerly through Celery). Returns the submission and how many identifiers were cached; raises when none were."""
    from analysis import raw_identifiers
    from submissions import services

    done = services.submission_validate(submission_id=submission.pk, storage=storage)
    cached = raw_identifiers.cached(done.storage_name)
    if done.status != "rejected" and cached is None:
        raise RuntimeError("the ingest did not cache the bundle's raw-file identifiers on commit")
    return done, len(cached or ())


def main() -> int:
    import argparse

    from bench._report import SMOKE, Report
    from bench._stages import StageClock

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="nvmedb_bench_ingest", help="bench database name (created if missing)")
    parser.add_argument("--submissions", type=int, default=1000, help="published submissions of the drive to seed")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="a small bundle (2 × 2 IOPS cells, ...): a quick check")
    parser.add_argument("--reseed", action="store_true", help="drop and seed the bench database again")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one full worker path")
    parser.add_argument(
        "--no-celery", dest="celery", action="store_false", help="skip the runs through a real Celery worker"
    )
    parser.add_argument("--burst", type=int, default=8, help="bundles of one drive queued at once to the worker")
    args = parser.parse_args()
    if SMOKE:  # a fresh database, a small bundle, one run
        args.database, args.submissions, args.repeats, args.small, args.reseed = (
            f"{args.database}_smoke",
            3,
            1,
            True,
            True,
        )
        args.burst = 2

    goals = Report("ingest benchmark")
    from bench import _seed

    url = _seed.bench_database_url(args.database)
    prepare_database(url, submissions=args.submissions, reseed=args.reseed)
    seeded = align_drive_model()

    from django.contrib.auth import get_user_model
    from django.core.files.storage import FileSystemStorage
    from django.db import transaction
    from django.test import override_settings

    from analysis.bundle_reader import read_bundle
    from analysis.ingest import ingest_submission
    from analysis.models import Measurement
    from nvmedb_client.bundle import write_bundle
    from nvmedb_client.signing import load_or_create_signing_key, public_key_bytes
    from submissions import services

    added = []
    with tempfile.TemporaryDirectory(prefix="nvmedb-bench-") as tmp:
        work = Path(tmp)
        manifest, files = build_run_dir(work / "run", SMALL if args.small else FULL)
        key = load_or_create_signing_key(work / "key")
        bundle_path = write_bundle(
            run_dir=work / "run", manifest=manifest, files=files, signing_key=key, out_path=work / "full.nvmedb.tar.gz"
        )
        data = bundle_path.read_bytes()
        raw_size = sum((work / "run" / f).stat().st_size for f in files)
        goals.note(
            f"bundle: {len(data) / 1e6:.1f} MB compressed, {raw_size / 1e6:.1f} MB of {len(files)} files: "
            f"{sum(1 for f in files if f.startswith('fio/'))} fio json+ outputs, as many job files, "
            f"{sum(1 for f in files if f.startswith('smart/'))} smart-logs, "
            f"{sum(1 for f in files if f.startswith('system/'))} system files"
        )
        signatures = seed_content_once(work / "run", files)
        goals.note(
            f"database: {url.rsplit('/', 1)[1]}, {seeded} submissions of the bundle's drive model before the run, "
            f"holding {signatures:,} measurement signatures"
        )

        user, _ = get_user_model().objects.get_or_create(username="bench-ingest")
        services.signing_key_register(user=user, public_key=public_key_bytes(key))
        # the bench's storage is the default storage: the tasks the ingest queues read the bundle from there
        storage_settings = {"BACKEND": "django.core.files.storage.FileSystemStorage",
                            "OPTIONS": {"location": str(work / "storage")}}  # fmt: skip
        from django.conf import settings

        overridden = override_settings(STORAGES={**settings.STORAGES, "default": storage_settings})
        overridden.enable()
        storage = FileSystemStorage(location=str(work / "storage"))

        def new_submission(status: str = "received", storage=storage):
            submission = stored_submission(user=user, data=data, storage=storage, status=status)
            added.append(submission)
            return submission

        tasks = TaskLog()
        stages = StageClock()
        try:
            base, full, verify, ingest, reading = [], [], [], [], []
            task_times: dict[str, list[float]] = {}  # task -> its wall time in each measured full path
            # one path first, untimed: this process's first refit imports numpy, scipy and statsmodels (a worker's
            # first task; the Celery cold run below shows it), which would weigh on the stages' means
            worker_path(new_submission(), storage)
            forget(added)
            added.clear()
            tasks.take()
            for _ in range(args.repeats):
                with Timed(base):
                    baseline(bundle_path)

                submission = new_submission()
                tasks.take()
                with Timed(full), stages.timing():
                    done, identifiers = worker_path(submission, storage)
                if done.status != "published":
                    sys.exit(f"the benchmark bundle was not published: {done.status} {done.report}")
                for name, seconds in tasks.take():
                    task_times.setdefault(name, []).append(seconds)

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
                # every repeat meets the seeded database: a new upload, not the n-th copy of the ones before it
                forget(added)
                added.clear()
            print(f"measurement rows per bundle: {rows}; outcome: {done.status}; {args.repeats} runs, median (min):")
            print(f"tasks the ingest queued, run in the measured path: {', '.join(sorted(task_times)) or 'none'}")
            report("baseline: gunzip + tar + orjson.loads of every JSON member", base)
            report("full worker path: submission_validate + its queued tasks", full)
            report("  verify alone (archive stream, hashes, signature, limits)", verify)
            report("  ingest alone: ingest_submission (+ its tasks on commit)", ingest)
            report("    of which read_bundle (parse + checks, no database)", reading)
            # a task may run more than once per path, or not at all: its mean per path
            task_means = {name: sum(seconds) / args.repeats for name, seconds in task_times.items()}
            stages.report(statistics.mean(f[0] for f in full), task_means)
            goals.note(f"the ingest cached {identifiers} raw-file identifiers of the last bundle")
            ratios(goals, "wall", 0, base, full, verify, ingest)
            ratios(goals, "CPU ", 1, base, full, verify, ingest)
            if args.profile:
                profile_full_path(services, new_submission, storage)
            if args.celery:
                celery_runs(goals, url, new_submission, work, base, args.burst)
        finally:
            forget(added)
            overridden.disable()
    return goals.finish()


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


@contextlib.contextmanager
def celery_worker(url: str, work: Path):
    """A freshly started `celery worker` (solo pool, a queue of its own) on the bench database; yields its queue, its
    log and the storage it reads bundles from, or None when it cannot run."""
    import signal
    import subprocess
    import warnings

    warnings.filterwarnings("ignore", message=".*has no effect on send_task")  # it goes to the broker, as meant

    from django.core.files.storage import FileSystemStorage

    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url.startswith("redis"):
        print("celery: set REDIS_URL to time runs through a real worker")
        yield None
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
    log = work / f"worker-{queue}.log"
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
                yield None
                return
            time.sleep(0.1)
        yield queue, log, FileSystemStorage(location=str(storage_dir))
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)


def send_and_drain(queue: str, log: Path, submissions: list, *, timeout: float = 600) -> tuple[float, list[str]]:
    """Queue the validation of `submissions` at once; wait until each has its final status and the worker has run
    every task their ingests queued (one page summary and one factor refit per ingest, a refit that finds its change
    already fitted included). Returns the wall seconds and the statuses."""
    from nvmedb.celery import app
    from submissions.models import Submission

    summaries, refits = tasks_done(log, "rebuild_page_summary"), tasks_done(log, "refresh_factor_effects")
    started = time.perf_counter()
    for submission in submissions:
        app.send_task("submissions.tasks.validate_submission", args=[str(submission.pk)], queue=queue)
    ids = [s.pk for s in submissions]
    while time.perf_counter() - started < timeout:
        statuses = list(Submission.objects.filter(pk__in=ids).values_list("status", flat=True))
        if all(status in ("published", "held", "rejected") for status in statuses):
            queued = sum(1 for status in statuses if status != "rejected")
            if (
                tasks_done(log, "rebuild_page_summary") >= summaries + queued
                and tasks_done(log, "refresh_factor_effects") >= refits + queued
            ):
                break
        time.sleep(0.02)
    return time.perf_counter() - started, statuses


def celery_runs(goals, url: str, new_submission, work: Path, base: list, burst: int) -> None:
    """Through a freshly started worker: one bundle cold (its first task: imports, schema compilation and
    connections included), one warm, then `burst` bundles of the same drive queued at once, each path timed from
    queueing until the worker has also run every task the ingests queued."""
    with celery_worker(url, work) as running:
        if running is None:
            return
        queue, log, storage = running
        for label in ("cold (first task of a new worker)", "warm (second task, same worker)"):
            seconds, (status,) = send_and_drain(queue, log, [new_submission(storage=storage)])
            print(f"  celery worker, {label}, with its queued tasks: {seconds * 1000:8.1f} ms, {status}")
        if burst < 2:
            return
        fitted_before = tasks_done(log, "refresh_factor_effects", fitted=True)
        seconds, statuses = send_and_drain(queue, log, [new_submission(storage=storage) for _ in range(burst)])
        per_bundle, floor = seconds / burst, statistics.median(b[0] for b in base)
        refits = tasks_done(log, "refresh_factor_effects", fitted=True) - fitted_before
        goals.check(
            f"celery burst of {burst} bundles of one drive: {per_bundle * 1000:.0f} ms per bundle with every queued "
            f"task ({refits} of its {burst} refits fitted, the rest found their change fitted); per bundle / "
            f"baseline {per_bundle / floor:.2f}",
            per_bundle / floor <= GOAL_RATIO and set(statuses) == {"published"},
            goal=f"per bundle / baseline <= {GOAL_RATIO:g}, all published",
        )


def tasks_done(log: Path, task: str, *, fitted: bool = False) -> int:
    """How many `task` runs the worker logged as succeeded; with `fitted`, only those that returned something (a
    refit that found its change already fitted returns None)."""
    lines = log.read_text(errors="replace").splitlines()
    return sum(
        1 for line in lines if f"{task}[" in line and "succeeded" in line and not (fitted and line.endswith("None"))
    )


if __name__ == "__main__":
    sys.exit(main())
