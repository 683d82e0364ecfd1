"""How many bytes per second a PCIe link can really carry, and whether a result was limited by it.

The model, per direction of a full-duplex link:

    usable = lanes × transfer rate × line-encoding efficiency ÷ 8 × payload ÷ (payload + per-TLP overhead)

Line encoding (bits on the wire per bit of data):
- Gen1 (2.5 GT/s) and Gen2 (5 GT/s): 8b/10b, efficiency 0.8 — PCI Express Base Specification 2.0, §4.2.1.
- Gen3 (8 GT/s), Gen4 (16 GT/s), Gen5 (32 GT/s): 128b/130b — PCIe Base Specification 3.0, §4.2.2.
- Gen6 (64 GT/s, PAM4): FLIT mode. A 256-byte FLIT carries 236 bytes of TLP, 6 bytes of DLP, 8 bytes of CRC and
  6 bytes of FEC, so TLP bytes are 236/256 of the wire — PCIe Base Specification 6.0, §4.2.3.4 and D. Das Sharma,
  "PCI Express 6.0 Specification: A Low-Latency, High-Bandwidth, High-Reliability, and Cost-Effective Interconnect",
  IEEE Hot Interconnects 2020.

Per-TLP overhead (bytes added to each payload of at most MaxPayload bytes):
- Gen1–2: STP framing 1 + sequence number 2 + header 16 + LCRC 4 + END framing 1 = 24.
- Gen3–5: STP token 4 (carries length and sequence number) + header 16 + LCRC 4 = 24.
- Gen6 FLIT: header 16; sequence number, CRC and framing are per FLIT and already in the 236/256.
The header is 16 bytes (4 DW, 64-bit address): an NVMe drive moves read data to the host as memory writes with
64-bit addresses, and a 3 DW completion header (writes) only makes the model more conservative. These figures follow
Xilinx WP350, "Understanding Performance of PCI Express Systems" (J. Lawley, 2014), Table 1 (20–24 bytes per TLP).
DLLPs (ACK, flow-control updates) travel mostly against the data direction and are left out; the 0.90 threshold for
`bus_bound` leaves room for them.

When lspci does not report the negotiated MaxPayload, the model uses 128 bytes (the value every function starts with
after reset, PCIe Base Specification §7.5.3.4) and says so in the link's `missing`.

Only links the specification allows are modelled (`link_problems`): transfer rates of Gen1–Gen6 (2.5, 5, 8, 16, 32,
64 GT/s) and the widths x1, x2, x4, x8, x12, x16, x32 (PCIe Base Specification 6.0, §7.5.3.6, Maximum Link Width),
for both the capability (LnkCap) and the negotiated link (LnkSta), negotiated never above capability. 128 GT/s
(PCIe 7.0) is not accepted: no host or drive implements it, so an lspci that reports it describes no hardware a
result can come from; it joins the set when such hardware ships. Anything else gets no bandwidth and its problems are
listed, for the plausibility gates to hold the submission with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BUS_BOUND_UTILIZATION = 0.90
DEFAULT_MAX_PAYLOAD_BYTES = 128

# GT/s of each generation the site accepts; FLIT mode from Gen6 on. Gen7 (128 GT/s) is left out on purpose (above).
GENERATION_BY_SPEED_GTS: dict[float, int] = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
# The link widths the Link Capabilities register may encode (PCIe Base Specification 6.0, §7.5.3.6).
SPEC_WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 32)
HEADER_BYTES = 16


def generation(speed_gts: float | None) -> int | None:
    if speed_gts is None:
        return None
    return GENERATION_BY_SPEED_GTS.get(float(speed_gts))


def encoding_efficiency(gen: int) -> float:
    if gen <= 2:
        return 8 / 10
    if gen <= 5:
        return 128 / 130
    return 236 / 256


def tlp_overhead_bytes(gen: int) -> int:
    if gen <= 2:
        return 1 + 2 + HEADER_BYTES + 4 + 1
    if gen <= 5:
        return 4 + HEADER_BYTES + 4
    return HEADER_BYTES


def raw_bandwidth(speed_gts: float, width: int) -> float:
    """Bytes/s after line encoding, before packet overhead."""
    gen = generation(speed_gts)
    if gen is None:
        raise ValueError(f"{speed_gts} GT/s is not a PCIe transfer rate")
    return speed_gts * 1e9 * width * encoding_efficiency(gen) / 8


def usable_bandwidth(speed_gts: float, width: int, max_payload_bytes: int | None) -> float:
    """Bytes/s of payload one direction of the link can carry at this MaxPayload."""
    gen = generation(speed_gts)
    if gen is None:
        raise ValueError(f"{speed_gts} GT/s is not a PCIe transfer rate")
    payload = max_payload_bytes or DEFAULT_MAX_PAYLOAD_BYTES
    return raw_bandwidth(speed_gts, width) * payload / (payload + tlp_overhead_bytes(gen))


@dataclass(frozen=True)
class LinkEnd:
    """One link as lspci describes it: the capability (LnkCap) and what was negotiated (LnkSta)."""

    address: str = ""
    capable_speed_gts: float | None = None
    capable_width: int | None = None
    speed_gts: float | None = None
    width: int | None = None
    status_note: str = ""
    max_payload_bytes: int | None = None
    max_read_request_bytes: int | None = None
    # what lspci printed that is no link the specification allows ("LnkSta: Speed 128 GT/s is no PCIe transfer
    # rate"), from `link_problems`; a link with problems gets no bandwidth
    problems: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        """lspci reported a capability and a negotiated link for this end, and both are links the spec allows."""
        return (
            not self.problems
            and _allowed(self.capable_speed_gts, self.capable_width)
            and _allowed(self.speed_gts, self.width)
        )


def _allowed(speed: float | None, width: int | None) -> bool:
    return generation(speed) is not None and width in SPEC_WIDTHS


def describe(speed: float | None, width: int | None) -> str:
    """A link as lspci put it: "16 GT/s x4", "unknown speed x0"."""
    shown_speed = "unknown speed" if speed is None else f"{speed:g} GT/s"
    return f"{shown_speed} x{'?' if width is None else width}"


def link_problems(
    *,
    capable_speed_gts: float | None,
    capable_width: int | None,
    speed_gts: float | None,
    width: int | None,
    unreadable: tuple[str, ...] = (),
) -> tuple[str, ...]:
    """Why lspci's LnkCap and LnkSta of one function are no link the PCIe specification allows; () when they are.

    The values are lspci's own (a width of 0 is a link that is down, a speed of None "Speed unknown"); `unreadable`
    names the lines (LnkCap, LnkSta) lspci printed but that hold no "Speed …, Width x…". A function whose lspci shows
    neither line (capabilities unreadable without root, no PCI Express capability) has no problems, only no link.
    """
    problems = [f"its {label} line holds no readable speed and width" for label in unreadable]
    for label, speed, lanes in (
        ("LnkCap", capable_speed_gts, capable_width),
        ("LnkSta", speed_gts, width),
    ):
        if label in unreadable or (speed is None and lanes is None):
            continue
        if speed is None:
            problems.append(f"{label} speed is unknown (an lspci older than the link's generation prints this)")
        elif generation(speed) is None:
            rates = ", ".join(f"{rate:g}" for rate in GENERATION_BY_SPEED_GTS)
            problems.append(f"{label} speed {speed:g} GT/s is no PCIe transfer rate ({rates} GT/s)")
        if lanes == 0 and label == "LnkSta":
            problems.append("LnkSta width x0: the link is down")
        elif lanes not in SPEC_WIDTHS:
            widths = ", ".join(f"x{w}" for w in SPEC_WIDTHS)
            problems.append(f"{label} width x{lanes} is no PCIe link width ({widths})")
    has_cap = capable_speed_gts is not None or capable_width is not None or "LnkCap" in unreadable
    has_sta = speed_gts is not None or width is not None or "LnkSta" in unreadable
    if has_cap != has_sta:
        shown, absent = ("LnkCap", "LnkSta") if has_cap else ("LnkSta", "LnkCap")
        problems.append(f"lspci shows its {shown} but not its {absent}")
    both = _allowed(capable_speed_gts, capable_width) and _allowed(speed_gts, width)
    if both and (speed_gts > capable_speed_gts or width > capable_width):
        problems.append(
            f"negotiated {describe(speed_gts, width)} is above its capability {describe(capable_speed_gts, capable_width)}"
        )
    return tuple(problems)


@dataclass(frozen=True)
class LinkAssessment:
    """The drive's link judged against its capability, its path and the bandwidth model."""

    device: LinkEnd
    generation: int | None
    path_speed_gts: float | None
    path_width: int | None
    raw_bandwidth_bytes_per_s: float | None
    usable_bandwidth_bytes_per_s: float | None
    below_capability: bool | None
    below_capability_reason: str
    missing: dict[str, str] = field(default_factory=dict)
    # why the drive's link or a link on its path is no link the PCIe specification allows, one sentence each;
    # such a link has no bandwidth, and the plausibility gate `pcie_link` holds the submission with these reasons
    problems: tuple[str, ...] = ()


