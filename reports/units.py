"""Display formatting for the site: the client's `nvmedb_client.units` rules (one place for both), plus the HTML and
plotly pieces built from them. Values are stored in SI base units; every displayed number carries its unit.

MB/s, GB/s and GB are decimal (10^6 and 10^9 bytes), as drive vendors and the PTS state them, with the binary value
on hover; latency is shown in ns, µs, ms or s by magnitude; temperatures in °C from kelvin; 3 significant digits.
A missing value shows as "—" (never zero).
"""

from __future__ import annotations

import math

from django.utils.html import format_html
from django.utils.safestring import SafeString

from nvmedb_client.units import (  # noqa: F401 -- the site's formatting layer re-exports the shared rules
    MISSING,
    bandwidth,
    bandwidth_binary,
    block_size,
    by_unit,
    decade_label,
    decades,
    iops,
    latency,
    metric_unit,
    mix,
    percent,
    significant,
    size,
    size_binary,
    temperature,
)


def capacity(value_bytes: int | None) -> str:
    return size(value_bytes)


def with_binary(value: float | None, unit: str) -> SafeString | str:
    """Bytes or bytes/s in decimal units, the binary value in the hover title."""
    if value is None:
        return MISSING
    binary = size_binary(value) if unit == "bytes" else bandwidth_binary(value)
    return format_html('<span title="{}">{}</span>', binary, by_unit(unit, value))


def log_axis(values, unit: str, divisor: float = 1.0) -> dict:
    """A plotly log axis labelled at decades only, each label with its unit ("10 µs", "100k IOPS"); plotted values
    are the stored ones divided by `divisor`. No minor-tick labels ("2", "5")."""
    shown = [v for v in values if v is not None and v > 0]
    axis: dict = {"type": "log", "rangemode": "normal"}
    if not shown:
        return axis
    ticks = decades(min(shown), max(shown))
    axis.update(
        tickvals=ticks,
        ticktext=[decade_label(t * divisor, unit) for t in ticks],
        range=[math.log10(ticks[0]), math.log10(ticks[-1])],  # whole decades: every label is on the axis
        minor={"showgrid": False},
    )
    return axis


def axis_for(unit: str, values) -> tuple[float, str]:
    """(divide stored values by, axis title) for a linear axis, the scale chosen by the largest value so the ticks
    read "250 ms", never "250k µs"."""
    largest = max((abs(v) for v in values if v is not None), default=0.0)
    if unit == "ns":
        for divisor, label in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
            if largest >= divisor:
                return divisor, label
        return 1.0, "ns"
    if unit == "bytes/s":
        return (1e9, "GB/s (10⁹ bytes/s)") if largest >= 1e9 else (1e6, "MB/s (10⁶ bytes/s)")
    if unit == "IOPS" and largest >= 1e6:
        return 1e6, "million IOPS"
    return AXIS.get(unit, (1.0, unit))


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
        "n_contributors": aggregate.n_contributors,
        # one contributor's bundles cannot prove their hardware: the figure waits for a second, independent one
        "unconfirmed": aggregate.unconfirmed,
        # the median counts units (a run of an unknown unit is its own): so does its sample size
        "sample": sample_size_label(aggregate.n_units or aggregate.n_runs),
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
        '<span class="median">{}</span>{}<span class="badge badge-{}" title="{} run(s) on {} unit(s)">n={}</span>{}',
        cell["median"], spread, cell["sample"], cell["n_runs"], cell["n_units"], cell["n_runs"],
        UNCONFIRMED_HTML if cell["unconfirmed"] else "",
    )  # fmt: skip
    return cell


UNCONFIRMED_TITLE = "Backed by a single contributor: no independent upload confirms it yet"
UNCONFIRMED_HTML = format_html(' <span class="unconfirmed" title="{}">unconfirmed</span>', UNCONFIRMED_TITLE)


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
