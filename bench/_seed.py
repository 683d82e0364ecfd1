"""Fill a database with a realistic volume of published PTS results for benchmarks, through the current models
(nvmedb.bulk.insert_rows: COPY on PostgreSQL, bulk_create elsewhere), so a fresh database seeds on today's schema.
tests/test_bench_seeders.py runs every seeder here at a tiny size, on SQLite and on PostgreSQL.

    from bench import _seed
    url = _seed.bench_database_url("nvmedb_bench_browse")
    created = _seed.ensure_database(url)          # CREATE DATABASE when missing or never fully seeded (reseed=True
                                                  # drops it first); the seeders mark a database seeded at their end
    _seed.setup_django(url)                       # DJANGO_SETTINGS_MODULE=nvmedb.settings.test, django.setup()
    _seed.migrate()
    summary = _seed.seed(drive_models=20, submissions_for_big_model=1000, measurements_total=1_000_000)
    summary = _seed.seed_export(runs=800, rounds=25)   # the export benchmark's data set instead

Database names get NVMEDB_BENCH_DB_PREFIX in front when it is set (benchmarks beside others on a shared server).

Every submission holds the four PTS tests the way ingest stores them: an IOPS run (8 block sizes × 7 mixes × rounds
until steady, 5–8 rounds), throughput (write then read, 2 block sizes, 5 rounds each), latency (3 × 3 cells, 5 rounds)
and WSAT samples; every measurement has IOPS, bandwidth, bytes, latency mean / p99 / p99.99 / max with percentiles,
temperatures, timestamps, link utilisation and steady-window membership; steady-state windows for every tracking
variable; flags (bus-bound cells, non-compliant quick runs, imported runs, thermal throttling); a few percent of the
submissions withdrawn, hidden or held; and what the site derives after a commit: the aggregates with their
contributor counts and the drive page summaries (analysis.services.refresh_aggregates), the factor effects and
the export rows (datasets.export_rows).
The first drive model is the big one (`bench-big-drive`); the others share what is left of `measurements_total`.
Values follow a plausible drive curve with seeded noise, so runs are reproducible.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

DEFAULT_SERVER = "postgres://nvmedb:nvmedb-ci@127.0.0.1:5432/nvmedb"
KIB = 1024
IOPS_MIXES = (100, 95, 65, 50, 35, 5, 0)
IOPS_BLOCK_SIZES = (1024 * KIB, 128 * KIB, 64 * KIB, 32 * KIB, 16 * KIB, 8 * KIB, 4 * KIB, 512)
TP_BLOCK_SIZES = (1024 * KIB, 128 * KIB)
LAT_MIXES = (100, 65, 0)
LAT_BLOCK_SIZES = (512, 4 * KIB, 8 * KIB)
WSAT_SAMPLES = 30
LINKS = {3: (8.0, 3.52e9), 4: (16.0, 7.04e9), 5: (32.0, 14.08e9)}  # generation -> (GT/s, usable bytes/s at x4)
PATTERNS = {"iops": "randrw", "lat": "randrw", "wsat": "randwrite"}  # fio rw= as the client runs them


def bench_database_url(name: str) -> str:
    name = os.environ.get("NVMEDB_BENCH_DB_PREFIX", "") + name
    server = os.environ.get("DATABASE_URL") or DEFAULT_SERVER
    if server.startswith("sqlite"):  # a file of its own in the var folder (NVMEDB_VAR_DIR)
        return f"sqlite:///{Path(os.environ.get('NVMEDB_VAR_DIR') or REPO / 'var').resolve() / name}.sqlite3"
    if not server.startswith("postgres"):
        server = DEFAULT_SERVER
    return server.rsplit("/", 1)[0] + f"/{name}"


SEEDED_MARKER = "nvmedb_bench_seeded"  # a table the seeders create once every row is in (mark_seeded)


def ensure_database(url: str, *, reseed: bool = False) -> bool:
    """Create the database named by `url` if needed (drop it first when `reseed`); True when it must be seeded. A
    database whose seeding never finished (a run stopped midway: no SEEDED_MARKER) is dropped and made again, so it
    is neither measured half full nor seeded a second time on top of its first rows."""
    if url.startswith("sqlite"):
        import sqlite3

        path = Path(url.removeprefix("sqlite:///"))
        if path.exists() and not reseed:
            with sqlite3.connect(path) as db:
                marker = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", [SEEDED_MARKER]).fetchone()
            if marker:
                return False
        path.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        return True
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and not reseed:
            with psycopg.connect(url) as db:
                if db.execute("SELECT to_regclass(%s) IS NOT NULL", [SEEDED_MARKER]).fetchone()[0]:
                    return False
        if exists:
            conn.execute(f'DROP DATABASE "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return True


def mark_seeded() -> None:
    """Record that every row of the seed is in: ensure_database keeps this database from now on."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE IF NOT EXISTS {SEEDED_MARKER} (finished text)")


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nvmedb.settings.test")
    import django

    django.setup()


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def settle() -> None:
    """The freshly loaded database as a site that has run a while has it. On PostgreSQL, VACUUM (ANALYZE): the
    visibility map set and the rows' hint bits written and frozen, work that autovacuum and the first readers of each
    page otherwise do in the middle of the measurements. With ANALYZE alone, autovacuum vacuumed the fresh 1 M-row
    database's loaded tables (2.4 GB) in the course of a browse benchmark run, whose HTTP first requests of the drive
    list grew 1.50× at p95 from 100 k rows (p50 1.05×); on databases seeded and settled, 0.91×. Elsewhere, and inside a
    transaction (VACUUM cannot run in one), ANALYZE."""
    from django.db import connection

    with connection.cursor() as cursor:
        vacuum = connection.vendor == "postgresql" and not connection.in_atomic_block  # (a test's transaction)
        cursor.execute("VACUUM (ANALYZE)" if vacuum else "ANALYZE")


