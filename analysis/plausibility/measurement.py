"""Gates on one measurement: fio's figures against the link, the block size, Little's law and the planned time."""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping

from analysis import crosscheck
from analysis.plan_cells import PlanCells
from analysis.plausibility.limits import (
    CLOCK_SLACK_S,
    HOLD,
    LINK_MARGIN,
    LITTLE_MARGIN,
    MIN_DEVICE_LATENCY_NS,
    MIN_TRANSFER_BYTES,
    NOT_COMPLIANT,
    REJECT,
    RUNTIME_TOLERANCE,
    GateFailure,
    LinkBounds,
    against_link,
    epoch,
    finite,
    fmt,
    show,
    within_link,
)
from analysis.records import MeasurementRecord

_FIGURES = (
    "runtime_s", "read_iops", "write_iops", "total_iops", "read_bw_bytes_per_s", "write_bw_bytes_per_s",
    "total_bw_bytes_per_s", "read_bytes", "write_bytes", "total_bytes", "read_lat_mean_ns",
    "write_lat_mean_ns", "lat_mean_ns", "read_lat_max_ns", "write_lat_max_ns", "lat_max_ns",
)  # fmt: skip
_figures = operator.attrgetter(*_FIGURES)
# an int below this is finite as a float too (limits.finite)
_PLAIN_INT_BOUND = 2**63


def check_finite_non_negative(m: MeasurementRecord) -> list[GateFailure]:
    """Every figure fio reported (IOPS, bandwidth, bytes, latency, percentiles, runtime) is finite and not negative."""
    if m.summary is None or _plainly_finite_non_negative(m):
        return []
    return _figures_not_finite_non_negative(m)


def _figures_not_finite_non_negative(m: MeasurementRecord) -> list[GateFailure]:
    """check_finite_non_negative's failures, each figure named and checked with limits.finite."""
    s = m.summary
    values: dict[str, object] = {name: getattr(s, name) for name in _FIGURES}
    for direction, percentiles in (s.percentiles_ns or {}).items():
        for key, value in (percentiles or {}).items():
            values[f"{direction} p{key}"] = value
    values["measured runtime"] = m.runtime_s
    values["declared runtime_s"] = m.declared_runtime_s
    values["block size"] = m.block_size_bytes
    values["threads × iodepth"] = (m.threads or 0) * (m.iodepth or 0)
    failures = []
    for name, value in values.items():
        if value is None:
            continue
        if not finite(value) or value < 0:
            failures.append(
                GateFailure(
                    "finite_non_negative", REJECT, f"{m.raw_file}: {name} is {show(value)}, not a finite number ≥ 0"
                )
            )
    return failures


def _plainly_finite_non_negative(m: MeasurementRecord) -> bool:
    """Every value check_finite_non_negative reads is None, a float from 0 to below infinity or an int from 0 to
    below 2**63, so it finds nothing: the usual case, told without naming each value. False when any is something
    else, which _figures_not_finite_non_negative then looks at with limits.finite."""
    s = m.summary
    values = list(_figures(s))
    for _, percentiles in (s.percentiles_ns or {}).items():  # items(), as the named check reads them
        values += [value for _, value in (percentiles or {}).items()]
    values += (m.runtime_s, m.declared_runtime_s, m.block_size_bytes, (m.threads or 0) * (m.iodepth or 0))
    for value in values:
        kind = type(value)
        if kind is float:
            if not 0.0 <= value < math.inf:
                return False
        elif kind is int:
            if not 0 <= value < _PLAIN_INT_BOUND:
                return False
        elif value is not None:
            return False
    return True


def _directions(m: MeasurementRecord) -> list[tuple[str, float | None, float | None]]:
    """(direction, IOPS, bytes/s) per direction fio reported; 'total' alone under unified_rw_reporting."""
    s = m.summary
    if s.read_bw_bytes_per_s is None and s.write_bw_bytes_per_s is None:
        return [("total", s.total_iops, s.total_bw_bytes_per_s)]
    return [
        ("read", s.read_iops, s.read_bw_bytes_per_s),
        ("write", s.write_iops, s.write_bw_bytes_per_s),
    ]


def check_link_bandwidth(m: MeasurementRecord, bounds: LinkBounds) -> list[GateFailure]:
    """Each direction's bandwidth ≤ the link's usable bandwidth × (1 + margin); a unified total may use both."""
    if m.summary is None:
        return []
    failures = []
    for direction, _, bw in _directions(m):
        if finite(bw) and bw > 0:
            allowed = 2.0 if direction == "total" else 1.0
            if not within_link(bw, bounds, allowed):  # the reason is worded only for a failure
                what = f"{m.raw_file}: {direction} bandwidth {fmt(bw)} B/s"
                failures += against_link("link_bandwidth", what, bw, bounds, allowed)
    return failures