def _bandwidth_key(end: LinkEnd) -> float:
    if end.problems or end.speed_gts is None or not _allowed(end.speed_gts, end.width):
        return float("inf")
    return raw_bandwidth(end.speed_gts, end.width)


def assess_link(device: LinkEnd, upstream: LinkEnd | None = None, path: tuple[LinkEnd, ...] = ()) -> LinkAssessment:
    """Judge the drive's link. `upstream` is the port at the other end; `path` the links further up to the root."""
    missing: dict[str, str] = {}
    problems = [f"the drive's link ({device.address or 'the NVMe controller'}): {p}" for p in device.problems]
    problems += [
        f"the link of {end.address or 'a port'} on the drive's path: {p}" for end, p in _path_problems(upstream, path)
    ]
    if device.speed_gts is None or not device.width:
        missing["speed_gts"] = "lspci reported no negotiated link speed/width for the drive"
    elif not _allowed(device.speed_gts, device.width) or device.problems:
        missing["speed_gts"] = (
            f"lspci reported {describe(device.speed_gts, device.width)}, which is no link the PCIe specification allows"
        )
    if device.max_payload_bytes is None:
        missing["max_payload_bytes"] = (
            f"lspci reported no negotiated MaxPayload; the bandwidth model assumes {DEFAULT_MAX_PAYLOAD_BYTES} bytes"
        )

    # The narrowest link between the drive and the root complex bounds what the drive can move.
    chain = [device] + ([upstream] if upstream else []) + list(path)
    narrowest = min(chain, key=_bandwidth_key)
    if _bandwidth_key(narrowest) == float("inf"):
        narrowest = device
    path_speed, path_width = narrowest.speed_gts, narrowest.width
    if upstream is None and not path:
        missing["path"] = "the port upstream of the drive is not in the lspci output; the drive's own link is used"

    raw = usable = None
    if "speed_gts" not in missing:
        speed, width = path_speed, path_width
        if speed is None or not _allowed(speed, width):
            speed, width = device.speed_gts, device.width
        raw = raw_bandwidth(speed, width)
        # Every link on the path carries the same TLPs: the smallest MaxPayload configured along it applies.
        payloads = [end.max_payload_bytes for end in chain if end.max_payload_bytes]
        usable = usable_bandwidth(speed, width, min(payloads) if payloads else None)

    below, reason = _below_capability(device, upstream)
    return LinkAssessment(
        device=device,
        generation=generation(device.speed_gts),
        path_speed_gts=path_speed,
        path_width=path_width,
        raw_bandwidth_bytes_per_s=raw,
        usable_bandwidth_bytes_per_s=usable,
        below_capability=below,
        below_capability_reason=reason,
        missing=missing,
        problems=tuple(problems),
    )