@dataclass(frozen=True)
class SeedSummary:
    drive_models: int
    submissions: int
    big_model_submissions: int
    measurements: int
    seconds: float
    big_model_slug: str
    slugs: list[str]


@dataclass
class DriveProfile:
    read_4k: float  # 4 KiB random read IOPS at steady state
    write_4k: float
    seq_read: float  # bytes/s
    seq_write: float
    lat_4k: float  # ns, QD1 4 KiB write mean


def _profile(rng: random.Random) -> DriveProfile:
    return DriveProfile(
        read_4k=rng.uniform(350_000, 1_200_000),
        write_4k=rng.uniform(60_000, 350_000),
        seq_read=rng.uniform(2.5e9, 7.0e9),
        seq_write=rng.uniform(1.2e9, 5.5e9),
        lat_4k=rng.uniform(9_000, 30_000),
    )


def _iops(profile: DriveProfile, bs: int, mix: int) -> float:
    """Random IOPS of a cell: reads and writes combine harmonically, and large blocks are bandwidth-bound."""
    small = 1 / (mix / 100 / profile.read_4k + (100 - mix) / 100 / profile.write_4k)
    bandwidth = 1 / (mix / 100 / profile.seq_read + (100 - mix) / 100 / profile.seq_write) * 0.9
    return min(small * (4096 / max(bs, 4096)) ** 0.35, bandwidth / bs)


def measurements_per_submission(iops_rounds: int = 6) -> int:
    iops = iops_rounds * len(IOPS_MIXES) * len(IOPS_BLOCK_SIZES)
    return iops + 2 * len(TP_BLOCK_SIZES) * 5 + len(LAT_MIXES) * len(LAT_BLOCK_SIZES) * 5 + WSAT_SAMPLES


