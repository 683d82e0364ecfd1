"""Physical bounds and evidence gates that every ingested submission passes through (`apply`).

Each rule is one function returning `GateFailure`s; `RULES` lists them with the sentence the methodology page shows.
A value outside its physical bound is rejected, or held with the reason where a genuine but exotic setup could
explain it; it is never published with an informational flag. Any failure also makes the run non-compliant, so the
"PTS-compliant" label means every gate and every piece of evidence passed. Severities:

- reject: impossible for the hardware described; the submission is rejected with the reason.
- hold: impossible for the link or drive lspci and the smart-log describe, but explainable by the snapshot being
  stale or by firmware quirks; stored for staff review, never published without one.
- not_compliant: the result may be published, but not as a PTS result.

Non-finite numbers are treated as implausible everywhere, whatever the JSON parser accepted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from analysis import crosscheck, pcie
from analysis.records import FlagRecord, MeasurementRecord, SubmissionRecord
from analysis.wear import DATA_UNIT_BYTES

REJECT = "reject"
HOLD = "hold"
NOT_COMPLIANT = "not_compliant"

# Over the bandwidth model of analysis.pcie: it counts 16-byte TLP headers where 32-bit addressing uses 12, fio's
# bandwidth is bytes over a millisecond-rounded runtime, and the two clocks differ; 10 % covers all three together.
LINK_MARGIN = 0.10
# The fastest link a drive can have today: PCIe Gen6 (64 GT/s, FLIT mode) x16 at the largest MaxPayload (4096 bytes).
# Used when the drive's link is unknown, and for file targets, whose I/O may not cross the drive's lspci link.
FASTEST_LINK_GTS, FASTEST_LINK_WIDTH, LARGEST_PAYLOAD_BYTES = 64.0, 16, 4096
FASTEST_LINK_BYTES_PER_S = pcie.usable_bandwidth(FASTEST_LINK_GTS, FASTEST_LINK_WIDTH, LARGEST_PAYLOAD_BYTES)
# No NVMe transfer is smaller than one 512-byte logical block.
MIN_TRANSFER_BYTES = 512
# Little's law: I/Os in flight (IOPS × mean latency) cannot exceed threads × iodepth; fio's IOPS and mean latency
# come from the same completed I/Os, so the only slack is runtime rounding and the I/Os in flight at either end.
LITTLE_MARGIN = 0.10
# An NVMe command needs a doorbell write, a 64-byte command fetch from host memory (a PCIe read round trip of
# ~0.5-1 µs) and a completion write; the fastest drives measured at the host complete in ~5 µs.
MIN_DEVICE_LATENCY_NS = 1_000
RUNTIME_TOLERANCE = crosscheck.RUNTIME_TOLERANCE
CLOCK_SLACK_S = crosscheck.CLOCK_SLACK_S
# Composite temperatures a working drive can report: −40 °C (the coldest industrial rating) to 130 °C (past every
# drive's critical shutdown, ~85-90 °C, with room for a sensor reading its hottest component).
MIN_TEMPERATURE_K, MAX_TEMPERATURE_K = 233.15, 403.15
# power_on_hours counts whole hours: each snapshot may be up to one hour behind.
POWER_ON_HOURS_SLACK = 1
SMART_COUNTERS = (
    "data_units_read",
    "data_units_written",
    "host_read_commands",
    "host_write_commands",
    "power_cycles",
    "power_on_hours",
    "unsafe_shutdowns",
    "media_errors",
    "num_err_log_entries",
)
# NVMe SMART fields one byte wide (NVMe Base Specification, SMART / Health Information log).
SMART_BYTE_FIELDS = {"percent_used": 255, "avail_spare": 100, "spare_thresh": 100}


@dataclass(frozen=True)
class GateFailure:
    rule: str
    severity: str  # reject | hold | not_compliant
    reason: str


@dataclass(frozen=True)
class LinkBounds:
    """Bytes/s one direction can carry: what lspci reports negotiated, what the link could negotiate, and a word on
    where each comes from. `negotiated` is None when it is unknown or does not apply (a file target)."""

    negotiated: float | None
    capability: float
    label: str


def _finite(value) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float
        return False


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _show(value) -> str:
    """A value for a reason: ints too long to print (10**5000) are described, not printed."""
    if isinstance(value, int) and not isinstance(value, bool) and not _finite(value):
        return "an integer beyond any float"
    return repr(value)[:60]


def _epoch(moment) -> float | None:
    """Seconds since the epoch of a datetime (naive ones as local time), None for anything else."""
    try:
        return moment.timestamp()
    except (AttributeError, OverflowError, ValueError, OSError):
        return None


def link_bounds(record: SubmissionRecord) -> LinkBounds:
    """The link bounds of this submission's drive. A file target's I/O may go through the page cache, another drive
    or a RAID, so only the fastest link that exists bounds it."""
    link = record.link
    fastest = LinkBounds(None, FASTEST_LINK_BYTES_PER_S, f"the fastest PCIe link (Gen6 x{FASTEST_LINK_WIDTH})")
    if record.target_kind != "device" or link is None or not link.usable_bandwidth_bytes_per_s:
        return fastest
    device = link.device
    capability = FASTEST_LINK_BYTES_PER_S
    if pcie.generation(device.capable_speed_gts) and device.capable_width:
        capability = pcie.usable_bandwidth(device.capable_speed_gts, device.capable_width, LARGEST_PAYLOAD_BYTES)
    negotiated = link.usable_bandwidth_bytes_per_s
    label = f"the Gen{pcie.generation(link.path_speed_gts or device.speed_gts)} x{link.path_width or device.width} link"
    return LinkBounds(negotiated, max(capability, negotiated), label)


def _against_link(rule: str, what: str, value: float, bounds: LinkBounds, allowed: float = 1.0) -> list[GateFailure]:
    """`value` (bytes/s, or bytes/s-equivalent) against `allowed` directions of the link, with the margin."""
    limit = 1 + LINK_MARGIN
    if bounds.negotiated is not None and value <= bounds.negotiated * allowed * limit:
        return []
    if bounds.negotiated is None and value <= bounds.capability * allowed * limit:
        return []
    if bounds.negotiated is not None and value <= bounds.capability * allowed * limit:
        share = value / (bounds.negotiated * allowed)
        return [
            GateFailure(
                rule,
                HOLD,
                f"{what}: {share:.0%} of what {bounds.label} lspci reported can carry; only a link that retrained "
                "faster after lspci ran could explain it",
            )
        ]
    return [
        GateFailure(
            rule,
            REJECT,
            f"{what}: more than {bounds.label if bounds.negotiated is None else 'the link of this drive'} can carry "
            f"({_fmt(bounds.capability * allowed)} B/s with a {LINK_MARGIN:.0%} margin)",
        )
    ]


# --- rules on one measurement -------------------------------------------------------------------------------------


def check_finite_non_negative(m: MeasurementRecord) -> list[GateFailure]:
    """Every figure fio reported (IOPS, bandwidth, bytes, latency, percentiles, runtime) is finite and not negative."""
    s = m.summary
    if s is None:
        return []
    values: dict[str, object] = {
        name: getattr(s, name)
        for name in (
            "runtime_s", "read_iops", "write_iops", "total_iops", "read_bw_bytes_per_s", "write_bw_bytes_per_s",
            "total_bw_bytes_per_s", "read_bytes", "write_bytes", "total_bytes", "read_lat_mean_ns",
            "write_lat_mean_ns", "lat_mean_ns", "read_lat_max_ns", "write_lat_max_ns", "lat_max_ns",
        )
    }  # fmt: skip
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
        if not _finite(value) or value < 0:
            failures.append(
                GateFailure(
                    "finite_non_negative", REJECT, f"{m.raw_file}: {name} is {_show(value)}, not a finite number ≥ 0"
                )
            )
    return failures


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
        if _finite(bw) and bw > 0:
            allowed = 2.0 if direction == "total" else 1.0
            what = f"{m.raw_file}: {direction} bandwidth {_fmt(bw)} B/s"
            failures += _against_link("link_bandwidth", what, bw, bounds, allowed)
    return failures


def check_link_iops(m: MeasurementRecord, bounds: LinkBounds) -> list[GateFailure]:
    """Each direction's IOPS × block size (at least one 512-byte block) ≤ the link's usable bandwidth × margin."""
    if m.summary is None:
        return []
    size = max(m.block_size_bytes or 0, MIN_TRANSFER_BYTES)
    failures = []
    for direction, iops, _ in _directions(m):
        if _finite(iops) and iops > 0:
            allowed = 2.0 if direction == "total" else 1.0
            what = f"{m.raw_file}: {direction} {_fmt(iops)} IOPS × {size} B"
            failures += _against_link("link_iops", what, iops * size, bounds, allowed)
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
        if not (_finite(iops) and _finite(bw)) or iops <= 0:
            continue
        mean = bw / iops
        where = f"{m.raw_file}: {direction} {_fmt(bw)} B/s ÷ {_fmt(iops)} IOPS = {_fmt(mean)} B per I/O"
        if size:
            if abs(mean - size) > max(crosscheck.ARITHMETIC_TOLERANCE * size, 2048 / iops):
                failures.append(GateFailure("transfer_size", REJECT, f"{where}, but the block size is {size} B"))
        elif device and mean < MIN_TRANSFER_BYTES * (1 - crosscheck.ARITHMETIC_TOLERANCE):
            failures.append(
                GateFailure("transfer_size", REJECT, f"{where}, less than one {MIN_TRANSFER_BYTES}-byte block")
            )
    return failures


def check_sizes(record: SubmissionRecord) -> list[GateFailure]:
    """The target's size and active range are finite, ≥ 0, and the active range lies inside the target."""
    size, active = record.target_size_bytes, record.active_range_bytes
    failures = [
        GateFailure("sizes", REJECT, f"the target's {name} is {_show(value)}, not a finite number ≥ 0")
        for name, value in (("size_bytes", size), ("active_range_bytes", active))
        if value is not None and (not _finite(value) or value < 0)
    ]
    if not failures and size is not None and active is not None and active > size:
        failures.append(GateFailure("sizes", REJECT, f"the active range ({active} B) exceeds the target ({size} B)"))
    return failures


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
        if mean is None or not _finite(mean) or not (_finite(iops) and iops > 0):
            continue
        where = f"{m.raw_file}: {name} latency {_fmt(mean)} ns"
        if mean <= 0:
            failures.append(GateFailure("latency_floor", REJECT, f"{where} with I/O completed; latency must be > 0"))
        elif _finite(maximum) and maximum < mean:
            failures.append(GateFailure("latency_floor", REJECT, f"{where} is above its maximum {_fmt(maximum)} ns"))
        elif mean < transfer_ns:
            failures.append(
                GateFailure(
                    "latency_floor",
                    REJECT,
                    f"{where} is shorter than moving {m.block_size_bytes} B over {bounds.label} ({_fmt(transfer_ns)} ns)",
                )
            )
        elif device and mean < MIN_DEVICE_LATENCY_NS:
            failures.append(
                GateFailure(
                    "latency_floor",
                    HOLD,
                    f"{where} is below {MIN_DEVICE_LATENCY_NS} ns, faster than any NVMe command known to complete",
                )
            )
    return failures