def _path_problems(upstream: LinkEnd | None, path: tuple[LinkEnd, ...]):
    for end in ([upstream] if upstream else []) + list(path):
        for problem in end.problems:
            yield end, problem


def _below_capability(device: LinkEnd, upstream: LinkEnd | None) -> tuple[bool | None, str]:
    """Whether the negotiated speed or width is below what both ends support, and the one-line reason."""
    if not device.valid:
        return None, "lspci did not report both the capability and the negotiated state of the drive's link"
    cap_speed, cap_width = device.capable_speed_gts, device.capable_width
    other = "the drive supports"
    if upstream and upstream.valid:
        cap_speed = min(cap_speed, upstream.capable_speed_gts)
        cap_width = min(cap_width, upstream.capable_width)
        other = "both the drive and its upstream port support"
    problems = []
    if device.speed_gts < cap_speed:
        problems.append(f"runs at {_gts(device.speed_gts)} although {other} {_gts(cap_speed)}")
    if device.width < cap_width:
        problems.append(f"uses x{device.width} although {other} x{cap_width}")
    if problems:
        return True, "The link " + " and ".join(problems) + "."
    return False, ""


def _gts(speed: float) -> str:
    return f"{speed:g} GT/s (Gen{generation(speed)})"


def link_utilization(
    *, read_bw_bytes_per_s: float | None, write_bw_bytes_per_s: float | None, usable_bandwidth_bytes_per_s: float | None
) -> float | None:
    """The busier direction's share of the usable bandwidth (the link is full duplex)."""
    if not usable_bandwidth_bytes_per_s:
        return None
    values = [v for v in (read_bw_bytes_per_s, write_bw_bytes_per_s) if v is not None]
    if not values:
        return None
    return max(values) / usable_bandwidth_bytes_per_s


def is_bus_bound(utilization: float | None) -> bool:
    return utilization is not None and utilization >= BUS_BOUND_UTILIZATION


def bus_bound_reason(utilization: float, usable_bandwidth_bytes_per_s: float, link: LinkEnd) -> str:
    return (
        f"Moved {utilization:.0%} of the {usable_bandwidth_bytes_per_s / 1e9:.2f} GB/s a "
        f"Gen{generation(link.speed_gts)} x{link.width} link can carry: the bus, not the drive, set this number."
    )
