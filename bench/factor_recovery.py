"""Does the factor model recover effects injected into real bundles, sent through the real upload path? (issue 20)

Device bundles of one drive model (the Samsung PM983 of the shared SSSPT samples: its real fio outputs of the
4 KiB write, 64 KiB 65/35 and 1 MiB read cells, rounds 1-5, with the real nvme-cli and lspci samples) are made one per
unit, each unit with its own serial and 1.5 % unit noise (0.3 % per round), every fio figure scaled consistently
(IOPS, bandwidth and bytes up, latencies down, smart-log data units with them), so every plausibility gate and
cross-check passes. The drive is taken as a Gen4 x4 one (LnkCap 16 GT/s x4) made 13 × faster on the 4 KiB and
64 KiB cells, so its 64 KiB 65/35 reads (2.2 GB/s) fill more than a Gen2 x4 link. Injected per factor level:

- a Gen2 x4 slot (the upstream port's LnkCap 5 GT/s x4): 64 KiB 65/35 × 0.5, under that link's usable bandwidth;
- a link downtrained from 16 to 8 GT/s: 64 KiB 65/35 × 0.85;
- +25 % spare (the namespace 80 % of tnvmcap): 4 KiB write × 1.25 (× 1.25^0.4 per +10 points, as the model quotes it);
- thermal throttling (smart-log thermal-management counters growing, 345 K): × 0.8;
- 80 % wear (smart-log percentage used; the others 2 %): × 0.9 (per +10 points: 0.9^(10/78));
- an older firmware (id-ctrl fr): × 0.93;
- a host CPU found only on the Gen2 box: no effect; the model must call it not separable from the link.

Each bundle is signed and uploaded by one of four accounts (past review) through POST /api/v1/submissions/, validated
by the submission task (the real Celery worker when REDIS_URL is set, eager otherwise), ingested and published; the
factor refit queued after the publishing commit writes the FactorEffect rows this reads back. Explanations are the
model's own (analysis.factor_model.FactorFit.explain on the same rows the refit reads).

Prints per factor the injected ratio, the estimate and its 95 % interval, PASS when the interval covers the injected
ratio; then the false explanations on normal units, the factor units held (not published), the factors not named
for their units, each against its goal of 0 with a verdict; and the load average at start and end. Exits 1 when a goal
is missed.

    NVMEDB_SHARED_SAMPLES=../shared/samples PYTHONPATH=client/src .venv/bin/python bench/factor_recovery.py
    ... bench/factor_recovery.py --units-per-level 2     # the intervals narrow
    ... bench/factor_recovery.py --normal-units 7 --seed 3

By default it runs on a throwaway SQLite database (migrated first) with eager tasks, whatever DATABASE_URL says. With
--real-worker it uses the database of DATABASE_URL and the configured bundle storage, and a Celery worker started
separately (with NVMEDB_REVIEW_FIRST_N=0, on REDIS_URL) validates. analysis/tests/test_factor_recovery.py runs a smaller version through the same
functions.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "client" / "src"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

WRITE, MIX = "iops_4k_write", "iops_64k_65_35"
FAST = 13.0  # the 4 KiB and 64 KiB cells of every unit × this: a Gen4 drive whose 64 KiB mix fills a Gen2 link
FIRMWARE, OLD_FIRMWARE = "EDA76F2Q", "EDA75B1Q"
HOST_CPU, GEN2_CPU = "Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz", "AMD EPYC 7302P 16-Core Processor"
NORMAL_WEAR, WORN = 2, 80
SPARE = 0.25  # spare ÷ user capacity
DRIVE_SECTION, PORT_SECTION = "3b:00.0", "5d:00.0"  # the sample lspci's drive and the root port put above it
CONTRIBUTORS = 7  # enough independent voices (aggregates.MIN_PEERS) for the outlier vote on later units


@dataclass(frozen=True)
class Level:
    """A factor level: its units' conditions and what it does to each metric (a ratio against a normal unit)."""

    name: str
    factor: str  # the FactorEffect factor it is checked on
    metric: str  # the metric it is checked on
    ratios: dict[str, float]  # injected, per metric (a metric not named: 1)
    expected: float | None  # the model's ratio (per step for continuous factors); None: expected not separable
    link: str = "gen4"  # gen4 | downtrained | gen2
    spare: float = 0.0
    throttled: bool = False
    wear: int = NORMAL_WEAR
    firmware: str = FIRMWARE
    cpu: str = HOST_CPU