def check_littles_law(m: MeasurementRecord) -> list[GateFailure]:
    """I/Os in flight, IOPS × mean latency (Little's law), cannot exceed threads × iodepth × (1 + margin):
    equivalently mean latency ≤ threads × iodepth / IOPS. A shorter latency only means the queue was not kept full
    (a synchronous engine, a CPU-bound host), so it bounds nothing from below."""
    s = m.summary
    if s is None or not _finite(s.lat_mean_ns) or not _finite(s.total_iops) or s.total_iops <= 0:
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
            f"{m.raw_file}: {_fmt(s.total_iops)} IOPS at a mean latency of {_fmt(s.lat_mean_ns)} ns means "
            f"{in_flight:.1f} I/Os in flight, more than {m.threads} threads × QD {m.iodepth} = {depth} allow",
        )
    ]


def planned_runtime_s(plan: Mapping | None, m: MeasurementRecord) -> float | None:
    """The cell time the plan's series for this measurement declares (None when the plan does not say)."""
    if not isinstance(plan, Mapping):
        return None
    cell = (m.pattern, m.block_size_bytes, m.read_pct)
    for block in plan.get("blocks") or []:
        if not isinstance(block, Mapping) or block.get("test") != m.test:
            continue
        for series in block.get("series") or []:
            if not isinstance(series, Mapping) or series.get("phase") != m.phase:
                continue
            cells = {
                (c.get("pattern"), c.get("block_size_bytes"), c.get("read_pct"))
                for c in series.get("cells") or []
                if isinstance(c, Mapping)
            }
            if cell in cells:
                value = series.get("runtime_s")
                return float(value) if _finite(value) else math.nan if value is not None else None
    return None


