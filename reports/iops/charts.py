"""The IOPS test's drive-page charts: IOPS by block size (one line per R/W mix) and the same matrix as a heatmap."""

from __future__ import annotations

import math

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
    with_hover,
)
from reports.steady import steady_charts
from reports.windows import window_cells, window_mean

SECTION = PageSection(
    title="IOPS test: random I/O by block size and R/W mix",
    how_to_read="Higher is better. Each line is one read/write mix; small blocks show the drive's I/O rate, large "
    "blocks turn into throughput. The values are the measurement window's mean after preconditioning.",
    short="IOPS",
    chart_keys=("iops", "iops-matrix"),
    file_target_how_to_read=f"Higher is better. Each line is one read/write mix. {FILE_TARGET}",
)


def iops_by_block_size(rows: list[dict], *, window: str) -> Chart:
    cells = window_cells([r for r in rows if r["round__phase"] == "wdpc"])
    sizes = sorted({bs for (_, bs, _) in cells})
    mixes = sorted({mix for (_, _, mix) in cells}, reverse=True)
    means = {(bs, mix): window_mean(cell, "total_iops") for (_, bs, mix), cell in cells.items()}
    labels = [units.block_size(bs) for bs in sizes]
    traces = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": units.mix(mix),
            "x": labels,
            "y": [rounded(means.get((bs, mix)), 0) for bs in sizes],
            "line": {"color": PALETTE[i % len(PALETTE)]},
        }
        for i, mix in enumerate(mixes)
    ]
    for trace, mix in zip(traces, mixes, strict=True):
        with_hover(trace, "IOPS", [means.get((bs, mix)) for bs in sizes])
    table = [[units.block_size(bs), *[rounded(means.get((bs, mix)), 0) for mix in mixes]] for bs in sizes]
    return Chart(
        key="iops",
        title=f"IOPS by block size, one line per R/W mix ({window})",
        figure={
            "data": traces,
            "layout": figure_layout(
                "IOPS by block size", "Block size", "IOPS (log scale)", yaxis=units.log_axis(means.values(), "IOPS")
            ),
        },
        columns=["Block size", *[f"{units.mix(mix)} (IOPS)" for mix in mixes]],
        rows=table,
        note="The PTS 2D plot; the table is the block size × R/W mix matrix.",
    )


def iops_heatmap(rows: list[dict], *, window: str) -> Chart:
    """The block size × R/W mix matrix as a heatmap, coloured by log10(IOPS) so small blocks do not wash out."""
    cells = window_cells([r for r in rows if r["round__phase"] == "wdpc"])
    sizes = sorted({bs for (_, bs, _) in cells})
    mixes = sorted({mix for (_, _, mix) in cells}, reverse=True)
    means = {(bs, mix): window_mean(cell, "total_iops") for (_, bs, mix), cell in cells.items()}
    z = [[rounded(math.log10(v), 3) if (v := means.get((bs, mix))) else None for mix in mixes] for bs in sizes]
    text = [[units.iops(means.get((bs, mix))) for mix in mixes] for bs in sizes]
    figure = {
        "data": [
            {
                "type": "heatmap",
                "x": [units.mix(mix) for mix in mixes],
                "y": [units.block_size(bs) for bs in sizes],
                "z": z,
                "text": text,
                "texttemplate": "%{text}",
                "hovertemplate": "%{y}, %{x}: %{text}<extra></extra>",
                "colorscale": "Viridis",
                "colorbar": {"title": {"text": "log₁₀ IOPS"}},
            }
        ],
        "layout": figure_layout("IOPS, block size × R/W mix", "R/W mix", "Block size", yaxis={"type": "category"}),
    }
    return Chart(
        key="iops-matrix",
        title=f"IOPS matrix: block size × R/W mix ({window})",
        figure=figure,
        columns=["Block size", *[f"{units.mix(mix)} (IOPS)" for mix in mixes]],
        rows=[[units.block_size(bs), *[rounded(means.get((bs, mix)), 0) for mix in mixes]] for bs in sizes],
        note="The same numbers as the table under the 2D plot, as the PTS report's matrix.",
        numbers_elsewhere=("chart-iops", "the IOPS by block size plot"),
    )


def drive_charts(data: ChartedRuns, run: dict) -> list[Chart]:
    """The drive page's IOPS charts of this run: by block size, as a heatmap, then its steady state."""
    rows = data.measurements.get(run["id"], [])
    return [
        iops_by_block_size(rows, window=run_window(run)),
        iops_heatmap(rows, window=run_window(run)),
        *steady_charts(data, run),
    ]