LEVELS: tuple[Level, ...] = (
    Level("Gen2 x4 slot", "link_limited", MIX, {MIX: 0.5}, 0.5, link="gen2", cpu=GEN2_CPU),
    Level("downtrained 16→8 GT/s", "link_below_capability", MIX, {MIX: 0.85}, 0.85, link="downtrained"),
    Level("+25 % spare", "spare_fraction", WRITE, {WRITE: 1.25}, 1.25 ** (0.10 / SPARE), spare=SPARE),
    Level("thermal throttling", "throttled", WRITE, {WRITE: 0.8, MIX: 0.8}, 0.8, throttled=True),
    Level("80 % wear", "percentage_used", WRITE, {WRITE: 0.9, MIX: 0.9}, 0.9 ** (10 / (WORN - NORMAL_WEAR)),
          wear=WORN),
    Level("older firmware", "firmware", WRITE, {WRITE: 0.93, MIX: 0.93}, 0.93, firmware=OLD_FIRMWARE),
)  # fmt: skip
# checked on the Gen2 units: the CPU only they have cannot be told from their link
HOST_CPU_CHECK = ("host CPU only on the Gen2 box", "host_cpu", MIX)


@dataclass
class Unit:
    name: str
    serial: str
    level: Level | None  # None: a normal unit
    noise: float


@dataclass
class FactorLine:
    label: str
    factor: str
    metric: str
    injected: float | None
    ratio: float | None
    low: float | None
    high: float | None
    status: str
    passed: bool


@dataclass
class Report:
    lines: list[FactorLine] = field(default_factory=list)
    false_explanations: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    not_named: list[str] = field(default_factory=list)
    outliers: list[str] = field(default_factory=list)  # labelled outlier (analysis.outliers): a label, not a goal
    seconds: float = 0.0
    drive_slug: str = ""

    @property
    def ok(self) -> bool:
        return all(line.passed for line in self.lines) and not (self.false_explanations or self.held or self.not_named)


def population(units_per_level: int, normal_units: int, seed: int, levels=LEVELS) -> list[Unit]:
    rng = random.Random(seed)
    units = [Unit(f"normal-{i + 1}", f"S43NORM{i:05d}", None, rng.gauss(0, 0.015)) for i in range(normal_units)]
    for n, level in enumerate(levels):
        for i in range(units_per_level):
            units.append(Unit(f"{level.name} #{i + 1}", f"S43FACT{n:02d}{i:03d}", level, rng.gauss(0, 0.015)))
    return units


# --- bundles -------------------------------------------------------------------------------------------------------


def _sections_edit(text: str, edits: dict[str, dict[str, str]]) -> str:
    """LnkCap / LnkSta of the named lspci devices replaced: {device: {"LnkCap": "Speed …, Width x…", …}}."""
    out, current = [], None
    for line in text.split("\n"):
        if line and not line[0].isspace():
            current = line.split(" ", 1)[0]
        for key, value in edits.get(current, {}).items():
            marker = f"{key}: "
            if marker in line:
                head, rest = line.split(marker, 1)
                tail = rest.split(", ", 2)
                if key == "LnkCap":  # "Port #0, Speed 8GT/s, Width x4, ASPM …"
                    line = f"{head}{marker}{tail[0]}, {value}, " + rest.split(", ", 3)[3]
                else:  # "Speed 8GT/s, Width x4, TrErr- …"
                    line = f"{head}{marker}{value}, {tail[2]}"
        out.append(line)
    return "\n".join(out)


def _lspci(run_dir: Path, link: str) -> None:
    sta = {"gen4": "Speed 16GT/s, Width x4", "downtrained": "Speed 8GT/s, Width x4", "gen2": "Speed 5GT/s, Width x4"}
    port_cap = "Speed 5GT/s, Width x4" if link == "gen2" else "Speed 16GT/s, Width x16"
    path = run_dir / "system" / "lspci.txt"
    path.write_text(
        _sections_edit(
            path.read_text(),
            {
                DRIVE_SECTION: {"LnkCap": "Speed 16GT/s, Width x4", "LnkSta": sta[link]},
                PORT_SECTION: {"LnkCap": port_cap, "LnkSta": sta[link]},
            },
        )
    )


def _scale_fio(run_dir: Path, run: dict, factor: float) -> None:
    from analysis.tests.test_plausibility_ingest import _scale_direction
    from analysis.tests.test_plausibility_link import _scale_latency

    path = run_dir / run["output_file"]
    doc = json.loads(path.read_text())
    for job in doc["jobs"]:
        for direction in ("read", "write"):
            _scale_direction(job[direction], factor)
            _scale_latency(job[direction], factor)
    path.write_text(json.dumps(doc))


