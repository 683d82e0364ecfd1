"""Template filters of the formatting layer: `{% load nvmedb_units %}` then `{{ value|latency }}`,
`{{ w.average|measure:w.metric }}`, `{{ size|bytes }}` (decimal, the binary value on hover), `{{ w|variable }}` (a
tracking variable as people read it) and `{{ reason|variables }}` (stored text with its variable ids so read)."""

from __future__ import annotations

from django import template

from reports import units
from reports.steady import humanize_variables, variable_label

register = template.Library()

register.filter("iops", units.iops)
register.filter("bandwidth", units.bandwidth)
register.filter("latency", units.latency)
register.filter("temperature", units.temperature)
register.filter("percent", units.percent)
register.filter("significant", lambda value: units.MISSING if value is None else units.significant(value))


@register.filter
def block_size(value: int | None) -> str:
    return units.MISSING if value is None else units.block_size(value)


@register.filter
def measure(value: float | None, metric: str) -> str:
    """A value of a measurement column or tracking metric, formatted by the metric's unit."""
    return units.by_unit(units.metric_unit(metric), value)


@register.filter(name="bytes")
def bytes_(value: float | None) -> str:
    return units.with_binary(value, "bytes")


@register.filter
def bandwidth_binary(value: float | None) -> str:
    return units.with_binary(value, "bytes/s")


@register.filter
def mix(read_pct: int | None) -> str:
    return units.MISSING if read_pct is None else units.mix(read_pct)


@register.filter
def words(key: str) -> str:
    """A JSON key as words: "usable_bandwidth" reads "usable bandwidth"."""
    return str(key).replace("_", " ")


@register.filter
def variable(window) -> str:
    """A steady-state window's tracking variable: "IOPS, 4 KiB, 0/100 R/W", never iops.total_iops.rw000.bs4096."""
    return variable_label(window)


@register.filter
def variables(text: str) -> str:
    """Stored text (a flag's reason, a report's detail) with the tracking-variable ids in it as their labels."""
    return humanize_variables(text)