def seed(
    *,
    drive_models: int = 20,
    submissions_for_big_model: int = 1000,
    measurements_total: int = 1_000_000,
    random_seed: int = 1,
    batch_submissions: int = 100,
    log=print,
) -> SeedSummary:
    """Seed the connected (migrated, empty) database; see the module docstring for what it holds."""
    from django.db import transaction

    from analysis.models import DriveModel, Firmware, Host, PcieLink, PhysicalUnit, Round, TestRun, Vendor
    from datasets import export_rows
    from nvmedb.bulk import insert_rows
    from submissions.models import Submission

    started = time.perf_counter()
    rng = random.Random(random_seed)
    User = __import__("django.contrib.auth", fromlist=["get_user_model"]).get_user_model()
    users = User.objects.bulk_create([User(username=f"bench-contributor-{i}") for i in range(50)])
    vendors = Vendor.objects.bulk_create([Vendor(name=f"Bench Vendor {i}", slug=f"bench-vendor-{i}") for i in range(8)])
    models = []
    for i in range(drive_models):
        capacity = rng.choice((500_107_862_016, 1_000_204_886_016, 2_000_398_934_016, 3_840_755_982_336))
        name = "Bench Big Drive 1TB" if i == 0 else f"Bench Vendor {i % 8} SSD {900 + i} {capacity // 10**9}GB"
        models.append(
            DriveModel(
                vendor=vendors[i % len(vendors)],
                name=name,
                model_number=f"BENCH-{i:03d}",
                slug="bench-big-drive" if i == 0 else f"bench-drive-{i:03d}",
                capacity_bytes=1_000_204_886_016 if i == 0 else capacity,
                interface="nvme",
                form_factor=rng.choice(("M.2 2280", "U.2", "E1.S")),
            )
        )
    models = DriveModel.objects.bulk_create(models)
    profiles = {m.pk: _profile(rng) for m in models}
    firmwares = {
        m.pk: Firmware.objects.bulk_create([Firmware(drive_model=m, revision=f"FW{k}B2Q") for k in range(3)])
        for m in models
    }
    hosts = Host.objects.bulk_create(
        [Host(fingerprint=hashlib.sha256(f"bench-host-{i}".encode()).hexdigest(), cpu_model=f"Bench CPU {i}",
              cpu_count=16 + i, memory_bytes=64 * 1024**3, os_name="Debian GNU/Linux 12 (bookworm)",
              kernel="6.1.0-13-amd64", architecture="x86_64") for i in range(30)]
    )  # fmt: skip

    per_submission = measurements_per_submission()
    big = submissions_for_big_model
    remaining = max(measurements_total - big * per_submission, 0)
    others = math.ceil(remaining / per_submission / max(drive_models - 1, 1)) if drive_models > 1 else 0
    plan = [models[0]] * big + [m for m in models[1:] for _ in range(others)]
    rng.shuffle(plan)
    log(f"seeding {len(plan)} submissions (~{per_submission} measurements each, {big} of {models[0].slug})")

    base_time = datetime(2026, 1, 1, tzinfo=timezone.utc)
    written = 0
    for start in range(0, len(plan), batch_submissions):
        batch = plan[start : start + batch_submissions]
        with transaction.atomic():
            written += _seed_batch(
                batch, start, rng, users, hosts, firmwares, profiles, base_time,
                insert_rows, Submission, PhysicalUnit, PcieLink, TestRun, Round,
            )  # fmt: skip
        log(f"  {start + len(batch)} submissions, {written:,} measurements, {time.perf_counter() - started:.0f} s")
    refresh_drive_models(models)
    export_rows.rebuild_all()  # the measurements CSV's rows, as ingest writes them (a publish rewrites its own)
    settle()
    mark_seeded()
    return SeedSummary(
        drive_models=len(models),
        submissions=len(plan),
        big_model_submissions=big,
        measurements=written,
        seconds=time.perf_counter() - started,
        big_model_slug=models[0].slug,
        slugs=[m.slug for m in models],
    )


@contextmanager
def no_factor_refits():
    """The refit each aggregate refresh queues after its commit (analysis.tasks.queue_factor_refit) left out: the
    seeders fit every drive once themselves, afterwards."""
    from analysis.drive_changes import drive_data_changed
    from analysis.tasks import queue_factor_refit

    drive_data_changed.disconnect(dispatch_uid="analysis.factor-refit")
    try:
        yield
    finally:
        drive_data_changed.connect(queue_factor_refit, dispatch_uid="analysis.factor-refit")


def refresh_drive_models(models) -> None:
    """What the site derives after a commit, done here in this process: every drive's aggregates (with their
    contributor counts) and page summary, then its factor model, fitted once (the refit the services queue on commit
    is not queued: it would fit the same data again)."""
    from analysis import services
    from analysis.factor_effects import refresh_factor_effects
    from browse.summaries import rebuild_summary

    with no_factor_refits():
        for model in models:
            services.refresh_aggregates(drive_model=model)
            rebuild_summary(model.pk)  # the after-commit task's work (a no-op when that task already ran it)
    for model in models:
        refresh_factor_effects(model)