def _when(text: str):
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _smart_logs(run_dir: Path, manifest: dict, files: list[str], samples: Path, unit: Unit) -> None:
    """A smart-log before and after every run: data units moved by what fio read and wrote, power-on hours with the
    runs' clock, the unit's wear and temperature, and (throttled) thermal-management counters that grow."""
    from analysis.tests.bundles import SMART
    from nvmedb_client.fio_output import parse_fio_output, summarize

    level = unit.level
    (run_dir / "smart").mkdir(exist_ok=True)
    base = json.loads((samples / SMART).read_text())
    state = dict(base, percent_used=level.wear if level else NORMAL_WEAR)
    state["temperature"] = 345 if level and level.throttled else 310
    first = _when(manifest["runs"][0]["started_at"])
    for run in manifest["runs"]:
        summary = summarize(parse_fio_output((run_dir / run["output_file"]).read_bytes()))
        for side, moment in (("before", run["started_at"]), ("after", run["finished_at"])):
            if side == "after":
                state["data_units_read"] += math.ceil((summary.read_bytes or 0) / 512_000)
                state["data_units_written"] += math.ceil((summary.write_bytes or 0) / 512_000)
                if level and level.throttled:
                    state["thm_temp1_trans_count"] += 1
                    state["thm_temp1_total_time"] += 20
            state["power_on_hours"] = base["power_on_hours"] + int((_when(moment) - first).total_seconds() // 3600)
            path = f"smart/{run['id']}.{side}.json"
            (run_dir / path).write_text(json.dumps(state))
            run[f"smart_{side}"] = path
            files.append(path)


def build_bundle(work: Path, samples: Path, unit: Unit, key, rng: random.Random) -> Path:
    """A signed device bundle (pts profile) of `unit`, consistent in itself."""
    from analysis.tests import bundles
    from nvmedb_client.bundle import write_bundle
    from nvmedb_client.fio_output import parse_fio_output, summarize
    from nvmedb_client.tracking import evaluate_runs

    level = unit.level
    work.mkdir(parents=True)
    run_dir, manifest, files = bundles.consistent_run_dir(work, samples)
    bundles.add_system_files(run_dir, files, samples)
    for run in manifest["runs"]:
        metric = {4096: WRITE, 65536: MIX}.get(run["block_size_bytes"])
        injected = (level.ratios.get(metric, 1.0) if level else 1.0) if metric else 1.0
        fast = FAST if metric else 1.0
        _scale_fio(run_dir, run, fast * injected * (1 + unit.noise) * (1 + rng.gauss(0, 0.003)))
    summaries = {
        run["id"]: summarize(parse_fio_output((run_dir / run["output_file"]).read_bytes())) for run in manifest["runs"]
    }
    manifest["steady_state"] = evaluate_runs(manifest["runs"], summaries)
    system = run_dir / "system"
    id_ctrl = json.loads((system / "nvme-id-ctrl.json").read_text())
    id_ctrl["sn"], id_ctrl["fr"] = unit.serial, level.firmware if level else FIRMWARE
    (system / "nvme-id-ctrl.json").write_text(json.dumps(id_ctrl))
    facts = json.loads((system / "facts.json").read_text())
    facts["host"]["cpu"]["model"] = level.cpu if level else HOST_CPU
    facts["block_device"]["pci_path"] = [f"0000:{PORT_SECTION}", f"0000:{DRIVE_SECTION}"]
    (system / "facts.json").write_text(json.dumps(facts))
    _lspci(run_dir, level.link if level else "gen4")
    spare = level.spare if level else 0.0
    namespace = int(id_ctrl["tnvmcap"] / (1 + spare)) // 4096 * 4096
    manifest["target"].update(kind="device", size_bytes=namespace, active_range_bytes=namespace)
    reasons = manifest["compliance"]["reasons"]
    reasons[:] = [r for r in reasons if not r.startswith("file target")]
    manifest["profile"] = manifest["plan"]["profile"]["name"] = "pts"
    _smart_logs(run_dir, manifest, files, samples, unit)
    return write_bundle(
        run_dir=run_dir, manifest=manifest, files=files, signing_key=key, out_path=work / "run.nvmedb.tar.gz"
    )


# --- the upload path and what it stored ------------------------------------------------------------------------------


def accounts(n: int) -> list:
    """`n` contributors past review, each with an API client and a registered signing key."""
    from rest_framework.test import APIClient

    from analysis.tests.bundles import bundle_factory
    from submissions import services

    found = []
    for i in range(n):
        user = services.user_create(username=f"recovery-{i}-{random.getrandbits(32):08x}", password="x" * 16)
        key = bundle_factory().new_signing_key()
        services.signing_key_register(user=user, public_key=bundle_factory().public_key_bytes(key), name="bench")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_create(user=user, name='bench')[1]}")
        found.append((client, key))
    return found


