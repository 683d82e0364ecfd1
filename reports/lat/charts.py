"""The LAT test's drive-page chart: mean, 99.99th percentile and maximum latency by block size and R/W mix."""

from __future__ import annotations

from reports import units
from reports.chart_kit import (
    FILE_TARGET,
    PALETTE,
    Chart,
    ChartedRuns,
    PageSection,
    figure_layout,
    rounded,
    run_window,
    scaled,
    with_hover,
)
from reports.steady import steady_charts
from reports.windows import window_cells, window_mean

SECTION = PageSection(
    title="Latency test: response times at queue depth 1",
    how_to_read="Lower is better. The mean is the typical wait; the 99.99th percentile and the maximum show the "
    "stalls an application feels. Log scale: each gridline is ten times the one below.",
    short="Latency",
    chart_keys=("latency",),
    file_target_how_to_read="Lower is better. The mean is the typical wait; the 99.99th percentile and the maximum "
    f"show the stalls. Log scale: each gridline is ten times the one below. {FILE_TARGET}",
)


def latency(rows: list[dict], *, window: str) -> Chart:
    cells = window_cells(rows)
    keys = sorted(cells, key=lambda k: (k[1], -k[2]))
    labels = [f"{units.block_size(bs)} {units.mix(mix)}" for (_, bs, mix) in keys]
    stats = (("lat_mean_ns", "mean"), ("lat_p9999_ns", "99.99%"), ("lat_max_ns", "max"))
    values = {column: [rounded(scaled(window_mean(cells[k], column), 1e3), 1) for k in keys] for column, _ in stats}
    traces = [
        with_hover(
            {"type": "bar", "name": label, "x": labels, "y": values[column], "marker": {"color": PALETTE[i]}},
            "ns",
            [window_mean(cells[k], column) for k in keys],
        )
        for i, (column, label) in enumerate(stats)
    ]
    plotted = [v for column, _ in stats for v in values[column]]
    return Chart(
        key="latency",
        title="Latency (mean, 99.99th percentile, maximum) by block size and R/W mix",
        figure={
            "data": traces,
            "layout": figure_layout(
                "Latency",
                "Block size and R/W mix",
                "Latency (log scale)",
                barmode="group",
                yaxis=units.log_axis(plotted, "ns", 1e3),
            ),
        },
        columns=["Block size and mix", "Mean (µs)", "99.99% (µs)", "Max (µs)"],
        rows=[[label, *[values[c][i] for c, _ in stats]] for i, label in enumerate(labels)],
        note=f"Total latency (submission + completion) of the worst direction ({window}); log scale.",
    )


def drive_charts(data: ChartedRuns, run: dict) -> list[Chart]:
    """The drive page's LAT charts of this run: latency by block size and mix, then its steady state."""
    return [latency(data.measurements.get(run["id"], []), window=run_window(run)), *steady_charts(data, run)]