def check_link_iops(m: MeasurementRecord, bounds: LinkBounds) -> list[GateFailure]:
    """Each direction's IOPS × block size (at least one 512-byte block) ≤ the link's usable bandwidth × margin."""
    if m.summary is None:
        return []
    size = max(m.block_size_bytes or 0, MIN_TRANSFER_BYTES)
    failures = []
    for direction, iops, _ in _directions(m):
        if finite(iops) and iops > 0:
            allowed = 2.0 if direction == "total" else 1.0
            if not within_link(iops * size, bounds, allowed):  # the reason is worded only for a failure
                what = f"{m.raw_file}: {direction} {fmt(iops)} IOPS × {size} B"
                failures += against_link("link_iops", what, iops * size, bounds, allowed)
    return failures


def check_transfer_size(m: MeasurementRecord, *, device: bool) -> list[GateFailure]:
    """Bandwidth ÷ IOPS, the mean transfer size, is the block size (fio's rounding allowed: 1 % or 2 KiB/s), or with
    a mix of block sizes at least one 512-byte block on a device. Catches IOPS inflated where crosscheck cannot
    compare them with a block size (a bssplit, a unified total)."""
    if m.summary is None:
        return []
    failures = []
    size = m.block_size_bytes or 0
    for direction, iops, bw in _directions(m):
        if not (finite(iops) and finite(bw)) or iops <= 0:
            continue
        mean = bw / iops
        if size:
            if abs(mean - size) > max(crosscheck.ARITHMETIC_TOLERANCE * size, 2048 / iops):
                where = _transfer(m, direction, bw, iops, mean)
                failures.append(GateFailure("transfer_size", REJECT, f"{where}, but the block size is {size} B"))
        elif device and mean < MIN_TRANSFER_BYTES * (1 - crosscheck.ARITHMETIC_TOLERANCE):
            where = _transfer(m, direction, bw, iops, mean)
            failures.append(
                GateFailure("transfer_size", REJECT, f"{where}, less than one {MIN_TRANSFER_BYTES}-byte block")
            )
    return failures


def _transfer(m: MeasurementRecord, direction: str, bw: float, iops: float, mean: float) -> str:
    """A mean transfer size for a reason (worded only for a failure: most measurements have none)."""
    return f"{m.raw_file}: {direction} {fmt(bw)} B/s ÷ {fmt(iops)} IOPS = {fmt(mean)} B per I/O"


def check_latency_floor(m: MeasurementRecord, bounds: LinkBounds, *, device: bool) -> list[GateFailure]:
    """A mean latency is > 0, ≤ the maximum, no shorter than moving one block over the fastest link the drive could
    have, and (on a device) no shorter than one NVMe command can take."""
    s = m.summary
    if s is None or not (s.total_iops or 0) > 0:
        return []
    failures = []
    transfer_ns = max(m.block_size_bytes or 0, MIN_TRANSFER_BYTES) / (bounds.capability * (1 + LINK_MARGIN)) * 1e9
    for name, mean, maximum, iops in (
        ("read", s.read_lat_mean_ns, s.read_lat_max_ns, s.read_iops),
        ("write", s.write_lat_mean_ns, s.write_lat_max_ns, s.write_iops),
        ("mean", s.lat_mean_ns, s.lat_max_ns, s.total_iops),
    ):
        if mean is None or not finite(mean) or not (finite(iops) and iops > 0):
            continue
        if mean <= 0:
            reason = f"{_latency(m, name, mean)} with I/O completed; latency must be > 0"
            failures.append(GateFailure("latency_floor", REJECT, reason))
        elif finite(maximum) and maximum < mean:
            reason = f"{_latency(m, name, mean)} is above its maximum {fmt(maximum)} ns"
            failures.append(GateFailure("latency_floor", REJECT, reason))
        elif mean < transfer_ns:
            reason = (
                f"{_latency(m, name, mean)} is shorter than moving {m.block_size_bytes} B over {bounds.label} "
                f"({fmt(transfer_ns)} ns)"
            )
            failures.append(GateFailure("latency_floor", REJECT, reason))
        elif device and mean < MIN_DEVICE_LATENCY_NS:
            reason = (
                f"{_latency(m, name, mean)} is below {MIN_DEVICE_LATENCY_NS} ns, faster than any NVMe command known "
                "to complete"
            )
            failures.append(GateFailure("latency_floor", HOLD, reason))
    return failures


def _latency(m: MeasurementRecord, name: str, mean: float) -> str:
    """A mean latency for a reason (worded only for a failure: most measurements have none)."""
    return f"{m.raw_file}: {name} latency {fmt(mean)} ns"


