"""How long the server takes to ingest a full-size PTS bundle, against merely decompressing and parsing its JSON.

The bundle is generated from the real fio 3.8 json+ outputs of the SSSPT run in ../shared/samples: IOPS to steady
state in 6 rounds (8 block sizes × 7 mixes × 6 = 336 runs) plus WIPC, throughput (2 block sizes, write and read,
5 rounds each), latency (3 block sizes × 3 mixes × 5 rounds) and 30 WSAT samples. Each run's output is the sample
of the same cell; for throughput, latency and WSAT runs a copy of a sample has its job options set to what the run
declares (rw, rwmixread) and its timestamp moved onto the run's clock, so every cross-check runs and passes.

Run on PostgreSQL (DATABASE_URL=postgres://...): it creates and drops its own test database.

    DATABASE_URL=postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb .venv/bin/python bench/ingest_benchmark.py

Prints: the baseline (gzip + tar read + orjson.loads of every fio output), verify_bundle (extract + hashes +
signature), ingest_submission (parse, checks, steady state, rows), their ratio, and bundles per second per worker.
Targets: (verify + ingest) / baseline <= 3 and >= 1 bundle per second per worker process.
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
SAMPLES = REPO.parent / "shared" / "samples" / "ssspt-hp-iops-1"
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nvmedb.settings.test")

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
    from nvmedb_client.tracking import evaluate_runs

    (root / "fio").mkdir(parents=True)
    (root / "jobs").mkdir()
    clock = datetime(2026, 11, 22, 8, 0, tzinfo=timezone.utc)
    runs, files, summaries = [], [], {}

    def add(run_id, test, phase, round_number, pattern, bs, bs_name, read, doc_read, options=None):
        nonlocal clock
        doc = copy.deepcopy(sample(bs_name, doc_read, round_number))
        start, end = clock, clock + timedelta(seconds=61)
        clock = end + timedelta(seconds=1)
        doc["timestamp"] = int(end.timestamp())
        doc["jobs"][0]["job options"].update(options or {})
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
            "smart_before": None,
            "smart_after": None,
            "started_at": start.isoformat().replace("+00:00", "Z"),
            "finished_at": end.isoformat().replace("+00:00", "Z"),
        }
        (root / run["output_file"]).write_text(json.dumps(doc))
        (root / run["job_file"]).write_text(f"[{run_id}]\nrw={pattern}\nbs={bs}\nnumjobs=2\niodepth=16\nruntime=60\n")
        files.extend([run["job_file"], run["output_file"]])
        runs.append(run)
        summaries[run_id] = summarize(doc)

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

    manifest = {
        "format_version": 1,
        "client": {"name": "nvmedb-client", "version": "bench"},
        "created_at": runs[-1]["finished_at"],
        "profile": "pts",
        "edition": "client",
        "compliance": {"compliant": False, "reasons": ["benchmark bundle generated from SSSPT samples"]},
        "target": {
            "kind": "device",
            "path": "/dev/nvme0n1",
            "size_bytes": 256 * 10**9,
            "active_range_bytes": 192 * 10**9,
        },
        "plan": {"profile": "pts", "tests": ["iops", "tp", "lat", "wsat"]},
        "timing": {"started_at": runs[0]["started_at"], "finished_at": runs[-1]["finished_at"]},
        "tools": {"fio": "fio-3.8", "nvme-cli": None},
        "runs": runs,
        "steady_state": evaluate_runs(runs, summaries),
    }
    return manifest, files


def baseline(bundle_path: Path) -> float:
    """Decompress the archive and parse every fio output with orjson, nothing else."""
    import orjson

    started = time.perf_counter()
    with tarfile.open(bundle_path, "r:gz") as archive:
        for member in archive:
            if member.isfile() and member.name.startswith("files/fio/"):
                orjson.loads(archive.extractfile(member).read())
    return time.perf_counter() - started


def main() -> None:
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL server (postgres://user:password@host:port/name).")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment

    from nvmedb_client.bundle import verify_bundle, write_bundle
    from nvmedb_client.signing import load_or_create_signing_key

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, keepdb=False)
    try:
        from django.contrib.auth import get_user_model

        from analysis.bundle_reader import read_bundle
        from analysis.ingest import ingest_submission
        from analysis.models import Measurement
        from submissions.models import Submission

        with tempfile.TemporaryDirectory(prefix="nvmedb-bench-") as tmp:
            work = Path(tmp)
            manifest, files = build_run_dir(work / "run")
            key = load_or_create_signing_key(work / "key")
            bundle_path = write_bundle(
                run_dir=work / "run",
                manifest=manifest,
                files=files,
                signing_key=key,
                out_path=work / "full.nvmedb.tar.gz",
            )
            fio_files = sum(1 for f in files if f.startswith("fio/"))
            iops_files = sum(1 for r in manifest["runs"] if r["test"] == "iops" and r["phase"] == "wdpc")
            print(
                f"bundle: {bundle_path.stat().st_size / 1e6:.1f} MB compressed, {fio_files} fio json+ outputs "
                f"({iops_files} IOPS in 6 rounds, plus WIPC, throughput, latency, WSAT)"
            )

            user = get_user_model().objects.create(username="bench")
            base, verify, ingest, reading = [], [], [], []
            for i in range(REPEATS):
                base.append(baseline(bundle_path))
                started = time.perf_counter()
                bundle = verify_bundle(bundle_path, extract_to=work / f"extract-{i}")
                verify.append(time.perf_counter() - started)
                submission = Submission.objects.create(
                    uploader=user,
                    sha256=hashlib.sha256(b"%d" % i).hexdigest(),
                    size=1,
                    storage_name="b",
                    status="ingesting",
                )
                started = time.perf_counter()
                read_bundle(bundle)
                reading.append(time.perf_counter() - started)
                started = time.perf_counter()
                outcome = ingest_submission(submission=submission, bundle=bundle)
                ingest.append(time.perf_counter() - started)
                if outcome.status == "rejected":
                    sys.exit(f"the benchmark bundle was rejected: {outcome.reasons[:3]}")
            rows = Measurement.objects.filter(test_run__submission=submission).count()

        print(f"measurement rows per bundle: {rows}; outcome: {outcome.status}; {REPEATS} runs, median (min):")
        for label, values in (
            ("baseline (gunzip + tar + orjson.loads of every fio output)", base),
            ("verify_bundle (extract, SHA-256 of every file, signature) ", verify),
            ("ingest_submission (parse, cross-check, steady state, rows)", ingest),
            ("  of which read_bundle (parse + checks, no database)      ", reading),
        ):
            print(f"  {label}: {statistics.median(values) * 1000:7.1f} ms ({min(values) * 1000:6.1f})")
        for label, pick in (("median", statistics.median), ("min", min)):
            b, v, g = pick(base), pick(verify), pick(ingest)
            print(
                f"  {label:6}: ingest / baseline {g / b:5.2f} (target <= 3); (verify + ingest) / baseline "
                f"{(v + g) / b:5.2f}; bundles per second per worker {1 / (v + g):5.2f} (target >= 1)"
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
