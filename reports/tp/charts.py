"""The TP test's drive-page chart: sequential read and write throughput by block size, against the PCIe link's limit."""

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
    title="Throughput test: sequential read and write",
    how_to_read="Higher is better. The dashed line is what the PCIe link can carry: a bar that reaches it measured "
    "the link, not the drive.",
    short="Throughput",
    chart_keys=("throughput",),
    file_target_how_to_read=f"Higher is better. {FILE_TARGET}",
)


def throughput(rows: list[dict], usable_bandwidth: float | None, *, window: str) -> Chart:
    cells = window_cells(rows)
    sizes = sorted({bs for (_, bs, _) in cells})
    read = {bs: window_mean(c, "read_bw_bytes_per_s") for (phase, bs, _), c in cells.items() if phase == "tp-read"}
    write = {bs: window_mean(c, "write_bw_bytes_per_s") for (phase, bs, _), c in cells.items() if phase == "tp-write"}
    labels = [units.block_size(bs) for bs in sizes]
    traces = [
        {"type": "bar", "name": "sequential read", "x": labels,
         "y": [rounded(scaled(read.get(bs), 1e6)) for bs in sizes], "marker": {"color": PALETTE[0]}},
        {"type": "bar", "name": "sequential write", "x": labels,
         "y": [rounded(scaled(write.get(bs), 1e6)) for bs in sizes], "marker": {"color": PALETTE[1]}},
    ]  # fmt: skip
    with_hover(traces[0], "bytes/s", [read.get(bs) for bs in sizes])
    with_hover(traces[1], "bytes/s", [write.get(bs) for bs in sizes])
    layout = figure_layout("Sequential throughput by block size", "Block size", "MB/s (10⁶ bytes/s)", barmode="group")
    note = f"Each block size: {window}."
    if usable_bandwidth:
        limit = usable_bandwidth / 1e6
        traces.append(
            {"type": "scatter", "mode": "lines", "name": "PCIe link usable bandwidth", "x": labels,
             "y": [round(limit, 1)] * len(labels), "line": {"color": "#cf222e", "dash": "dash"}}
        )  # fmt: skip
        note += f" Dashed line: what the negotiated PCIe link can carry, {units.bandwidth(usable_bandwidth)}."
    else:
        note += " The PCIe link's usable bandwidth is unknown for this run, so no limit line is drawn."
    table = [
        [units.block_size(bs), rounded(scaled(read.get(bs), 1e6)), rounded(scaled(write.get(bs), 1e6)),
         rounded(scaled(usable_bandwidth, 1e6))]
        for bs in sizes
    ]  # fmt: skip
    return Chart(
        key="throughput",
        title="Throughput: sequential read and write by block size",
        figure={"data": traces, "layout": layout},
        columns=["Block size", "Read (MB/s)", "Write (MB/s)", "Link usable (MB/s)"],
        rows=table,
        note=note,
    )


def drive_charts(data: ChartedRuns, run: dict) -> list[Chart]:
    """The drive page's TP charts of this run: throughput against the link's limit, then its steady state."""
    rows = data.measurements.get(run["id"], [])
    return [
        throughput(rows, run["pcie_link__usable_bandwidth_bytes_per_s"], window=run_window(run)),
        *steady_charts(data, run),
    ]
