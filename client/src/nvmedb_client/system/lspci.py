"""Parser for `lspci -vvv` text (with or without -nn and -D), from pciutils 3.2 to 3.13.

What it reads per device: the slot address, class, vendor/device description (and ids with -nn), the PCI Express
port type, the link capability (LnkCap) and the negotiated link (LnkSta) with the annotations pciutils prints since
3.6 ("(downgraded)", "(ok)", "(overdriven)"; older versions print none), the largest supported payload (DevCap),
the configured MaxPayload and MaxReadReq (DevCtl), the NUMA node and the kernel driver.

lspci writes its warnings to stderr; a capture with 2>&1 may interleave them with the report, even in the middle of
a line ("pcilib: Error reading ...", "lspci: Unable to load libkmod resources"). They are removed before parsing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

NVME_CLASS_ID = "0108"
# a large server's `lspci -vvv` is about 1 MB; a report beyond this is no lspci output
MAX_REPORT_BYTES = 16 * 1024 * 1024


class LspciParseError(ValueError):
    """The text cannot be an lspci report."""


_STDERR_NOISE = re.compile(r"(?:pcilib|lspci): [^\n]*\n")
_HEADER = re.compile(
    r"^(?P<slot>(?:[0-9a-fA-F]{4,}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?P<class_name>[^:\[]+?)(?:\s+\[(?P<class_id>[0-9a-fA-F]{4})\])?:\s+(?P<rest>.*)$"
)
_HEX_DUMP = re.compile(r"^[0-9a-fA-F]{2,3}:( [0-9a-fA-F]{2})+\s*$")
_PROG_IF = re.compile(r"\s*\(prog-if (?P<prog_if>[0-9a-fA-F]{2})(?: \[(?P<name>[^\]]*)\])?\)$")
_REV = re.compile(r"\s*\(rev (?P<rev>[0-9a-fA-F]{2})\)$")
_IDS = re.compile(r"\s*\[(?P<vendor>[0-9a-fA-F]{4}):(?P<device>[0-9a-fA-F]{4})\]$")
_LINK = re.compile(
    r"Speed\s+(?:(?P<speed>\d{1,3}(?:\.\d{1,3})?)\s*(?:GT|Gb)/s|(?P<unknown>unknown))(?:\s*\((?P<speed_note>[a-z]+)\))?,\s*"
    r"Width\s+x(?P<width>\d{1,3})\b(?:\s*\((?P<width_note>[a-z]+)\))?"
)
_EXPRESS = re.compile(r"Capabilities: \[[0-9a-fA-F]+\] Express \(v\d\) (?P<type>[A-Za-z ]+?)(?: \(Slot[+-]\))?,")


@dataclass(frozen=True)
class PciDevice:
    """One function from an lspci -vvv report. Speeds in GT/s per lane, widths in lanes, sizes in bytes.

    A value lspci did not print is None: pre-3.6 pciutils print no LnkSta annotations, non-Express devices have no
    link, and without root lspci shows no capabilities at all (`capabilities_denied`).
    """

    slot: str
    class_name: str
    class_id: str | None
    description: str  # "<vendor name> <device name>" as lspci prints it
    vendor_id: str | None  # with -nn only
    device_id: str | None
    vendor_name: str | None  # split from the description when the vendor is known (see `load_vendor_names`)
    device_name: str | None
    revision: str | None
    prog_if: str | None
    subsystem: str | None
    express_type: str | None  # "Endpoint", "Root Port", "Upstream Port", "Downstream Port", ...
    link_cap_speed_gts: float | None
    link_cap_width: int | None
    link_speed_gts: float | None  # negotiated (LnkSta); None when lspci says "Speed unknown"
    link_width: int | None  # negotiated; 0 when the link is down
    link_speed_note: str | None  # "downgraded", "ok", "overdriven" (pciutils >= 3.6), else None
    link_width_note: str | None
    max_payload_supported_bytes: int | None  # DevCap
    max_payload_bytes: int | None  # DevCtl: the configured value
    max_read_request_bytes: int | None  # DevCtl
    numa_node: int | None
    driver: str | None
    capabilities_denied: bool  # lspci could not read the capabilities (run without root)
    # LnkCap / LnkSta lines lspci printed that hold no "Speed …, Width x…" (an edited or damaged report)
    link_unreadable: tuple[str, ...] = ()

    @property
    def is_nvme(self) -> bool:
        return self.class_id == NVME_CLASS_ID or (
            self.class_name == "Non-Volatile memory controller" and self.prog_if == "02"
        )

    @property
    def address(self) -> str:
        """The slot with its PCI domain, as sysfs names it ("0000:3b:00.0")."""
        return self.slot if self.slot.count(":") == 2 else f"0000:{self.slot}"

    def to_dict(self) -> dict:
        # a list, as facts.json reads it back
        return {
            **asdict(self),
            "link_unreadable": list(self.link_unreadable),
            "address": self.address,
            "is_nvme": self.is_nvme,
        }


def parse_lspci(text: str | bytes, *, vendor_names: Mapping[str, str] | None = None) -> list[PciDevice]:
    """Every device in an `lspci -vvv` report, in report order.

    `vendor_names` maps lowercase 4-digit vendor ids to names (from pci.ids); with it, the description is split into
    vendor and device name when the vendor id is known (-nn) or the description starts with a known vendor name.
    """
    if len(text) > MAX_REPORT_BYTES:
        raise LspciParseError(f"lspci output is {len(text)} bytes, more than the limit of {MAX_REPORT_BYTES}")
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = _STDERR_NOISE.sub("", text.replace("\r\n", "\n"))
    devices = []
    for header, body in _blocks(text.split("\n")):
        devices.append(_device(header, body, vendor_names or {}))
    return devices


def nvme_devices(devices: Iterable[PciDevice]) -> list[PciDevice]:
    return [device for device in devices if device.is_nvme]


def load_vendor_names(path: Path) -> dict[str, str]:
    """Vendor ids and names from a pci.ids file (the lines that are not indented)."""
    names = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            match = re.match(r"^([0-9a-f]{4})\s+(.+?)\s*$", line)
            if match:
                names[match.group(1)] = match.group(2)
    return names


def _blocks(lines: list[str]) -> Iterable[tuple[re.Match, list[str]]]:
    header = None
    body: list[str] = []
    for line in lines:
        match = _HEADER.match(line)
        if match:
            if header is not None:
                yield header, body
            header, body = match, []
        elif header is None or _HEX_DUMP.match(line):
            continue
        elif line.strip() and not line[0].isspace() and body:
            # A line that starts at column 0 inside a device is the wrapped tail of the previous line.
            body[-1] = f"{body[-1]} {line.strip()}"
        else:
            body.append(line)
    if header is not None:
        yield header, body


def _device(header: re.Match, body: list[str], vendor_names: Mapping[str, str]) -> PciDevice:
    rest = header.group("rest").strip()
    prog_if = revision = vendor_id = device_id = None
    match = _PROG_IF.search(rest)
    if match:
        prog_if, rest = match.group("prog_if").lower(), rest[: match.start()]
    match = _REV.search(rest)
    if match:
        revision, rest = match.group("rev").lower(), rest[: match.start()]
    match = _IDS.search(rest)
    if match:
        vendor_id, device_id = match.group("vendor").lower(), match.group("device").lower()
        rest = rest[: match.start()]
    description = rest.strip()
    vendor_name, device_name = _split_vendor(description, vendor_id, vendor_names)

    text = "\n".join(body)
    cap = _link_after(text, "LnkCap:")
    sta = _link_after(text, "LnkSta:")
    express = _EXPRESS.search(text)
    numa = re.search(r"^\s*NUMA node:\s*(-?\d{1,6})\b", text, re.MULTILINE)
    driver = re.search(r"^\s*Kernel driver in use:\s*(\S+)", text, re.MULTILINE)
    subsystem = re.search(r"^\s*Subsystem:\s*(.+?)\s*$", text, re.MULTILINE)
    devcap = re.search(r"DevCap:\s*MaxPayload (\d{1,6}) bytes", text)
    devctl = re.search(r"MaxPayload (\d{1,6}) bytes, MaxReadReq (\d{1,6}) bytes", text)
    return PciDevice(
        slot=header.group("slot").lower(),
        class_name=header.group("class_name").strip(),
        class_id=(header.group("class_id") or "").lower() or None,
        description=description,
        vendor_id=vendor_id,
        device_id=device_id,
        vendor_name=vendor_name,
        device_name=device_name,
        revision=revision,
        prog_if=prog_if,
        subsystem=subsystem.group(1) if subsystem else None,
        express_type=express.group("type").strip() if express else None,
        link_cap_speed_gts=cap["speed"] if cap else None,
        link_cap_width=cap["width"] if cap else None,
        link_speed_gts=sta["speed"] if sta else None,
        link_width=sta["width"] if sta else None,
        link_speed_note=sta["speed_note"] if sta else None,
        link_width_note=sta["width_note"] if sta else None,
        max_payload_supported_bytes=int(devcap.group(1)) if devcap else None,
        max_payload_bytes=int(devctl.group(1)) if devctl else None,
        max_read_request_bytes=int(devctl.group(2)) if devctl else None,
        numa_node=int(numa.group(1)) if numa else None,
        driver=driver.group(1) if driver else None,
        capabilities_denied="Capabilities: <access denied>" in text,
        link_unreadable=tuple(label for label, link in (("LnkCap", cap), ("LnkSta", sta)) if link is False),
    )


def _link_after(text: str, label: str) -> dict | None | bool:
    """The link on the line `label` starts: None without such a line, False when it holds no speed and width."""
    start = text.find(label)
    if start < 0:
        return None
    end = text.find("\n", start)
    match = _LINK.search(text, start, end if end >= 0 else len(text))
    if not match:
        return False
    return {
        "speed": None if match.group("unknown") else float(match.group("speed")),
        "width": int(match.group("width")),
        "speed_note": match.group("speed_note"),
        "width_note": match.group("width_note"),
    }


def _split_vendor(
    description: str, vendor_id: str | None, vendor_names: Mapping[str, str]
) -> tuple[str | None, str | None]:
    candidates = [vendor_names[vendor_id]] if vendor_id and vendor_id in vendor_names else []
    if not candidates and not vendor_id:
        candidates = sorted((name for name in vendor_names.values() if description.startswith(name)), key=len)[-1:]
    for name in candidates:
        if description == name:
            return name, None
        if description.startswith(name + " "):
            device_name = description[len(name) + 1 :]
            # lspci prints "Device" or "Device 14ee" when pci.ids does not know the device: its name is unknown.
            return name, None if re.fullmatch(r"Device(?: [0-9a-fA-F]{4})?", device_name) else device_name
    return None, None
