"""What the README.md of an SSSPT run folder states, and nothing more.

SSSPT's READMEs are written by hand: an HTML table describing the drive, a line or a `uname -a` block naming the
kernel, sometimes a sentence about the host ("generated from Jianshen Liu's RockPro64 board", "only enables the 2
Cortex-A72 CPUs"). A fact is taken only where a sentence states it; each comes with the README line it was read from,
so an imported record can say where every asserted value came from.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from analysis.identity import clean

README_ROW = re.compile(r"<td>\s*<b>(?P<label>[^<]+)</b>\s*</td>\s*<td>(?P<value>.*?)</td>", re.S | re.I)
KERNEL_RELEASE = re.compile(r"kernel release\s+(?P<release>[\w.+~-]+?)\.?(?:\s|$)", re.I)
UNAME_PROMPT = re.compile(r"^\s*\$?\s*uname\s+-a\s*$")
# `uname -a` prints the machine (and, on GNU, processor and platform) after the kernel version; these are the names
# Linux reports for the architectures a drive test could run on.
MACHINES = re.compile(r"\s(?P<machine>x86_64|i[3-6]86|aarch64|arm64|armv[5-8]\w*|ppc64le|ppc64|s390x|riscv64)(?:\s|$)")
BOARD = re.compile(r"(?:'s|\bthe|\ba|\bon)\s+(?P<board>[A-Z][\w.-]*\d[\w.-]*)\s+board\b")
ENABLED_CPUS = re.compile(r"\bonly enables the (?P<count>\d+) (?P<model>[A-Z][\w-]+) CPUs\b")
# A purge is documented when a line names the command (or the ATA/NVMe operation) that did it. A line that negates
# ("no purge", "without blkdiscard", "skipped the secure erase") documents nothing.
PURGES = (
    (re.compile(r"\bblkerasediscard(?:\.sh)?\b", re.I), "ATA secure erase + TRIM"),
    (re.compile(r"--security-erase-enhanced\b|\benhanced (?:security |secure )?erase\b", re.I), "ATA enhanced erase"),
    (re.compile(r"--security-erase\b|\bsecure[- ]erase(?:d)?\b", re.I), "ATA secure erase"),
    (re.compile(r"\bnvme\s+sanitize\b|\bsg_sanitize\b", re.I), "sanitize"),
    (re.compile(r"\bnvme\s+format\b|\bsg_format\b", re.I), "format"),
    (re.compile(r"\bblkdiscard\b|--trim-sector-ranges\b|\bdiscard_sectors(?:\.sh)?\b", re.I), "TRIM (discard)"),
)
NEGATION = re.compile(r"\b(?:no|not|never|without|skip\w*|disabled?)\b|n't\b", re.I)


@dataclass
class ReadmeFacts:
    table: dict[str, str] = field(default_factory=dict)  # the drive table: labels as written, values without tags
    kernel: str = ""
    architecture: str = ""
    board_name: str = ""
    cpu_model: str = ""
    cpu_count: int | None = None
    purge_method: str = ""
    evidence: dict[str, str] = field(default_factory=dict)  # fact -> the README line that states it
    conflicts: dict[str, str] = field(default_factory=dict)  # fact -> why it is left unknown


def parse_readme(text: str) -> ReadmeFacts:
    facts = ReadmeFacts(table=_table(text))
    lines = text.splitlines()
    _kernel(lines, facts)
    for number, line in enumerate(lines, start=1):
        where = f"README.md line {number}: {line.strip()}"[:200]
        if (board := BOARD.search(line)) and not facts.board_name:
            facts.board_name, facts.evidence["board_name"] = board["board"], where
        if (cpus := ENABLED_CPUS.search(line)) and facts.cpu_count is None:
            facts.cpu_count, facts.cpu_model = int(cpus["count"]), cpus["model"]
            facts.evidence["cpu_count"] = facts.evidence["cpu_model"] = where
        if not facts.purge_method and not NEGATION.search(line):
            method = next((name for pattern, name in PURGES if pattern.search(line)), "")
            if method:
                facts.purge_method, facts.evidence["purge_method"] = method, where
    return facts


def _table(text: str) -> dict[str, str]:
    return {
        html.unescape(m["label"]).strip(): clean(html.unescape(re.sub(r"<[^>]+>", " ", m["value"])))
        for m in README_ROW.finditer(text)
    }


def _kernel(lines: list[str], facts: ReadmeFacts) -> None:
    """The kernel release from `uname -a` output (its third field) or a "kernel release X" sentence; both must agree."""
    found: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if UNAME_PROMPT.match(line):
            output = next(((n, text) for n, text in enumerate(lines[number:], start=number + 1) if text.strip()), None)
            if output and output[1].split()[0] == "Linux" and len(output[1].split()) >= 3:
                where = f"README.md line {output[0]}: {output[1].strip()}"[:200]
                found.setdefault(output[1].split()[2], where)
                if (machine := MACHINES.search(output[1])) and not facts.architecture:
                    facts.architecture, facts.evidence["architecture"] = machine["machine"], where
        for match in KERNEL_RELEASE.finditer(line):
            found.setdefault(match["release"], f"README.md line {number}: {line.strip()}"[:200])
    if len(found) == 1:
        (facts.kernel, facts.evidence["kernel"]), *_ = found.items()
    elif found:
        facts.conflicts["kernel"] = f"the README names {len(found)} kernel releases ({', '.join(found)})"[:300]