def check_cell_runtime(m: MeasurementRecord, plan: Mapping | None) -> list[GateFailure]:
    """fio ran each cell for a finite, positive time, at least the plan's cell time (or the run's declared runtime_s
    when the plan has none) minus the tolerance. A cell with no planned time is not a pass: it is not compliant."""
    if m.summary is None or m.phase == "wipc":
        return []  # preconditioning is sized in bytes, not seconds
    measured = m.runtime_s
    if not _finite(measured) or measured <= 0:
        return [
            GateFailure("cell_runtime", REJECT, f"{m.raw_file}: fio reported no finite runtime ({_show(measured)})")
        ]
    declared = m.declared_runtime_s
    if declared is not None and (not _finite(declared) or declared <= 0):
        return [
            GateFailure(
                "cell_runtime", REJECT, f"run {m.run_key}: runtime_s is {_show(declared)}, not a positive number"
            )
        ]
    planned = planned_runtime_s(plan, m)
    if planned is not None and (not _finite(planned) or planned <= 0):
        return [GateFailure("cell_runtime", REJECT, f"run {m.run_key}: the plan's cell time is {_show(planned)}")]
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


def _window_s(m: MeasurementRecord) -> float | None:
    try:
        return (m.finished_at - m.started_at).total_seconds()
    except TypeError:  # one missing, or one naive beside one aware
        start, end = _epoch(m.started_at), _epoch(m.finished_at)
        return None if start is None or end is None else end - start


