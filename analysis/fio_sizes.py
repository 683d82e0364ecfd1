"""fio's size and time option values (bs=4k, runtime=60s) as the cross-checks compare them (analysis.crosscheck)."""

from __future__ import annotations

import functools
import re

_SIZE = re.compile(r"^\s*(\d{1,20}(?:\.\d{1,20})?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
MAX_SIZE = 2**63


def parse_size(text: str, *, kb_base: int = 1024) -> int | None:
    """A fio size option in bytes. fio's default kb_base=1024 is its "compatibility mode": '4k' and '4KB' are 4096
    and the IEC '4KiB' is 4000; kb_base=1000 follows SI/IEC ('4kB' = 4000, '4KiB' = 4096). A bssplit or range is None.
    """
    text = str(text)
    return _size(text, kb_base == 1000) if len(text) <= 64 else _size.__wrapped__(text, kb_base == 1000)


@functools.lru_cache(maxsize=1024)
def _size(text: str, si: bool) -> int | None:
    """parse_size, kept for short texts: a bundle's hundreds of runs name the same few sizes several times each."""
    match = _SIZE.match(text)
    if not match:
        return None
    number, prefix, iec, _ = match.groups()
    power = "kmgtp".index(prefix.lower()) + 1 if prefix else 0
    binary = bool(iec) if si else not iec
    size = int(float(number) * (1024 if binary else 1000) ** power)
    return size if size < MAX_SIZE else None


def parse_seconds(text: str) -> float | None:
    match = re.match(r"^\s*(\d{1,20}(?:\.\d{1,20})?)\s*(us|ms|s|m|h)?\s*$", str(text))
    if not match:
        return None
    value, unit = float(match.group(1)), match.group(2) or "s"
    return value * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}[unit]
