"""How every number reads, on the site and in the CLI: always with its unit, 3 significant digits.

Values arrive in SI base units (IOPS, bytes/s, bytes, ns, K). Latency picks ns, µs, ms or s by magnitude (never
"100k µs"); bandwidth and sizes are decimal (MB/s, GB, as vendors and the PTS state them), with a binary twin
(MiB/s, GiB) for hover text; IOPS use k and M. A missing value shows as "—", never as zero. The site imports these
functions (its templates and charts), so they stay free of Django.
"""

from __future__ import annotations

import math
import re

MISSING = "—"
DIGITS = 3
KIB = 1024

_LATENCY = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_DECIMAL = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_BINARY = ((KIB**4, "Ti"), (KIB**3, "Gi"), (KIB**2, "Mi"), (KIB, "Ki"), (1, ""))
_COUNT = ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def significant(value: float, digits: int = DIGITS) -> str:
    """`digits` significant digits, trailing zeros kept ("3.40"), thousands separated, never an exponent.
    A number with more integer digits than `digits` keeps them all (rounded to a whole number)."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)
    exponent = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - exponent, 0)
    text = f"{round(value, decimals):,.{decimals}f}"
    # rounding can carry into a new digit (9.996 -> "10.00"): one decimal fewer then
    if decimals and len(text.replace(",", "").replace("-", "").replace(".", "").lstrip("0")) > digits:
        text = f"{round(value, decimals - 1):,.{decimals - 1}f}"
    return text


# Below this a value rounded to DIGITS significant digits stays below 1 (0.999 is the largest such number)
_ROUNDS_BELOW_ONE = 1 - 10**-DIGITS


def _rounds_to_one_or_more(scaled: float) -> bool:
    magnitude = abs(scaled)
    if magnitude >= 1:
        return True
    if magnitude < _ROUNDS_BELOW_ONE:
        return False
    return abs(float(f"{scaled:.{DIGITS}g}")) >= 1  # 0.9996 rounds to 1


def _scaled(value: float, scales: tuple[tuple[float, str], ...], template: str) -> str:
    """Pick the largest scale that keeps the rounded value at or above 1 (999,999 ns is "1.00 ms")."""
    for scale, prefix in scales:
        scaled = value / scale
        if _rounds_to_one_or_more(scaled) or scale == scales[-1][0]:
            return template.format(number=significant(scaled), prefix=prefix)
    raise AssertionError("unreachable")


def iops(value: float | None) -> str:
    if value is None:
        return MISSING
    return _scaled(value, _COUNT, "{number}{prefix} IOPS")


def latency(value_ns: float | None) -> str:
    if value_ns is None:
        return MISSING
    return _scaled(value_ns, _LATENCY, "{number} {prefix}")


def bandwidth(value: float | None) -> str:
    """Decimal: 3.40 GB/s is 3.40 x 10^9 bytes per second."""
    if value is None:
        return MISSING
    return _scaled(value, _DECIMAL, "{number} {prefix}B/s")


def bandwidth_binary(value: float | None) -> str:
    if value is None:
        return MISSING
    return _scaled(value, _BINARY, "{number} {prefix}B/s")


def size(value_bytes: float | None) -> str:
    """Decimal bytes: a 1 TB drive holds 10^12 bytes."""
    if value_bytes is None:
        return MISSING
    return _scaled(value_bytes, _DECIMAL, "{number} {prefix}B")


def size_binary(value_bytes: float | None) -> str:
    if value_bytes is None:
        return MISSING
    return _scaled(value_bytes, _BINARY, "{number} {prefix}B")


def size_both(value_bytes: float | None) -> str:
    """For text without hover (the CLI): "1.02 TB (954 GiB)"; below 1 KiB the two are the same ("512 B")."""
    if value_bytes is None:
        return MISSING
    if abs(value_bytes) < KIB:
        return size(value_bytes)
    return f"{size(value_bytes)} ({size_binary(value_bytes)})"


def temperature(value_k: float | None) -> str:
    if value_k is None:
        return MISSING
    return f"{value_k - 273.15:.0f} °C"


def percent(share: float | None) -> str:
    """A share (0.25) as a percentage with 3 significant digits ("25.0%")."""
    if share is None:
        return MISSING
    return f"{significant(share * 100)}%"


def change(ratio: float, unit: str = "%") -> str:
    """A ratio as a signed change: 0.25 → "−75%"; `unit=""` for interval bounds ("[−77, −70]")."""
    v = (ratio - 1) * 100
    text = f"{abs(v):.0f}" if abs(v) >= 9.95 else f"{abs(v):.1f}"
    sign = "−" if v < 0 and text.strip("0.") else "+" if unit else ""
    return sign + text + unit


def block_size(value_bytes: int) -> str:
    """Block sizes are powers of two and named that way (4 KiB, 128 KiB, 1 MiB)."""
    if value_bytes < KIB:
        return f"{value_bytes} B"
    if value_bytes >= KIB**2 and value_bytes % KIB**2 == 0:
        return f"{value_bytes // KIB**2} MiB"
    return f"{value_bytes // KIB} KiB"


def mix(read_pct: int) -> str:
    return f"{read_pct}/{100 - read_pct} R/W"


FORMATTERS = {"IOPS": iops, "bytes/s": bandwidth, "ns": latency, "bytes": size, "K": temperature}


def by_unit(unit: str, value: float | None) -> str:
    """Format `value` given its stored unit ("IOPS", "bytes/s", "ns", "bytes", "K")."""
    formatter = FORMATTERS.get(unit)
    if formatter is not None:
        return formatter(value)
    if value is None:
        return MISSING
    return f"{significant(value)} {unit}".strip()


def metric_unit(metric: str) -> str:
    """The stored unit of a measurement column or tracking metric (total_iops, read_bw_bytes_per_s, lat_mean_ns)."""
    if metric.endswith("iops"):
        return "IOPS"
    if metric.endswith("bytes_per_s"):
        return "bytes/s"
    if metric.endswith("_ns") or metric.startswith("lat"):
        return "ns"
    if metric.endswith("_k"):
        return "K"
    if metric.endswith("bytes"):
        return "bytes"
    return ""


def decades(low: float, high: float) -> list[float]:
    """The powers of ten that label a log axis covering [low, high]: one below low to one above high."""
    if low <= 0 or high <= 0:
        raise ValueError("a log axis needs positive values")
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    if first == last:
        last += 1
    return [10.0**n for n in range(first, last + 1)]


def decade_label(value: float, unit: str) -> str:
    """A decade tick in the unit's own scale, without decimals: "1 µs", "10 µs", "100 µs", "1 ms", "100k IOPS"."""
    return re.sub(r"(\d)\.0+(?!\d)", r"\1", by_unit(unit, value))