def check_run_window(m: MeasurementRecord) -> list[GateFailure]:
    """fio's runtime fits between the run's recorded start and finish (with the clock slack of both clocks)."""
    window = _window_s(m)
    if window is None or not _finite(m.runtime_s):
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


# --- rules on smart-log snapshots -----------------------------------------------------------------------------------


def check_smart_values(smart: Mapping | None, label: str) -> list[GateFailure]:
    """Counters are finite and ≥ 0, one-byte fields within their byte, the composite temperature within what a
    working drive can report (outside it: held, a broken sensor is possible)."""
    if not smart:
        return []
    failures = []
    for key in SMART_COUNTERS:
        value = smart.get(key)
        if value is not None and (not _finite(value) or value < 0):
            failures.append(GateFailure("smart_values", REJECT, f"{label}: {key} is {_show(value)}"))
    for key, top in SMART_BYTE_FIELDS.items():
        value = smart.get(key)
        if value is not None and (not _finite(value) or not 0 <= value <= top):
            failures.append(GateFailure("smart_values", REJECT, f"{label}: {key} is {_show(value)}, outside 0-{top}"))
    kelvin = smart.get("temperature_k")
    if kelvin is not None and (not _finite(kelvin) or not MIN_TEMPERATURE_K <= kelvin <= MAX_TEMPERATURE_K):
        failures.append(
            GateFailure(
                "smart_values",
                HOLD,
                f"{label}: composite temperature {_show(kelvin)} K is outside {MIN_TEMPERATURE_K}-{MAX_TEMPERATURE_K} K",
            )
        )
    return failures


