"""The factor model's input rows (analysis.factor_model.Run) for one drive model, read from its public PTS runs.

One query reads every public PTS run of the drive (never a trial, never an nvmedb extension such as the surface)
with its unit, its contributor (the submission's uploader), its headline metrics and the conditions it records.
Each headline metric gets its own rows: a run without a value for a metric is not a row of that metric.

Nothing is guessed: a condition the run does not record is None, and the factor model leaves out a factor too few
units record. Per factor:

- link below capability: the run's link `below_capability` (None when lspci did not report both ends).
- link-limited: the run's usable link bandwidth (PcieLink.usable_bandwidth_bytes_per_s, the narrowest link on the
  path after encoding and packet overhead) is below the throughput another unit of the same drive model reached on
  the same metric (the highest of the other units' medians). That is a limit the link sets, not "moved 90 % of its
  link": a unit on its rated link that fills it is not limited by it unless another unit did better. None when the
  link's usable bandwidth is unknown, or when no other unit measured the metric (nothing to compare with). The
  throughput a metric implies, per direction: bytes/s as measured; IOPS × block size × the busier direction's share
  of the mix; a latency test's 4 KiB at QD1 as 4 KiB ÷ its mean latency.
- thermal throttling: a thermal-throttle flag on the run (or on its whole submission); not throttled when the run
  records its highest temperature and no such flag; None otherwise (no temperatures, no verdict).
- spare ÷ user capacity: the run's over-provisioning (the share of raw capacity hidden) as vendors quote it.
- wear: smart-log percentage used before the test.
- firmware revision, host CPU model, host kernel, I/O scheduler: as recorded; blank is None.
"""

from __future__ import annotations

import hashlib
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, Q, QuerySet

from analysis.factor_model import Run
from analysis.headline import BY_KEY, HEADLINES
from analysis.models import DriveModel, Flag, FlagKind
from analysis.overprovisioning import spare_vs_user
from analysis.selectors import pts_q, public_pts_runs

METRICS: tuple[str, ...] = tuple(h.key for h in HEADLINES)
# A latency headline's throughput: its 4 KiB at QD1, one I/O in flight, so block ÷ mean latency.
LATENCY_THROUGHPUT_METRIC = "lat_4k_mean"

RUN_FIELDS = (
    "id", "unit_id", "submission__uploader_id", "headline", "overprovisioning", "percentage_used",
    "max_temperature_k", "scheduler", "firmware__revision", "host__cpu_model", "host__kernel",
    "pcie_link__generation", "pcie_link__width", "pcie_link__below_capability",
    "pcie_link__usable_bandwidth_bytes_per_s",
)  # fmt: skip


@dataclass
class DriveRows:
    """Per headline metric, the drive's run rows; and what could not be decided, in words."""

    rows: dict[str, list[Run]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)


def throughput(metric: str, headline: dict) -> float | None:
    """Bytes/s on the busier direction of the link that a run's value of `metric` implies; None without it."""
    spec = BY_KEY[metric]
    if spec.unit == "bytes/s":
        value = headline.get(metric)
        return float(value) if value is not None else None
    if spec.unit == "IOPS":
        value = headline.get(metric)
        busier = max(spec.read_pct, 100 - spec.read_pct) / 100
        return float(value) * spec.block_size_bytes * busier if value is not None else None
    mean = headline.get(LATENCY_THROUGHPUT_METRIC)  # latency: QD1, so one block per mean latency
    return spec.block_size_bytes * 1e9 / float(mean) if mean else None


def unit_key(unit_id: int | None, run_id: int) -> object:
    """A run's unit in the rows: its physical unit's id, or "run-<id>" (a run whose unit is unknown is its own)."""
    return unit_id if unit_id is not None else f"run-{run_id}"


def _unit(run: dict) -> object:
    return unit_key(run["unit_id"], run["id"])


def _link_text(run: dict) -> str | None:
    gen, width = run["pcie_link__generation"], run["pcie_link__width"]
    return f"Gen{gen} x{width}" if gen and width else None