def seed_export(*, runs: int = 800, rounds: int = 25, drive_models: int = 60, log=print) -> SeedSummary:
    """The export benchmark's data set: `runs` IOPS runs of `rounds` rounds × 56 cells each (800 × 25 × 56 is about
    1.1 million measurement rows), spread over `drive_models` drives; every 25th submission withdrawn, every 40th
    hidden, 1 % of the measurements flagged bus-bound. Parent rows through the factories, measurements and flags
    through nvmedb.bulk.insert_rows (COPY on PostgreSQL)."""

    from analysis.models import Flag, Measurement, Round
    from analysis.tests import factories
    from datasets import export_rows
    from nvmedb.bulk import insert_rows

    started = time.perf_counter()
    user = factories.UserFactory(username="bench")
    vendors = [factories.VendorFactory(name=f"Bench Vendor {i}") for i in range(min(10, drive_models))]
    drives = [factories.DriveModelFactory(vendor=vendors[i % len(vendors)]) for i in range(drive_models)]
    hosts = [factories.HostFactory() for _ in range(min(20, runs))]
    links = [factories.PcieLinkFactory(generation=g, speed_gts={3: 8.0, 4: 16.0, 5: 32.0}[g]) for g in (3, 4, 5)]
    test_runs = []
    for i in range(runs):
        status, hidden = ("withdrawn", False) if i % 25 == 0 else ("published", i % 40 == 1)
        drive = drives[i % len(drives)]
        test_runs.append(
            factories.TestRunFactory(
                submission=factories.SubmissionFactory(uploader=user, status=status, hidden=hidden),
                drive_model=drive,
                firmware=factories.FirmwareFactory(drive_model=drive, revision=f"FW{i % 3}"),
                host=hosts[i % len(hosts)],
                pcie_link=links[i % len(links)],
                steady_round=rounds,
                derived_compliant=True,
            )
        )
    written = flagged = 0
    now = datetime.now(timezone.utc)
    for run in test_runs:  # one run at a time: memory stays flat at any size
        round_rows = insert_rows([Round(test_run=run, phase="wdpc", number=n) for n in range(1, rounds + 1)])
        measurements = []
        for row in round_rows:
            for mix in IOPS_MIXES:
                for bs in IOPS_BLOCK_SIZES:
                    total = (
                        800_000 * (4096 / max(bs, 4096)) ** 0.8 * (0.4 + 0.6 * mix / 100) * (1 + 0.01 * row.number)
                        + row.id % 97
                    )
                    reads, writes = total * mix / 100, total * (100 - mix) / 100
                    at = now - timedelta(seconds=row.id * 61 + len(measurements))
                    key = f"iops-r{row.number}-rw{mix}-bs{bs}"
                    measurements.append(
                        Measurement(
                            round=row, test_run=run, drive_model_id=run.drive_model_id, run_key=key,
                            block_size_bytes=bs, read_pct=mix, pattern="randrw", threads=4, iodepth=32,
                            read_iops=reads, write_iops=writes, total_iops=total, read_bw_bytes_per_s=reads * bs,
                            write_bw_bytes_per_s=writes * bs, total_bw_bytes_per_s=total * bs,
                            read_bytes=int(reads * bs * 60), write_bytes=int(writes * bs * 60),
                            lat_mean_ns=128 / total * 1e9, lat_max_ns=9e6 + row.id % 1000,
                            lat_p99_ns=9e5 + row.id % 777, lat_p9999_ns=3e6 + row.id % 555, percentiles_ns={},
                            runtime_s=60.0, temperature_before_k=318.0 + row.number % 7,
                            temperature_after_k=325.0 + row.number % 9,
                            link_utilization=min(total * bs / 7e9, 1.0), in_steady_window=row.number > rounds - 5,
                            started_at=at, finished_at=at + timedelta(seconds=60), raw_file=f"fio/{key}.json",
                            json_path="$.jobs[*]", missing={}, clat_percentiles_ns={},
                        )
                    )  # fmt: skip
        insert_rows(measurements, batch_size=5000)
        written += len(measurements)
        steady = [m for m in measurements if m.in_steady_window]
        run.headline = {
            key: _mean([m.total_iops for m in steady if (m.block_size_bytes, m.read_pct) == cell])
            for key, cell in (("iops_4k_read", (4096, 100)), ("iops_4k_write", (4096, 0)),
                              ("iops_64k_65_35", (65536, 65)))
        }  # fmt: skip
        run.save(update_fields=["headline"])
        flags = [
            Flag(submission_id=run.submission_id, test_run=run, measurement_id=m.pk, kind="bus_bound",
                 reason="benchmark flag")
            for m in measurements
            if m.pk % 100 == 0
        ]  # fmt: skip
        flagged += len(insert_rows(flags))
    refresh_drive_models(drives)
    export_rows.rebuild_all()  # the measurements CSV's rows, as ingest writes them
    settle()
    mark_seeded()
    seconds = time.perf_counter() - started
    log(f"seeded {written:,} measurement rows ({flagged:,} flagged) in {seconds:.0f} s")
    return SeedSummary(
        drive_models=len(drives),
        submissions=runs,
        big_model_submissions=0,
        measurements=written,
        seconds=seconds,
        big_model_slug=drives[0].slug,
        slugs=[d.slug for d in drives],
    )


