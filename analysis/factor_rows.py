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

import functools
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db.models import QuerySet

from analysis.factor_model import Run
from analysis.fit_inputs import INPUT_FIELDS, fit_runs, unit_key
from analysis.headline import BY_KEY, HEADLINES
from analysis.models import DriveModel, TestRun
from analysis.overprovisioning import spare_vs_user

METRICS: tuple[str, ...] = tuple(h.key for h in HEADLINES)
# A latency headline's throughput: its 4 KiB at QD1, one I/O in flight, so block ÷ mean latency.
LATENCY_THROUGHPUT_METRIC = "lat_4k_mean"


@dataclass
class DriveRows:
    """Per headline metric, the drive's run rows; and what could not be decided, in words."""

    rows: dict[str, list[Run]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    # what rows_of read to build them, so rows of more runs can start from them (rows_of's `base`)
    runs: list[dict] = field(default_factory=list, repr=False, compare=False)
    reached: dict[str, _Reached] = field(default_factory=dict, repr=False, compare=False)
    parts: _Parts | None = field(default=None, repr=False, compare=False)


@dataclass
class _Reached:
    """One metric's throughput per unit as the link-limited test compares them, and its rows' unknown counts."""

    measured: list[dict]
    per_unit: dict[object, list[float]]
    medians: dict[object, float]
    ranked: list[tuple[object, float]]  # the two highest medians (_metric_rows)
    no_link: int = 0
    alone: int = 0


def throughput(metric: str, headline: dict) -> float | None:
    """Bytes/s on the busier direction of the link that a run's value of `metric` implies; None without it."""
    return _throughput_of(metric)(headline)


@functools.cache
def _throughput_of(metric: str) -> Callable[[dict], float | None]:
    """throughput(metric, headline) as a function of the headline, the metric's spec read once."""
    spec = BY_KEY[metric]
    if spec.unit == "bytes/s":

        def bytes_per_s(headline: dict) -> float | None:
            value = headline.get(metric)
            return float(value) if value is not None else None

        return bytes_per_s
    block = spec.block_size_bytes
    if spec.unit == "IOPS":
        busier = max(spec.read_pct, 100 - spec.read_pct) / 100

        def of_iops(headline: dict) -> float | None:
            value = headline.get(metric)
            return float(value) * block * busier if value is not None else None

        return of_iops

    def of_latency(headline: dict) -> float | None:
        mean = headline.get(LATENCY_THROUGHPUT_METRIC)  # latency: QD1, so one block per mean latency
        return block * 1e9 / float(mean) if mean else None

    return of_latency


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
    """The drive's public PTS runs (or PTS runs of `runs_of`) with what the rows read, in one query
    (analysis.fit_inputs)."""
    return list(fit_runs(drive_model, runs_of).values(*INPUT_FIELDS))


def _ranked(medians: dict[object, float]) -> list[tuple[object, float]]:
    return sorted(medians.items(), key=lambda item: item[1], reverse=True)[:2]


def _reached(metric: str, measured: list[dict], base: _Reached | None, parts: _Parts) -> _Reached:
    """What the metric's runs reached per unit; `base`: the same of the first of these runs (only the units of the
    rest get their medians again)."""
    per_unit: dict[object, list[float]] = dict(base.per_unit) if base is not None else {}
    start = len(base.measured) if base is not None else 0
    touched = set()
    of_headline, units = _throughput_of(metric), parts.units
    for run in measured[start:]:
        if (bytes_per_s := of_headline(run["headline"])) is not None:
            unit = units[id(run)]
            if unit not in touched:  # a copy: the base's lists stay as they are
                per_unit[unit] = list(per_unit.get(unit, []))
            per_unit[unit].append(bytes_per_s)
            touched.add(unit)
    if base is None:
        medians = {unit: _median(values) for unit, values in per_unit.items()}
    else:
        medians = {unit: base.medians.get(unit) if unit not in touched else None for unit in per_unit}
        medians.update((unit, _median(per_unit[unit])) for unit in touched)
    return _Reached(measured, per_unit, medians, _ranked(medians))


def _median(values: list[float]) -> float:
    return values[0] if len(values) == 1 else statistics.median(values)  # most units ran a test once


class _Parts:
    """Per run of `runs` (by identity, as long as they live): its unit; and, worked out once when first asked for, the
    fields of Run that its rows of every metric share (all but the value and the link-limited verdict)."""

    def __init__(self, runs: list[dict], base: _Parts | None = None) -> None:
        """`base`: those of runs before these (alive as long as the DriveRows that holds them), taken as they are."""
        self.units: dict[int, object] = dict(base.units) if base is not None else {}
        self.units.update((id(run), _unit(run)) for run in runs)
        self.fields: dict[int, dict] = dict(base.fields) if base is not None else {}

    def of(self, run: dict) -> dict:
        fields = self.fields[id(run)] = {
            "unit": self.units[id(run)],
            "contributor": run["submission__uploader_id"],
            "value": None,  # the metric's; in its place, so that each row's fields are in the order of Run's
            "link_limited": None,
            "link_below_capability": run["pcie_link__below_capability"],
            "spare_fraction": spare_vs_user(run["overprovisioning"]),
            "throttled": _throttled(run),
            "percentage_used": None if run["percentage_used"] is None else float(run["percentage_used"]),
            "firmware": run["firmware__revision"] or None,
            "host_cpu": run["host__cpu_model"] or None,
            "kernel": run["host__kernel"] or None,
            "scheduler": run["scheduler"] or None,
            "link": _link_text(run),
        }
        return fields


_new = object.__new__


def _metric_rows(metric: str, reached: _Reached, base: DriveRows | None, parts: _Parts) -> list[Run]:
    """The metric's rows; counts the runs whose link-limited verdict is unknown on `reached`. The rows of `base`
    are taken as they are when the two highest medians are the same (every run's verdict then is)."""
    rows, start = [], 0
    base_reached = base.reached.get(metric) if base is not None else None
    if base_reached is not None and base_reached.ranked == reached.ranked:
        rows, start = list(base.rows[metric]), len(base_reached.measured)
        reached.no_link, reached.alone = base_reached.no_link, base_reached.alone
    # the most any other unit reached (None when no other unit did): of the two highest medians, the highest, or for
    # the unit holding it the second, so a drive's rows take time linear in its runs
    ranked = reached.ranked
    top, highest = ranked[0] if ranked else (_NO_UNIT, None)
    second = ranked[1][1] if len(ranked) > 1 else None
    units, shared = parts.units, parts.fields
    for run in reached.measured[start:]:
        usable = run["pcie_link__usable_bandwidth_bytes_per_s"]
        elsewhere = second if units[id(run)] == top else highest
        limited = None
        if usable is None:
            reached.no_link += 1
        elif elsewhere is None:
            reached.alone += 1
        else:
            limited = usable < elsewhere
        # a Run as Run(**fields) makes it, made by filling a new instance's __dict__: a frozen dataclass's __init__
        # sets each of its 13 fields through object.__setattr__, most of the time of a drive's rows
        row = _new(Run)
        fields = row.__dict__
        fields.update(shared.get(id(run)) or parts.of(run))
        fields["value"] = float(run["headline"][metric])
        fields["link_limited"] = limited
        rows.append(row)
    return rows


_NO_UNIT = object()  # no unit is it


def _measured(runs: list[dict]) -> dict[str, list[dict]]:
    """Per headline metric, the runs that measured it, in order."""
    out: dict[str, list[dict]] = {metric: [] for metric in METRICS}
    for run in runs:
        for metric, value in (run["headline"] or {}).items():
            if value is not None and metric in out:
                out[metric].append(run)
    return out


def rows_of(runs: list[dict], base: DriveRows | None = None) -> DriveRows:
    """Every headline metric's rows from the runs `public_runs` reads. `base`: the rows of the first of these runs
    (a drive's public runs, to which a held submission's are added): the same rows, reusing what did not change."""
    if base is not None and not (
        len(base.runs) <= len(runs) and all(a is b for a, b in zip(base.runs, runs, strict=False))
    ):
        base = None  # not a beginning of these runs
    split = len(base.runs) if base is not None else 0
    added, earlier = _measured(runs[split:]), None
    known = base.parts if base is not None else None  # the units and fields of base's runs
    parts = _Parts(runs[split:], known) if known is not None else _Parts(runs)
    out = DriveRows(runs=runs, parts=parts)
    for metric in METRICS:
        base_reached = base.reached.get(metric) if base is not None else None
        if base_reached is not None:
            measured = base_reached.measured + added[metric]
        else:
            earlier = earlier if earlier is not None else _measured(runs[:split])
            measured = earlier[metric] + added[metric]
        if not measured:
            continue
        reached = _reached(metric, measured, base_reached, parts)
        out.rows[metric], out.reached[metric] = _metric_rows(metric, reached, base, parts), reached
        notes = []
        if reached.no_link:
            notes.append(
                f"link-limited unknown on {reached.no_link} run(s): the link's usable bandwidth is not recorded"
            )
        if reached.alone:
            notes.append(
                f"link-limited unknown on {reached.alone} run(s): no other unit measured this metric to compare the "
                "link with"
            )
        out.notes[metric] = notes
    return out


def held_rows(submission, drive_model: DriveModel, public: list[dict] | None = None, base: DriveRows | None = None):
    """The rows of the drive's public runs (`public`, as public_runs reads them, when the caller has them; `base`:
    their rows_of) plus `submission`'s own runs of the drive that are not public, and whether it has such runs."""
    public = public_runs(drive_model) if public is None else public
    seen = {row["id"] for row in public}
    own = [r for r in public_runs(drive_model, TestRun.objects.filter(submission=submission)) if r["id"] not in seen]
    return rows_of(public + own, base), bool(own)


def drive_rows(drive_model: DriveModel, runs_of: QuerySet | None = None) -> DriveRows:
    """The factor model's rows of every headline metric of `drive_model`, from one query over its public runs."""
    return rows_of(public_runs(drive_model, runs_of))
