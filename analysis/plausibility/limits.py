"""The bounds every gate shares: severities, margins, the link's bandwidth levels, and safe number handling."""

from __future__ import annotations

import math
from dataclasses import dataclass

from analysis import crosscheck, pcie
from analysis.records import SubmissionRecord

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


def finite(value) -> bool:
    if type(value) is float:  # the usual cases first: called for every figure and counter of every measurement
        return math.isfinite(value)
    if type(value) is int:  # never a bool: type() is exact
        try:
            return math.isfinite(value)
        except OverflowError:
            return False
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float
        return False


def fmt(value: float) -> str:
    return f"{value:.4g}"


def show(value) -> str:
    """A value for a reason: ints too long to print (10**5000) are described, not printed."""
    if isinstance(value, int) and not isinstance(value, bool) and not finite(value):
        return "an integer beyond any float"
    return repr(value)[:60]


def epoch(moment) -> float | None:
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
    if record.target_kind == "device" and link is not None and link.problems:
        # the link lspci reported is none the specification allows (gate pcie_link): name it where it is not used
        reported = pcie.describe(link.device.speed_gts, link.device.width)
        label = f"the fastest PCIe link (Gen6 x{FASTEST_LINK_WIDTH}; lspci's {reported} is no PCIe link)"
        return LinkBounds(None, FASTEST_LINK_BYTES_PER_S, label)
    if record.target_kind != "device" or link is None or not link.usable_bandwidth_bytes_per_s:
        return fastest
    device = link.device
    capability = FASTEST_LINK_BYTES_PER_S
    if pcie.generation(device.capable_speed_gts) and device.capable_width:
        capability = pcie.usable_bandwidth(device.capable_speed_gts, device.capable_width, LARGEST_PAYLOAD_BYTES)
    negotiated = link.usable_bandwidth_bytes_per_s
    label = f"the Gen{pcie.generation(link.path_speed_gts or device.speed_gts)} x{link.path_width or device.width} link"
    return LinkBounds(negotiated, max(capability, negotiated), label)


def within_link(value: float, bounds: LinkBounds, allowed: float = 1.0) -> bool:
    """`value` passes against_link: a gate checks this first and words its reason only for a value that does not."""
    limit = 1 + LINK_MARGIN
    return value <= (bounds.capability if bounds.negotiated is None else bounds.negotiated) * allowed * limit


def against_link(rule: str, what: str, value: float, bounds: LinkBounds, allowed: float = 1.0) -> list[GateFailure]:
    """`value` (bytes/s, or bytes/s-equivalent) against `allowed` directions of the link, with the margin."""
    limit = 1 + LINK_MARGIN
    if within_link(value, bounds, allowed):
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
            f"({fmt(bounds.capability * allowed)} B/s with a {LINK_MARGIN:.0%} margin)",
        )
    ]
