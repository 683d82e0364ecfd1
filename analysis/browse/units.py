"""Display formatting. Values are stored in SI base units; every displayed number carries its unit.

MB/s and GB/s are decimal (10^6 and 10^9 bytes per second), as drive vendors and the PTS report them; latency is
shown in µs or ms from nanoseconds; temperatures in °C from kelvin. A missing value shows as "—" (never zero).
"""

from __future__ import annotations

from django.utils.html import format_html

MISSING = "—"
KIB = 1024


def _number(value: float, digits: int = 3) -> str:
    """`digits` significant digits, thousands separated, no exponent for ordinary magnitudes."""
    if value == 0:
        return "0"
    magnitude = len(str(int(abs(value)))) if abs(value) >= 1 else 0
    decimals = max(digits - magnitude, 0)
    return f"{value:,.{decimals}f}"


def iops(value: float | None) -> str:
    if value is None:
        return MISSING
    if abs(value) >= 10_000:
        return f"{value / 1000:,.0f}k IOPS"
    return f"{_number(value)} IOPS"


def bandwidth(value: float | None) -> str:
    if value is None:
        return MISSING
    if abs(value) >= 1e9:
        return f"{_number(value / 1e9)} GB/s"
    return f"{_number(value / 1e6)} MB/s"


def latency(value_ns: float | None) -> str:
    if value_ns is None:
        return MISSING
    if abs(value_ns) >= 1e6:
        return f"{_number(value_ns / 1e6)} ms"
    return f"{_number(value_ns / 1e3)} µs"


def temperature(value_k: float | None) -> str:
    if value_k is None:
        return MISSING
    return f"{value_k - 273.15:.0f} °C"


def capacity(value_bytes: int | None) -> str:
    if value_bytes is None:
        return MISSING
    if value_bytes >= 10**12:
        return f"{_number(value_bytes / 10**12)} TB"
    return f"{_number(value_bytes / 10**9)} GB"


def block_size(value_bytes: int) -> str:
    if value_bytes < KIB:
        return f"{value_bytes} B"
    return f"{value_bytes // KIB} KiB"


def mix(read_pct: int) -> str:
    return f"{read_pct}/{100 - read_pct} R/W"


def by_unit(unit: str, value: float | None) -> str:
    """Format `value` given a headline's storage unit ("IOPS", "bytes/s", "ns")."""
    return {"IOPS": iops, "bytes/s": bandwidth, "ns": latency}.get(
        unit, lambda v: MISSING if v is None else _number(v)
    )(value)


# Chart axes: (divide stored value by, axis label)
AXIS = {
    "IOPS": (1.0, "IOPS"),
    "bytes/s": (1e6, "MB/s (10⁶ bytes/s)"),
    "ns": (1e3, "µs"),
}


def headline_cell(headline, aggregate) -> dict | None:
    """A headline aggregate as the pages show it: median, quartiles and spread formatted, with sample sizes."""
    if aggregate is None:
        return None
    cell = {
        "median": by_unit(headline.unit, aggregate.median),
        "q1": by_unit(headline.unit, aggregate.q1),
        "q3": by_unit(headline.unit, aggregate.q3),
        "iqr": by_unit(headline.unit, aggregate.iqr),
        "spread_pct": round(100 * aggregate.iqr / aggregate.median) if aggregate.median else None,
        "n_runs": aggregate.n_runs,
        "n_units": aggregate.n_units,
        "sample": sample_size_label(aggregate.n_runs),
        # a spread across runs of one unit is not the model's spread: shown only from two units on
        "spread_shown": aggregate.n_units >= 2,
    }
    cell["spread"] = cell["iqr"] if cell["spread_shown"] else units_label(aggregate.n_units)
    # built here, not by an {% include %} per cell: the drive list has hundreds of cells
    spread = (
        format_html('<span class="spread" title="Interquartile range: {} to {}">IQR {}</span>',
                    cell["q1"], cell["q3"], cell["iqr"])
        if cell["spread_shown"]
        else format_html('<span class="spread" title="No spread from a single unit">{}</span>', cell["spread"])
    )  # fmt: skip
    cell["html"] = format_html(
        '<span class="median">{}</span>{}<span class="badge badge-{}" title="{} run(s) on {} unit(s)">n={}</span>',
        cell["median"], spread, cell["sample"], cell["n_runs"], cell["n_units"], cell["n_runs"],
    )  # fmt: skip
    return cell


def units_label(n_units: int) -> str:
    """Where no spread is shown: how many units stand behind the value."""
    return "1 unit" if n_units == 1 else "unit unknown" if n_units == 0 else f"{n_units} units"


def sample_size_label(n_runs: int) -> str:
    """The sample-size badge: how far the median can be trusted."""
    if n_runs >= 10:
        return "large"
    if n_runs >= 3:
        return "small"
    return "single" if n_runs == 1 else "tiny"