def _delta(before: Mapping, after: Mapping, key: str) -> float | None:
    first, last = before.get(key), after.get(key)
    if not _finite(first) or not _finite(last):
        return None
    return float(last) - float(first)


def check_smart_progress(
    before: Mapping | None, after: Mapping | None, *, window_s: float | None, bounds: LinkBounds, label: str
) -> list[GateFailure]:
    """Between two snapshots `window_s` apart: no counter goes backwards, the drive's own data-unit counters moved no
    faster than the link carries, and power-on hours advanced no more than the wall clock did. These hold however
    fio's figures and the counters were scaled together, because the wall clock and the link are not scaled."""
    if not before or not after:
        return []
    failures = []
    for key in SMART_COUNTERS:
        change = _delta(before, after, key)
        if change is not None and change < 0:
            failures.append(GateFailure("smart_progress", REJECT, f"{label}: {key} went backwards by {-change:g}"))
    if window_s is None or window_s < 0:
        return failures
    seconds = window_s + 2 * CLOCK_SLACK_S
    for key in ("data_units_read", "data_units_written"):
        change = _delta(before, after, key)
        if change is None or change <= 0:
            continue
        moved = max(change - 2, 0) * DATA_UNIT_BYTES  # each snapshot rounds up by at most one unit
        rate = moved / seconds
        what = f"{label}: {key} grew {_fmt(moved)} B in {seconds:g} s ({_fmt(rate)} B/s)"
        failures += _against_link("smart_progress", what, rate, bounds)
    hours = _delta(before, after, "power_on_hours")
    if hours is not None and hours > math.ceil(seconds / 3600) + POWER_ON_HOURS_SLACK:
        failures.append(
            GateFailure(
                "smart_progress",
                HOLD,
                f"{label}: power_on_hours advanced {hours:g} h in {seconds / 3600:.2f} h of wall clock",
            )
        )
    return failures


def check_power_on_clock(snapshots: list[tuple[object, Mapping]]) -> list[GateFailure]:
    """Over the whole bundle, the drive's power-on hours advanced as much as the wall clock between the first and the
    last snapshot (the drive was powered throughout), give or take an hour of counter granularity each end."""
    timed = [(_epoch(t), s) for t, s in snapshots if _epoch(t) is not None and _finite(s.get("power_on_hours"))]
    if len(timed) < 2:
        return []
    (first_t, first), (last_t, last) = min(timed, key=lambda p: p[0]), max(timed, key=lambda p: p[0])
    elapsed_h = (last_t - first_t) / 3600
    advanced = float(last["power_on_hours"]) - float(first["power_on_hours"])
    if elapsed_h - 2 * POWER_ON_HOURS_SLACK <= advanced <= elapsed_h + 2 * POWER_ON_HOURS_SLACK:
        return []
    return [
        GateFailure(
            "power_on_clock",
            HOLD,
            f"power_on_hours advanced {advanced:g} h over {elapsed_h:.2f} h of runs: the smart-logs and the run "
            "timestamps do not describe the same time",
        )
    ]


# --- evidence ------------------------------------------------------------------------------------------------------


def check_smart_logs_present(record: SubmissionRecord) -> list[GateFailure]:
    """A client run on a device has a smart-log before and after every fio run: without them the counters that tie
    fio's figures to a real drive cannot be checked, so the submission is held and not compliant."""
    if record.source != "client" or record.target_kind != "device":
        return []
    lacking = [m.run_key for tr in record.test_runs for m in tr.measurements if not (m.smart_before and m.smart_after)]
    if not lacking:
        return []
    shown = ", ".join(lacking[:3]) + (f" and {len(lacking) - 3} more" if len(lacking) > 3 else "")
    return [
        GateFailure(
            "smart_logs_missing",
            HOLD,
            f"device target without a readable smart-log before and after run {shown}: the drive's own counters "
            "cannot confirm fio's figures",
        )
    ]


