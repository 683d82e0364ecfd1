"""The drive page's breakdowns: a headline figure by firmware and by PCIe generation, each unit a point."""

from __future__ import annotations

import copy
import statistics
from collections import defaultdict

from django.core.cache import cache

from analysis.headline import BY_KEY
from analysis.models import DrivePageSummary
from browse.queries import STATISTICS_SECONDS, DriveData, metric_column
from reports import units
from reports.chart_kit import PALETTE, Chart, figure_layout, keep_digits, plot_text


def cached_breakdowns(data: DriveData) -> list[Chart]:
    """The breakdowns read every public run: written with the drive's data, else cached per data version (the
    summary rebuild computes them once, for the page's sections and its own column)."""
    if data.breakdowns is not None:
        return [copy.copy(chart) for chart in data.breakdowns]  # views set each chart's CSV link
    if data.stored is not None:
        stored = (
            DrivePageSummary.objects.filter(drive_model=data.drive, version=data.version)
            .values_list("breakdowns", flat=True)
            .first()
        )  # its own column: the default page, whose sections hold these charts already, never reads it
        if stored is not None:
            return [Chart(**chart) for chart in stored]
    if data.version is None:
        return breakdowns(data)
    key = f"browse:breakdowns:v1:{data.drive.pk}:{data.version}"
    found = cache.get(key)
    if found is None:
        found = breakdowns(data)
        cache.set(key, found, STATISTICS_SECONDS)
    return [copy.copy(chart) for chart in found]  # views set each chart's CSV link


def breakdowns(data: DriveData) -> list[Chart]:
    charts = []
    for key, factor_label, level_of in (
        ("firmware", "Firmware", lambda r: r["firmware__revision"] or "unknown"),
        ("pcie", "PCIe generation", lambda r: f"Gen{r['pcie_link__generation']}" if r["pcie_link__generation"] else "unknown"),
    ):  # fmt: skip
        for metric in ("iops_4k_read", "bw_1m_read"):
            chart = _breakdown(data, key, factor_label, level_of, metric)
            if chart.rows:
                charts.append(chart)
    return charts


def _breakdown(data: DriveData, key: str, factor_label: str, level_of, metric: str) -> Chart:
    headline = BY_KEY[metric]
    column = metric_column(metric)
    divisor, axis = units.axis_for(headline.unit, [run[column] for run in data.runs])
    points: dict[tuple[str, object], list[float]] = defaultdict(list)
    for run in data.runs:
        value = run[column]
        if value is not None:
            unit = run["unit_id"] if run["unit_id"] is not None else f"run {run['id']}"
            points[(level_of(run), unit)].append(value)
    by_level: dict[str, list[tuple[str, float, int]]] = defaultdict(list)  # level -> (unit, median, runs)
    for (level, unit), values in sorted(points.items(), key=lambda item: (item[0][0], str(item[0][1]))):
        median = values[0] if len(values) == 1 else statistics.median(values)  # most units ran once
        by_level[level].append((str(unit), keep_digits(median / divisor), len(values)))
    levels = sorted(by_level)
    sentence = _single_level_sentence(headline, factor_label, levels, points) if len(levels) == 1 else ""
    # a box needs two units: one unit is drawn as its point, never as a box flattened to a line
    traces = [
        {
            "type": "box",
            "name": plot_text(level),
            "x0": plot_text(level),  # one box per trace: its place, not one copy of it per unit
            "y": [p[1] for p in by_level[level]],
            "boxpoints": "all",
            "jitter": 0.4,
            "pointpos": 0,
            "marker": {"color": PALETTE[i % len(PALETTE)], "size": 4},
        }
        if len(by_level[level]) >= 2
        else {
            "type": "scatter",
            "mode": "markers",
            "name": plot_text(level),
            "text": ["1 unit: no spread"],
            "x": [plot_text(level)],
            "y": [by_level[level][0][1]],
            "marker": {"color": PALETTE[i % len(PALETTE)], "size": 8},
        }
        for i, level in enumerate(levels)
    ]
    return Chart(
        key=f"by-{key}-{metric}",
        title=f"{headline.label} by {_factor_name(factor_label)}, each unit a point",
        figure={
            "data": traces,
            "layout": figure_layout(
                f"{headline.label} by {_factor_name(factor_label)}", factor_label, axis, showlegend=False
            ),
        },
        columns=[factor_label, "Unit", f"{headline.label} ({axis}, median of the unit's runs)", "Runs"],
        rows=[[level, *point] for level in levels for point in by_level[level]],
        summary_columns=[factor_label, "Units", "Runs", f"Lowest ({axis})", f"Median ({axis})", f"Highest ({axis})"],
        summary_rows=[
            [
                level,
                len(points_),
                sum(p[2] for p in points_),
                min(p[1] for p in points_),
                keep_digits(statistics.median(p[1] for p in points_)),
                max(p[1] for p in points_),
            ]
            for level in levels
            if (points_ := by_level[level])
        ],
        note="A unit tested several times counts once (the median of its runs); runs without a known unit count alone.",
        sentence=sentence,
    )


def _factor_name(label: str) -> str:
    """A factor's label inside a sentence: "firmware", but "PCIe generation"."""
    return label if label.startswith("PCIe") else label.lower()


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _single_level_sentence(headline, factor_label: str, levels: list[str], points: dict) -> str:
    """A breakdown with one level as a sentence: a chart of it would be a single column of points."""
    medians = sorted(statistics.median(values) for values in points.values())  # one per unit, all of the one level
    n_runs = sum(len(values) for values in points.values())
    sample = f"{_plural(n_runs, 'run')}, {_plural(len(medians), 'unit')}"
    value = units.by_unit(headline.unit, statistics.median(medians))
    if len(medians) >= 2:
        value += (
            f" ({units.by_unit(headline.unit, medians[0])} to {units.by_unit(headline.unit, medians[-1])} across units)"
        )
    what = _factor_name(factor_label)
    if levels[0] == "unknown":
        return f"{headline.label} by {what}: no run that measured it records its {what} ({sample}); median {value}."
    return f"{headline.label} by {what}: one level only, {levels[0]}, on every run that measured it ({sample}); median {value}."
