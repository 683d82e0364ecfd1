"""Text files (fio job files and interval logs, lspci -vvv, get-feature 0x06): only the lines of known form."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from analysis import privacy
from analysis.raw_allow.json_filter import fio_option
from analysis.raw_allow.kinds import FIO_JOB, FIO_LOG
from analysis.raw_allow.specs import FIO_OPTION_NAMES, words

# --- text: keep the lines of known form ---------------------------------------------------------------------------

JOB_SECTION = re.compile(r"\[([A-Za-z0-9_.:\-]{1,100})\]\s*\Z")
JOB_OPTION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*(.*?))?\s*\Z")
LOG_LINE = re.compile(r"\s*\d+,\s*-?\d+(?:\.\d+)?(?:,\s*\d+){2,4}\s*\Z")
VWC_LINE = re.compile(
    r"(?:get-feature:\s*0x0?6 \(Volatile Write Cache\), Current value:\s*(?:0x)?[0-9a-fA-F]+"
    r"|\s*Volatile Write Cache Enable \(WCE\):\s*(?:Enabled|Disabled))\s*\Z"
)
PCI_HEADER = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] \S")
PCI_LABEL = re.compile(r"([A-Za-z][A-Za-z0-9 /#_.()\-]*?):(?:\s|\Z)")
# a continuation line holds lspci's flags ("ExtTag- RBE+") or sizes ("MaxPayload 256 bytes, MaxReadReq 512 bytes")
PCI_FLAGS = re.compile(r"[A-Za-z0-9)][+-](?:[\s,]|\Z)|\d+ bytes|Not Supported|Supported|=\d+[a-z]*s\b")
PCI_LABELS = frozenset(
    [
        "Subsystem",
        "Control",
        "Status",
        "Latency",
        "Interrupt",
        "NUMA node",
        "IOMMU group",
        "Physical Slot",
        "Bus",
        "I/O behind bridge",
        "\n    Memory behind bridge",
        "Prefetchable memory behind bridge",
        "Secondary status",
        "BridgeCtl",
        "Capabilities",
        "Flags",
        "DevCap",
        "DevCtl",
        "\n    DevSta",
        "LnkCap",
        "LnkCtl",
        "LnkSta",
        "SltCap",
        "SltCtl",
        "SltSta",
        "RootCap",
        "RootCtl",
        "RootSta",
        "DevCap2",
        "DevCtl2",
        "DevSta2",
        "LnkCap2",
        "LnkCtl2",
        "\n    LnkSta2",
        "LnkCtl3",
        "LaneErrStat",
        "AtomicOpsCap",
        "AtomicOpsCtl",
        "Transmit Margin",
        "Compliance De-emphasis",
        "\n    Compliance Preset/De-emphasis",
        "Address",
        "Vector table",
        "PBA",
        "Masking",
        "Pending",
        "UESta",
        "UEMsk",
        "UESvrt",
        "CESta",
        "CEMsk",
        "AERCap",
        "\n    HeaderLog",
        "RootCmd",
        "ErrorSrc",
        "ACSCap",
        "ACSCtl",
        "L1SubCap",
        "L1SubCtl1",
        "L1SubCtl2",
        "Max snoop latency",
        "Max no snoop latency",
        "\n    Kernel driver in use",
        "Kernel modules",
        "PortCap",
        "PortSta",
        "Ctrl",
        "Arb",
        "Changed",
        "Caps",
        "ATSCap",
        "ATSCtl",
        "PRICtl",
        "PRISta",
        "\n    Page Request Capacity",
        "Page Request Allocation",
        "PASIDCap",
        "PASIDCtl",
        "IOVCap",
        "IOVCtl",
        "IOVSta",
        "Initial VFs",
        "VF offset",
        "\n    VF Migration",
        "DpcCap",
        "DpcCtl",
        "Source",
        "PTMCap",
        "PTMClockGranularity",
        "PTMControl",
        "PTMEffectiveGranularity",
        "\n    Completion Timeout",
        "Expansion ROM at",
        "Region 0",
        "Region 1",
        "Region 2",
        "Region 3",
        "Region 4",
        "Region 5",
        "ARICap",
        "ARICtl",
        "AFCap",
        "\n    AFCtrl",
        "AFStatus",
        "VC0",
        "VC1",
        "Supported Page Size",
        "L1SubSta",
        "DevCap3",
        "DevCtl3",
        "DevSta3",
        "LnkCap3",
    ]
)
PCI_LABELS = frozenset(label.strip() for label in PCI_LABELS)


def _width(line: str) -> int:
    """The indentation of a line, a tab counted as 8 columns."""
    prefix = line[: len(line) - len(line.lstrip(" \t"))]
    return len(prefix.replace("\t", " " * 8))


class Lines:
    """Keeps the lines of one text kind that are on its allow-list (state carries across lines for lspci)."""

    def __init__(self, kind: str, scrubber: privacy.Scrubber):
        self.kind, self.scrubber = kind, scrubber
        self.block: int | None = None  # lspci: indentation of the last kept labelled line, while its block lasts

    def line(self, line: str) -> str | None:
        if self.kind == FIO_JOB:
            return self.job_line(line)
        if self.kind == FIO_LOG:
            return line if LOG_LINE.match(line) else None
        if self.kind == "nvme-get-feature-vwc":
            return line if VWC_LINE.match(line) else None
        return self.lspci_line(line)

    def job_line(self, line: str) -> str | None:
        stripped = line.strip()
        if not stripped:
            return ""
        section = JOB_SECTION.match(stripped)
        if section:
            return f"[{self.scrubber.text(section.group(1))}]"
        option = JOB_OPTION.match(stripped)
        if not option:
            return None  # comments (free text), include directives, anything else
        name, value = option.group(1), option.group(2)
        if value is None:
            return name if name in FIO_OPTION_NAMES else None
        kept = fio_option(name, value, self.scrubber)
        return None if kept is None else f"{name}={kept}"

    def lspci_line(self, line: str) -> str | None:
        if not line.strip():
            self.block = None
            return ""
        width = _width(line)
        if width == 0:
            self.block = None
            return self.scrubber.text(line) if PCI_HEADER.match(line) else None
        stripped = line.strip()
        label = PCI_LABEL.match(stripped)
        first = stripped.split(None, 1)[0]
        if label is None or first.endswith(words("+ -")):  # the flags that continue a labelled line
            continued = self.block is not None and width > self.block and PCI_FLAGS.search(stripped)
            return self.scrubber.text(line) if continued else None
        if label.group(1) not in PCI_LABELS:
            self.block = None  # a field not on the list (VPD's product name, say): nothing under it either
            return None
        if self.block is None or width <= self.block:
            self.block = width
        return self.scrubber.text(line)


def reemit_text(kind: str, pieces: Iterable[str], scrubber: privacy.Scrubber) -> Iterator[str]:
    """The served form of a text file of `kind`, as it is read: the lines on its allow-list."""
    lines = Lines(kind, scrubber)
    pending = ""
    out: list[str] = []
    size = 0
    for piece in pieces:
        pending += piece
        *complete, pending = pending.split("\n")
        for line in complete:
            kept = lines.line(line.rstrip("\r"))
            if kept is not None:
                out.append(kept + "\n")
                size += len(kept) + 1
        if size >= privacy.CHUNK_CHARS:
            yield "".join(out)
            out, size = [], 0
    if pending:
        kept = lines.line(pending.rstrip("\r"))
        if kept is not None:
            out.append(kept + "\n")
    if out:
        yield "".join(out)