def _throttled(run: dict) -> bool | None:
    if run["thermal_flag"]:
        return True
    return False if run["max_temperature_k"] is not None else None


def public_runs(drive_model: DriveModel, runs_of: QuerySet | None = None) -> list[dict]:
    """The drive's public PTS runs (or PTS runs of `runs_of`) with what the rows read, in one query."""
    on_run = Q(test_run=OuterRef("pk")) | Q(submission=OuterRef("submission_id"), test_run__isnull=True)
    thermal = Exists(Flag.objects.filter(on_run, kind=FlagKind.THERMAL_THROTTLE))
    runs = public_pts_runs() if runs_of is None else runs_of.filter(pts_q())
    return list(
        runs.filter(drive_model=drive_model)
        .annotate(thermal_flag=thermal)
        .order_by("id")
        .values(*RUN_FIELDS, "thermal_flag")
    )


def _best_elsewhere(reached: dict[object, float]):
    """unit -> the most any other unit reached (None when no other unit did): the highest value, or for the unit
    holding it the second highest, so a drive's rows take time linear in its runs."""
    ranked = sorted(reached.items(), key=lambda item: item[1], reverse=True)[:2]

    def best(unit) -> float | None:
        others = [value for key, value in ranked if key != unit]
        return others[0] if others else None

    return best


def rows_of(runs: list[dict]) -> DriveRows:
    """Every headline metric's rows from the runs `public_runs` reads."""
    out = DriveRows()
    for metric in METRICS:
        measured = [r for r in runs if (r["headline"] or {}).get(metric) is not None]
        if not measured:
            continue
        per_unit: dict[object, list[float]] = defaultdict(list)
        for run in measured:
            if (bytes_per_s := throughput(metric, run["headline"])) is not None:
                per_unit[_unit(run)].append(bytes_per_s)
        reached = {unit: statistics.median(values) for unit, values in per_unit.items()}
        best_elsewhere = _best_elsewhere(reached)
        rows, no_link, alone = [], 0, 0
        for run in measured:
            usable = run["pcie_link__usable_bandwidth_bytes_per_s"]
            elsewhere = best_elsewhere(_unit(run))
            limited = None
            if usable is None:
                no_link += 1
            elif elsewhere is None:
                alone += 1
            else:
                limited = usable < elsewhere
            rows.append(
                Run(
                    unit=_unit(run),
                    contributor=run["submission__uploader_id"],
                    value=float(run["headline"][metric]),
                    link_limited=limited,
                    link_below_capability=run["pcie_link__below_capability"],
                    spare_fraction=spare_vs_user(run["overprovisioning"]),
                    throttled=_throttled(run),
                    percentage_used=None if run["percentage_used"] is None else float(run["percentage_used"]),
                    firmware=run["firmware__revision"] or None,
                    host_cpu=run["host__cpu_model"] or None,
                    kernel=run["host__kernel"] or None,
                    scheduler=run["scheduler"] or None,
                    link=_link_text(run),
                )
            )
        notes = []
        if no_link:
            notes.append(f"link-limited unknown on {no_link} run(s): the link's usable bandwidth is not recorded")
        if alone:
            notes.append(
                f"link-limited unknown on {alone} run(s): no other unit measured this metric to compare the link with"
            )
        out.rows[metric], out.notes[metric] = rows, notes
    return out


def drive_rows(drive_model: DriveModel, runs_of: QuerySet | None = None) -> DriveRows:
    """The factor model's rows of every headline metric of `drive_model`, from one query over its public runs."""
    return rows_of(public_runs(drive_model, runs_of))


def rows_digest(rows: list[Run]) -> str:
    """SHA-256 of a fit's input rows, in the order read: stored with the figures fitted on them, so a page can tell
    figures of the rows a fit would read now from figures of older data."""
    return hashlib.sha256("\n".join(repr(row) for row in rows).encode()).hexdigest()


def unit_number(key: object) -> int:
    """A unit key of the rows as a number: the physical unit's id, or minus the run's id ("run-<id>")."""
    return -int(key.removeprefix("run-")) if isinstance(key, str) else int(key)