def _status(rng: random.Random) -> tuple[str, bool]:
    roll = rng.random()
    if roll < 0.02:
        return "withdrawn", False
    if roll < 0.03:
        return "published", True
    if roll < 0.04:
        return "held", False
    return "published", False


def _seed_batch(batch, offset, rng, users, hosts, firmwares, profiles, base_time,
                insert_rows, Submission, PhysicalUnit, PcieLink, TestRun, Round) -> int:  # fmt: skip
    from analysis.models import Flag, Measurement, SteadyStateWindow

    submissions, units, links = [], [], []
    for i, model in enumerate(batch):
        n = offset + i
        status, hidden = _status(rng)
        created = base_time + timedelta(hours=n)
        digest = hashlib.sha256(f"bench-submission-{n}".encode()).hexdigest()
        submissions.append(
            Submission(id=uuid.UUID(int=rng.getrandbits(128)), uploader=users[n % len(users)], sha256=digest,
                       size=5_000_000, storage_name=f"bundles/bench/{digest}.nvmedb.tar.gz", status=status,
                       hidden=hidden, report={"outcome": status}, created=created,
                       published_at=created if status in ("published", "withdrawn") else None,
                       withdrawn_at=created + timedelta(days=1) if status == "withdrawn" else None)
        )  # fmt: skip
        units.append(PhysicalUnit(drive_model=model, serial_hash=hashlib.sha256(f"unit-{n // 2}".encode()).hexdigest()))
        generation = rng.choice((3, 4, 4, 4, 5))
        speed, usable = LINKS[generation]
        links.append(
            PcieLink(pci_address="0000:01:00.0", capable_speed_gts=speed, capable_width=4, speed_gts=speed, width=4,
                     generation=generation, status_note="ok", max_payload_bytes=256, max_read_request_bytes=512,
                     path_speed_gts=speed, path_width=4, raw_bandwidth_bytes_per_s=speed * 1e9 * 4 * 128 / 130 / 8,
                     usable_bandwidth_bytes_per_s=usable, below_capability=False, source_file="system/lspci.txt",
                     missing={})
        )  # fmt: skip
    Submission.objects.bulk_create(submissions)
    # serial hashes repeat for the same unit: get or reuse in one query
    existing = {
        (u.drive_model_id, u.serial_hash): u
        for u in PhysicalUnit.objects.filter(serial_hash__in=[u.serial_hash for u in units])
    }
    fresh = {}
    for unit in units:
        key = (unit.drive_model_id, unit.serial_hash)
        if key not in existing and key not in fresh:
            fresh[key] = unit
    PhysicalUnit.objects.bulk_create(list(fresh.values()))
    existing.update(fresh)
    units = [existing[(u.drive_model_id, u.serial_hash)] for u in units]
    links = insert_rows(links)

    test_runs = []
    for i, model in enumerate(batch):
        quick = rng.random() < 0.05
        imported = not quick and rng.random() < 0.03
        firmware = rng.choice(firmwares[model.pk])
        started = submissions[i].created
        derived = not quick and not imported  # the server's own verdict; a held submission's runs lose `compliant`
        held = submissions[i].status == "held"
        reasons = (["held: waiting for review"] if held else []) + (
            ["quick profile: short cells, small ranges"] if quick else []
        )
        for test in ("iops", "tp", "lat", "wsat"):
            test_runs.append(
                TestRun(submission=submissions[i], drive_model=model, firmware=firmware, unit=units[i],
                        host=hosts[rng.randrange(len(hosts))], pcie_link=links[i], test=test,
                        edition="enterprise", profile="quick" if quick else ("imported" if imported else "pts"),
                        compliant=derived and not held, derived_compliant=derived, compliance_reasons=reasons,
                        threads=1 if test == "lat" else 4, iodepth=1 if test == "lat" else 32, target_kind="device",
                        target_size_bytes=model.capacity_bytes, active_range_bytes=model.capacity_bytes,
                        write_cache="disabled", purge_method="format-crypto-erase", fio_version="fio-3.33",
                        ioengine="libaio", scheduler="none", tool_versions={"fio": "fio-3.33"},
                        source="ssspt" if imported else "client", signed=not imported, started_at=started,
                        finished_at=started + timedelta(hours=6), warning_temperature_k=343.0,
                        critical_temperature_k=358.0, percentage_used=rng.randrange(0, 20),
                        power_on_hours=rng.randrange(10, 20000), data_written_before_bytes=rng.randrange(10**12, 10**14),
                        missing={})
            )  # fmt: skip
    test_runs = insert_rows(test_runs)

    rounds, cells = [], []  # cells: (run, round index, phase, series, number, bs, mix, value fn inputs)
    for run in test_runs:
        profile = profiles[run.drive_model_id]
        if run.test == "iops":
            n_rounds = rng.choice((5, 6, 6, 7))
            for number in range(1, n_rounds + 1):
                rounds.append(Round(test_run=run, phase="wdpc", series="", number=number))
                cells.extend(
                    (run, len(rounds) - 1, "wdpc", number, bs, mix, n_rounds)
                    for mix in IOPS_MIXES
                    for bs in IOPS_BLOCK_SIZES
                )
        elif run.test == "tp":
            for phase, mix in (("tp-write", 0), ("tp-read", 100)):
                for bs in TP_BLOCK_SIZES:
                    for number in range(1, 6):
                        rounds.append(Round(test_run=run, phase=phase, series=f"{phase}.bs{bs}", number=number))
                        cells.append((run, len(rounds) - 1, phase, number, bs, mix, 5))
        elif run.test == "lat":
            for number in range(1, 6):
                rounds.append(Round(test_run=run, phase="wdpc", series="", number=number))
                cells.extend(
                    (run, len(rounds) - 1, "wdpc", number, bs, mix, 5) for mix in LAT_MIXES for bs in LAT_BLOCK_SIZES
                )
        else:
            for number in range(1, WSAT_SAMPLES + 1):
                rounds.append(Round(test_run=run, phase="wsat", series="", number=number))
                cells.append((run, len(rounds) - 1, "wsat", number, 4096, 0, WSAT_SAMPLES))
    rounds = insert_rows(rounds)

    measurements: list = []
    bus_bound: list = []  # (measurement, run, utilisation): flagged once the measurements have their ids
    headline: dict[int, dict[str, list[float]]] = {}
    series_values: dict[tuple[int, str, int, int], list[tuple[int, float]]] = {}
    cumulative: dict[int, int] = {}
    flags: list = []
    clock: dict[int, datetime] = {}
    for run, round_index, phase, number, bs, mix, n_rounds in cells:
        profile = profiles[run.drive_model_id]
        usable = run.pcie_link.usable_bandwidth_bytes_per_s
        noise = rng.gauss(1.0, 0.015)
        warmup = 1 + 0.25 * math.exp(-number)  # preconditioning: early rounds are faster, then settle
        if run.test == "wsat":
            iops = profile.write_4k * (0.35 + 2.6 * math.exp(-number / 5)) * noise
        elif run.test == "tp":
            iops = (profile.seq_read if mix == 100 else profile.seq_write) / bs * noise * warmup
        elif run.test == "lat":
            iops = 1e9 / (profile.lat_4k * (bs / 4096) ** 0.3 * (1.8 - 0.8 * mix / 100)) * noise
        else:
            iops = _iops(profile, bs, mix) * noise * warmup
        if iops * bs > usable:
            iops = usable / bs * rng.uniform(0.93, 0.985)
        reads, writes = iops * mix / 100, iops * (100 - mix) / 100
        bw = iops * bs
        lat_mean = run.threads * run.iodepth / iops * 1e9
        p99, p9999 = lat_mean * rng.uniform(2.5, 4), lat_mean * rng.uniform(6, 25)
        slat = min(lat_mean * 0.02, rng.uniform(1_500, 4_000))
        write_bytes = int(writes * bs * 60)
        cumulative[run.id] = cumulative.get(run.id, 0) + write_bytes
        at = clock.get(run.id) or run.started_at
        clock[run.id] = at + timedelta(seconds=61)
        temperature = 310 + 25 * (1 - math.exp(-(at - run.started_at).total_seconds() / 3600)) + rng.uniform(-1, 1)
        in_window = number > n_rounds - 5 if run.test != "wsat" else False
        direction = "read" if mix == 100 else "write"
        pattern = PATTERNS.get(run.test) or ("read" if mix == 100 else "write")
        run_key = f"{run.test}-r{number:02d}-rw{mix:03d}-bs{bs}"
        percentiles = {direction: {"99.000000": round(p99), "99.990000": round(p9999)}}
        measurement = Measurement(
            round=rounds[round_index], test_run=run, drive_model_id=run.drive_model_id, run_key=run_key,
            block_size_bytes=bs, read_pct=mix, pattern=pattern, threads=run.threads, iodepth=run.iodepth,
            read_iops=reads, write_iops=writes, total_iops=iops, read_bw_bytes_per_s=reads * bs,
            write_bw_bytes_per_s=writes * bs, total_bw_bytes_per_s=bw, read_bytes=int(reads * bs * 60),
            write_bytes=write_bytes, cumulative_write_bytes=cumulative[run.id], lat_mean_ns=lat_mean,
            read_lat_mean_ns=lat_mean if mix else None, write_lat_mean_ns=lat_mean if mix < 100 else None,
            lat_max_ns=p9999 * 3, lat_p99_ns=p99, lat_p9999_ns=p9999, percentiles_ns=percentiles,
            clat_mean_ns=lat_mean - slat, read_clat_mean_ns=lat_mean - slat if mix else None,
            write_clat_mean_ns=lat_mean - slat if mix < 100 else None, clat_max_ns=p9999 * 3 - slat,
            clat_p99_ns=p99 - slat, clat_p9999_ns=p9999 - slat,
            clat_percentiles_ns={direction: {"99.000000": round(p99 - slat), "99.990000": round(p9999 - slat)}},
            slat_mean_ns=slat, read_slat_mean_ns=slat if mix else None, write_slat_mean_ns=slat if mix < 100 else None,
            slat_max_ns=slat * 40, runtime_s=60.0, temperature_before_k=temperature - 1,
            temperature_after_k=temperature, link_utilization=bw / usable, in_steady_window=in_window, started_at=at,
            finished_at=at + timedelta(seconds=60), raw_file=f"fio/{run_key}.json", json_path="$.jobs[*]", missing={},
        )  # fmt: skip
        measurements.append(measurement)
        if bw / usable >= 0.9:
            bus_bound.append((measurement, run, bw / usable))
        if in_window:
            value = {"iops": iops, "tp": bw, "lat": lat_mean}[run.test]
            headline.setdefault(run.id, {}).setdefault(f"{phase}.{bs}.{mix}", []).append(value)
            series_values.setdefault((run.id, phase, bs, mix), []).append((number, value))
    written = len(insert_rows(measurements, batch_size=5000))
    flags.extend(
        Flag(submission_id=run.submission_id, test_run=run, measurement_id=measurement.pk, kind="bus_bound",
             reason=f"Moved {share:.0%} of what the link can carry.")
        for measurement, run, share in bus_bound
    )  # fmt: skip

    windows = []
    tracked = {"iops": [("wdpc", 4096, 0), ("wdpc", 65536, 65), ("wdpc", 1048576, 100)],
               "tp": [(p, bs, m) for p, m in (("tp-write", 0), ("tp-read", 100)) for bs in TP_BLOCK_SIZES],
               "lat": [("wdpc", 4096, 0)]}  # fmt: skip
    metric = {"iops": "total_iops", "lat": "lat_mean_ns"}
    for run in test_runs:
        values = headline.get(run.id, {})
        if run.test == "iops":
            run.headline = {
                key: sum(values[cell]) / len(values[cell])
                for key, cell in (("iops_4k_read", "wdpc.4096.100"), ("iops_4k_write", "wdpc.4096.0"),
                                  ("iops_64k_65_35", "wdpc.65536.65")) if cell in values
            }  # fmt: skip
        elif run.test == "tp":
            run.headline = {"bw_1m_read": _mean(values.get("tp-read.1048576.100")),
                            "bw_1m_write": _mean(values.get("tp-write.1048576.0"))}  # fmt: skip
        elif run.test == "lat":
            mean = _mean(values.get("wdpc.4096.0"))
            run.headline = {"lat_4k_mean": mean, "lat_4k_p9999": mean * 12 if mean else None}
        for phase, bs, mix in tracked.get(run.test, []):
            points = sorted(series_values.get((run.id, phase, bs, mix), []))
            if len(points) < 5:
                continue
            rounds_in, ys = [p[0] for p in points], [p[1] for p in points]
            average = sum(ys) / len(ys)
            mean_x = sum(rounds_in) / len(rounds_in)
            slope = sum((x - mean_x) * (y - average) for x, y in points) / sum((x - mean_x) ** 2 for x in rounds_in)
            column = metric.get(run.test) or ("read_bw_bytes_per_s" if mix == 100 else "write_bw_bytes_per_s")
            steady = max(ys) - min(ys) <= 0.2 * average and abs(slope) * 4 <= 0.1 * average
            windows.append(
                SteadyStateWindow(test_run=run, variable=f"{run.test}.{column}.rw{mix:03d}.bs{bs}", phase=phase,
                                  metric=column, block_size_bytes=bs, read_pct=mix, first_round=rounds_in[0],
                                  last_round=rounds_in[-1], rounds=rounds_in, values=ys, average=average,
                                  data_excursion=max(ys) - min(ys), data_excursion_limit=0.2 * average, slope=slope,
                                  intercept=average - slope * mean_x, slope_excursion=abs(slope) * 4,
                                  slope_excursion_limit=0.1 * average, steady=steady,
                                  steady_round=rounds_in[-1] if steady else None, claimed={"steady": steady},
                                  claimed_steady=steady, claim_differs=False, note="")
            )  # fmt: skip
        run.steady = None if run.test == "wsat" else True
        run.steady_round = (
            None if run.test == "wsat" else max((w.last_round for w in windows if w.test_run is run), default=None)
        )
        if not run.compliant and run.profile == "quick":
            flags.append(Flag(submission_id=run.submission_id, test_run=run, kind="non_compliant",
                              reason="Quick profile: 1-second cells and 1 GiB ranges, not the PTS."))  # fmt: skip
        if run.source != "client" and run.test == "iops":
            flags.append(Flag(submission_id=run.submission_id, kind="imported",
                              reason="Imported from ssspt results (MIT); not signed; steady state re-derived here."))  # fmt: skip
        if run.test == "wsat" and rng.random() < 0.03:
            flags.append(Flag(submission_id=run.submission_id, test_run=run, kind="thermal_throttle",
                              reason="throttle counters grew during the run: thm_temp1_trans_count +3"))  # fmt: skip
    TestRun.objects.bulk_update(test_runs, ["headline", "steady", "steady_round"], batch_size=1000)
    insert_rows(windows)
    insert_rows(flags)
    return written