def _plan_shape(plan: Mapping) -> list:
    def series(s: Mapping) -> tuple:
        cells = sorted(
            (str(c.get("pattern")), c.get("block_size_bytes"), c.get("read_pct"))
            for c in s.get("cells") or []
            if isinstance(c, Mapping)
        )
        return (s.get("phase"), s.get("threads"), s.get("iodepth"), s.get("runtime_s"), s.get("max_rounds"), cells)

    return [
        (b.get("test"), bool(b.get("purge")), bool(b.get("wipc")), [series(s) for s in b.get("series") or []])
        for b in plan.get("blocks") or []
        if isinstance(b, Mapping)
    ]


def reference_plan(plan: Mapping, edition: str) -> dict | None:
    """The plan a PTS run of these tests on a device of the plan's capacity must follow, from the client's own
    planner; None when the plan does not say enough to rebuild it."""
    from nvmedb_client.plan import build_plan, plan_to_dict

    try:
        built = build_plan(
            tests=[str(t) for t in plan.get("tests") or []],
            edition=edition,
            profile="pts",
            capacity_bytes=int(plan.get("capacity_bytes")),
            target_kind="device",
        )
    except (TypeError, ValueError, OverflowError):
        return None
    return plan_to_dict(built)


def check_compliance_claim(record: SubmissionRecord) -> list[GateFailure]:
    """A bundle that declares itself compliant must show it: the pts profile, a device target, the PTS plan itself
    (cells, threads, depth, 60-second cells, round limit), and a purge that is not blkdiscard. A false claim is held."""
    if record.source != "client" or not record.compliant:
        return []
    problems = []
    if record.profile != "pts":
        problems.append(f"the {record.profile or 'unnamed'} profile is not the PTS")
    if record.target_kind != "device":
        problems.append(f"a {record.target_kind or 'unknown'} target is not a drive")
    plan = record.plan if isinstance(record.plan, Mapping) else {}
    reference = reference_plan(plan, record.edition) if plan.get("blocks") else None
    if reference is None:
        problems.append("the bundle has no plan the PTS plan can be rebuilt from")
    elif _plan_shape(plan) != _plan_shape(reference):
        problems.append("its plan is not the PTS plan for these tests (cells, threads, depth, cell time or rounds)")
    if not record.purge_method:
        problems.append("no purge is recorded")
    elif record.purge_method.startswith("blkdiscard"):
        problems.append("purged with blkdiscard, not a Format or Sanitize")
    if not problems:
        return []
    return [GateFailure("compliance_evidence", HOLD, "declared PTS-compliant, but " + "; ".join(problems))]


# --- the whole submission ------------------------------------------------------------------------------------------

RULES = {
    "finite_non_negative": "every fio figure is a finite number ≥ 0",
    "link_bandwidth": f"bandwidth per direction ≤ the link's usable bandwidth × {1 + LINK_MARGIN:g}",
    "link_iops": f"IOPS × block size (≥ {MIN_TRANSFER_BYTES} B) ≤ the link's usable bandwidth × {1 + LINK_MARGIN:g}",
    "transfer_size": "bandwidth ÷ IOPS is the block size (a mix: at least 512 B on a device)",
    "sizes": "the target's size and active range are finite, ≥ 0, and the range lies inside the target",
    "latency_floor": "mean latency > 0, ≤ its maximum, ≥ one block's transfer time; ≥ 1 µs on a device",
    "littles_law": f"IOPS × mean latency ≤ threads × iodepth × {1 + LITTLE_MARGIN:g}",
    "cell_runtime": f"fio ran each cell at least the planned time × {1 - RUNTIME_TOLERANCE:g}",
    "run_window": "fio's runtime fits between the run's start and finish",
    "smart_values": "smart-log counters finite and ≥ 0; temperature within a working drive's range",
    "smart_progress": "counters never go backwards; data units grow no faster than the link; power-on hours no "
    "faster than the clock",
    "power_on_clock": "power-on hours advance with the wall clock over the whole bundle",
    "smart_logs_missing": "a device run has smart-logs around every fio run",
    "compliance_evidence": "a compliance claim is backed by the pts profile, a device, the PTS plan and a purge",
}