def check_littles_law(m: MeasurementRecord) -> list[GateFailure]:
    """I/Os in flight, IOPS × mean latency (Little's law), cannot exceed threads × iodepth × (1 + margin):
    equivalently mean latency ≤ threads × iodepth / IOPS. A shorter latency only means the queue was not kept full
    (a synchronous engine, a CPU-bound host), so it bounds nothing from below."""
    s = m.summary
    if s is None or not finite(s.lat_mean_ns) or not finite(s.total_iops) or s.total_iops <= 0:
        return []
    if not m.threads or not m.iodepth:
        if m.phase == "wipc":
            return []
        return [
            GateFailure(
                "littles_law", NOT_COMPLIANT, f"run {m.run_key} declares no thread count or queue depth to check"
            )
        ]
    depth = m.threads * m.iodepth
    in_flight = s.total_iops * s.lat_mean_ns / 1e9
    if in_flight <= depth * (1 + LITTLE_MARGIN):
        return []
    return [
        GateFailure(
            "littles_law",
            REJECT,
            f"{m.raw_file}: {fmt(s.total_iops)} IOPS at a mean latency of {fmt(s.lat_mean_ns)} ns means "
            f"{in_flight:.1f} I/Os in flight, more than {m.threads} threads × QD {m.iodepth} = {depth} allow",
        )
    ]


def planned_runtime_s(plan: Mapping | None, m: MeasurementRecord, cells: PlanCells | None = None) -> float | None:
    """The cell time the plan's series for this measurement declares (None when the plan does not say); `cells`
    lists each series' cells once for all the measurements of one plan."""
    if not isinstance(plan, Mapping):
        return None
    cells_of = (cells or PlanCells()).without_depth
    cell = (m.pattern, m.block_size_bytes, m.read_pct)
    for block in _list(plan.get("blocks")):
        if not isinstance(block, Mapping) or block.get("test") != m.test:
            continue
        for series in _list(block.get("series")):
            if not isinstance(series, Mapping) or series.get("phase") != m.phase:
                continue
            if cell in cells_of(series):
                value = series.get("runtime_s")
                return float(value) if finite(value) else math.nan if value is not None else None
    return None


def _list(value) -> list:
    return value if isinstance(value, list) else []


def check_cell_runtime(m: MeasurementRecord, plan: Mapping | None, cells: PlanCells | None = None) -> list[GateFailure]:
    """fio ran each cell for a finite, positive time, at least the plan's cell time (or the run's declared runtime_s
    when the plan has none) minus the tolerance. A cell with no planned time is not a pass: it is not compliant."""
    if m.summary is None or m.phase == "wipc":
        return []  # preconditioning is sized in bytes, not seconds
    measured = m.runtime_s
    if not finite(measured) or measured <= 0:
        return [GateFailure("cell_runtime", REJECT, f"{m.raw_file}: fio reported no finite runtime ({show(measured)})")]
    declared = m.declared_runtime_s
    if declared is not None and (not finite(declared) or declared <= 0):
        return [
            GateFailure(
                "cell_runtime", REJECT, f"run {m.run_key}: runtime_s is {show(declared)}, not a positive number"
            )
        ]
    planned = planned_runtime_s(plan, m, cells)
    if planned is not None and (not finite(planned) or planned <= 0):
        return [GateFailure("cell_runtime", REJECT, f"run {m.run_key}: the plan's cell time is {show(planned)}")]
    expected = planned if planned is not None else declared
    if expected is None:
        return [
            GateFailure(
                "cell_runtime",
                NOT_COMPLIANT,
                f"run {m.run_key}: neither the plan nor the run says how long the cell was meant to run",
            )
        ]
    if measured < expected * (1 - RUNTIME_TOLERANCE):
        return [
            GateFailure(
                "cell_runtime",
                REJECT,
                f"{m.raw_file}: the cell ran {measured:g} s, shorter than the planned {expected:g} s "
                f"(tolerance {RUNTIME_TOLERANCE:.0%})",
            )
        ]
    return []


def run_window_s(m: MeasurementRecord) -> float | None:
    try:
        return (m.finished_at - m.started_at).total_seconds()
    except TypeError:  # one missing, or one naive beside one aware
        start, end = epoch(m.started_at), epoch(m.finished_at)
        return None if start is None or end is None else end - start


def check_run_window(m: MeasurementRecord) -> list[GateFailure]:
    """fio's runtime fits between the run's recorded start and finish (with the clock slack of both clocks)."""
    window = run_window_s(m)
    if window is None or not finite(m.runtime_s):
        return []
    if m.runtime_s <= window + 2 * CLOCK_SLACK_S:
        return []
    return [
        GateFailure(
            "run_window",
            REJECT,
            f"run {m.run_key}: fio ran {m.runtime_s:g} s between a start and finish {window:g} s apart",
        )
    ]