def _mean(values: list[float] | None) -> float | None:
    return sum(values) / len(values) if values else None


def seed_content(reference: list, *, drive_slug: str = "bench-big-drive", spread: float = 0.03, log=print) -> int:
    """Give each submission of `drive_slug` the content a run of its own on another unit of that drive leaves
    (submissions.content): digests of fio outputs no one else holds, and `reference`'s signatures (the Fingerprints
    of a bundle of the drive) with their figures moved as a different unit and run move them: IOPS, bandwidth and
    bytes by one factor (a unit's lognormal factor of `spread` times a run's of `spread`: consecutive rounds of the
    shared SSSPT runs differ by 2.4-5.2 %), mean latencies by its inverse, the largest latency by a factor of its own
    (tails differ by tens of percent), the runtime as it was. Without them the content check of an ingest meets empty
    tables, which no site with submissions of a popular drive has. Returns the signatures written (one transaction:
    a run stopped midway leaves none)."""
    from django.db import transaction

    from submissions.content import SIGNATURE, record_fingerprints
    from submissions.models import Submission

    rng = random.Random(f"content-{drive_slug}")
    submissions = list(Submission.objects.filter(test_runs__drive_model__slug=drive_slug).distinct().only("pk"))
    written = 0
    with transaction.atomic():
        for submission in submissions:
            unit = rng.lognormvariate(0, spread)
            own = [_moved(f, unit, spread, rng) for f in reference]
            record_fingerprints(submission=submission, fingerprints=own)  # as the site stores a bundle's
            written += sum(1 for f in own if f.kind == SIGNATURE)
    log(f"seeded content: {len(submissions)} submissions of {drive_slug}, {written:,} signatures")
    return written


def _moved(found, unit: float, spread: float, rng: random.Random):
    """One of a reference bundle's Fingerprints as another unit's run has it (seed_content): a digest of its own, or
    the signature's figures moved."""
    from dataclasses import replace

    from submissions.content import SIGNATURE

    if found.kind != SIGNATURE:
        return replace(found, digest=rng.randbytes(32).hex())
    runtime, iops, bw, io_bytes, lat_mean, clat_mean, lat_max = found.values
    factor = unit * rng.lognormvariate(0, spread)

    def scaled(value, by):
        return None if value is None else value * by

    figures = (runtime, iops * factor, scaled(bw, factor), scaled(io_bytes, factor), scaled(lat_mean, 1 / factor),
               scaled(clat_mean, 1 / factor), scaled(lat_max, rng.lognormvariate(0, 0.3)))  # fmt: skip
    return replace(found, values=figures)