def post(client, path: Path) -> str:
    response = client.post("/api/v1/submissions/", data=path.read_bytes(), content_type="application/octet-stream")
    if response.status_code not in (200, 202):
        raise RuntimeError(f"upload refused: {response.status_code} {response.content[:300]!r}")
    return response.json()["id"]


def wait_done(ids: list[str], timeout: float = 600) -> None:
    """Until every submission has left the queue (a real worker; eager tasks are done already)."""
    from submissions.models import Submission

    deadline = time.monotonic() + timeout
    while Submission.objects.filter(pk__in=ids, status__in=("received", "validating")).exists():
        if time.monotonic() > deadline:
            raise TimeoutError("submissions still validating")
        time.sleep(1)


def upload_population(
    units: list[Unit], work: Path, samples: Path, seed: int, send: Callable[[object, Path], str] = post
) -> dict[str, str]:
    """Every unit's bundle built and uploaded; returns unit name → submission id."""
    rng = random.Random(seed + 1)
    contributors = accounts(CONTRIBUTORS)
    sent = {}
    for i, unit in enumerate(units):
        client, key = contributors[i % len(contributors)]
        path = build_bundle(work / f"unit-{i}", samples, unit, key, rng)
        sent[unit.name] = send(client, path)
    return sent


def assess(units: list[Unit], sent: dict[str, str], levels=LEVELS) -> Report:
    """The FactorEffect rows against what was injected; the model's explanations of each unit."""
    from analysis.factor_model import fit
    from analysis.factor_rows import drive_rows
    from analysis.models import FactorEffect, Flag, TestRun
    from submissions.models import Submission

    report = Report()
    status = dict(Submission.objects.filter(pk__in=sent.values()).values_list("pk", "status"))
    report.held = [
        f"{u.name}: {status[_uuid(sent[u.name])]}" for u in units if status[_uuid(sent[u.name])] != "published"
    ]
    labelled = set(Flag.objects.filter(submission_id__in=sent.values(), kind="outlier").values_list("submission_id"))
    report.outliers = [u.name for u in units if (_uuid(sent[u.name]),) in labelled]
    runs = TestRun.objects.filter(submission_id__in=sent.values(), test="iops")
    drives = set(runs.values_list("drive_model_id", flat=True))
    if len(drives) != 1:
        raise RuntimeError(f"expected one drive model, found {len(drives)}")
    drive = drives.pop()
    unit_of = {str(r.submission_id): r.unit_id for r in runs}
    effects = list(FactorEffect.objects.filter(drive_model_id=drive))
    for level in levels:
        row = _effect(effects, level.metric, level.factor, level.firmware if level.factor == "firmware" else "")
        passed = bool(row and row.ratio and row.ci_low <= level.expected <= row.ci_high)
        report.lines.append(_line(level.name, level.factor, level.metric, level.expected, row, passed))
    if any(level.cpu == GEN2_CPU for level in levels):
        label, factor, metric = HOST_CPU_CHECK
        row = _effect(effects, metric, factor, GEN2_CPU)
        report.lines.append(_line(label, factor, metric, None, row, bool(row and row.status == "not_separable")))

    from analysis.models import DriveModel

    drive_model = DriveModel.objects.get(pk=drive)
    report.drive_slug = drive_model.slug
    found = drive_rows(drive_model)
    fits = {metric: fit(found.rows[metric], metric) for metric in (WRITE, MIX)}
    for unit in units:
        unit_id = unit_of.get(sent[unit.name])
        named = {(m, e.factor) for m, f in fits.items() for e in f.explain(unit_id)} if unit_id else set()
        if unit.level is None:
            report.false_explanations += [f"{unit.name}: {factor} on {m}" for m, factor in sorted(named)]
        elif (unit.level.metric, unit.level.factor) not in named:
            report.not_named.append(f"{unit.name}: {unit.level.factor} on {unit.level.metric}")
    return report