def measurement_failures(m: MeasurementRecord, record: SubmissionRecord, bounds: LinkBounds) -> list[GateFailure]:
    failures = check_finite_non_negative(m)
    if any(f.severity == REJECT for f in failures):
        return failures  # the other bounds would only repeat the same broken number
    failures += check_link_bandwidth(m, bounds)
    failures += check_link_iops(m, bounds)
    failures += check_transfer_size(m, device=record.target_kind == "device")
    failures += check_latency_floor(m, bounds, device=record.target_kind == "device")
    failures += check_littles_law(m)
    if record.source == "client":
        failures += check_cell_runtime(m, record.plan)
    failures += check_run_window(m)
    for side, smart in (("before", m.smart_before), ("after", m.smart_after)):
        failures += check_smart_values(smart, f"run {m.run_key} smart-log {side}")
    failures += check_smart_progress(
        m.smart_before, m.smart_after, window_s=_window_s(m), bounds=bounds, label=f"run {m.run_key}"
    )
    return failures


def submission_failures(record: SubmissionRecord) -> list[GateFailure]:
    """Every gate over every measurement and the submission's evidence, in a stable order."""
    bounds = link_bounds(record)
    measurements = [m for tr in record.test_runs for m in tr.measurements]
    failures = check_sizes(record)
    for m in measurements:
        failures += measurement_failures(m, record, bounds)
    ordered = sorted(
        (m for m in measurements if m.smart_before or m.smart_after),
        key=lambda m: (_epoch(m.started_at) is None, _epoch(m.started_at) or 0.0),
    )
    snapshots = [(t, s) for m in ordered for t, s in ((m.started_at, m.smart_before), (m.finished_at, m.smart_after))]
    snapshots = [(t, s) for t, s in snapshots if s]
    for (_, earlier), (_, later) in zip(snapshots, snapshots[1:], strict=False):
        failures += check_smart_progress(
            earlier, later, window_s=None, bounds=bounds, label="from one smart-log to the next"
        )
    failures += check_power_on_clock(snapshots)
    failures += check_smart_logs_present(record)
    failures += check_compliance_claim(record)
    return list(dict.fromkeys(failures))


def bus_bound_is_plausible(utilization: float | None) -> bool:
    """The informational bus_bound flag applies from pcie.BUS_BOUND_UTILIZATION to 100 % × the margin; beyond
    that the result failed the link gates instead."""
    return pcie.is_bus_bound(utilization) and utilization <= 1 + LINK_MARGIN


def apply(record: SubmissionRecord) -> list[GateFailure]:
    """Run every gate once on `record` and record the outcome: rejections, holds (with a flag), and for any failure
    the run is not compliant, with the reason. Safe to call twice (the second call does nothing)."""
    if record.gates_applied:
        return []
    record.gates_applied = True
    failures = submission_failures(record)
    for failure in failures:
        reason = f"{failure.rule}: {failure.reason}"[:300]
        if failure.severity == REJECT:
            record.reject_reasons.append(reason)
        elif failure.severity == HOLD:
            record.hold_reasons.append(reason)
            record.flags.append(FlagRecord("crosscheck", reason))
        if record.compliant:
            record.compliant = False
        if reason not in record.compliance_reasons:
            record.compliance_reasons.append(reason)
    return failures


def rule_names(failures: Iterable[GateFailure]) -> set[str]:
    return {f.rule for f in failures}