def _uuid(text: str):
    import uuid

    return uuid.UUID(str(text))


def _effect(effects, metric: str, factor: str, level: str):
    return next((e for e in effects if e.metric == metric and e.factor == factor and e.level == level), None)


def _line(label, factor, metric, injected, row, passed) -> FactorLine:
    if row is None:
        return FactorLine(label, factor, metric, injected, None, None, None, "missing", passed)
    return FactorLine(label, factor, metric, injected, row.ratio, row.ci_low, row.ci_high, row.status, passed)


def run(
    units_per_level: int, normal_units: int, seed: int, samples: Path, work: Path, send=post, levels=LEVELS
) -> Report:
    started = time.monotonic()
    units = population(units_per_level, normal_units, seed, levels)
    sent = upload_population(units, work, samples, seed, send)
    wait_done(list(sent.values()))
    report = assess(units, sent, levels)
    report.seconds = time.monotonic() - started
    return report


# --- output ---------------------------------------------------------------------------------------------------------


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render(report: Report, units_per_level: int, normal_units: int) -> str:
    out = [
        f"units: {normal_units} normal + {units_per_level} per factor level, {CONTRIBUTORS} contributors; "
        f"explanations: the model's own (FactorFit.explain)",
        f"{'factor':<32} {'metric':<15} {'injected':>9} {'estimated':>9}  {'95 % interval':<17} {'width':>6}  "
        f"{'status':<14} verdict",
    ]
    for line in report.lines:
        interval = f"[{_f(line.low)}, {_f(line.high)}]" if line.low is not None else "—"
        width = _f(line.high - line.low) if line.low is not None else "—"
        injected = _f(line.injected) if line.injected is not None else "not sep."
        out.append(
            f"{line.label:<32} {line.metric:<15} {injected:>9} {_f(line.ratio):>9}  {interval:<17} {width:>6}  "
            f"{line.status:<14} {'PASS' if line.passed else 'FAIL'}"
        )
    for name, found in (
        ("false explanations on normal units", report.false_explanations),
        ("factor units held", report.held),
        ("factors not named for their units", report.not_named),
    ):
        verdict = "PASS" if not found else "FAIL"
        detail = f" ({'; '.join(found)})" if found else ""
        out.append(f"{name}: {len(found)} (goal 0) {verdict}{detail}")
    for name, normal in (("factor units", False), ("normal units", True)):
        found = [unit for unit in report.outliers if unit.startswith("normal-") == normal]
        detail = f" ({'; '.join(found)})" if found else ""
        out.append(f"outliers among {name}: {len(found)} (a label for readers, not a goal){detail}")
    out.append(f"overall: {'PASS' if report.ok else 'FAIL'} in {report.seconds:.0f} s")
    return "\n".join(out)


def _setup_django(tmp: Path, *, real_worker: bool) -> str:
    """Django on a throwaway SQLite database with eager tasks; or (real_worker) the configured database and storage
    with a real Celery worker (started separately) doing the validation."""
    import logging

    if real_worker and not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
        raise SystemExit("--real-worker needs DATABASE_URL and REDIS_URL (and a worker started on them)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nvmedb.settings.local" if real_worker else "nvmedb.settings.test")
    if not real_worker:  # never the configured database: this run writes accounts and drives of its own
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
    import django
    from django.conf import settings

    django.setup()
    if not real_worker:
        settings.STORAGES = {
            **settings.STORAGES,
            "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp / "storage")}},
        }
    settings.NVMEDB_REVIEW_FIRST_N = 0  # the accounts are past review (a real worker: set it in its environment)
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    logging.getLogger("celery").setLevel(logging.WARNING)  # not a line per task
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return "a real Celery worker (REDIS_URL)" if real_worker else "eager tasks, throwaway SQLite database"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--units-per-level", type=int, default=1)
    parser.add_argument("--normal-units", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--real-worker", action="store_true", help="validate with a separately started worker")
    parser.add_argument(
        "--samples",
        type=Path,
        default=Path(os.environ.get("NVMEDB_SHARED_SAMPLES", "") or REPO.parent / "shared" / "samples"),
    )
    args = parser.parse_args(argv)  # fmt: skip
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="factor-recovery-") as tmp:
        print(f"worker: {_setup_django(Path(tmp), real_worker=args.real_worker)}")
        report = run(args.units_per_level, args.normal_units, args.seed, args.samples, Path(tmp) / "bundles")
    print(render(report, args.units_per_level, args.normal_units))
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
