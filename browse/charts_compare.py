"""The compare page's charts of the core tests: IOPS (random read, random write), throughput and latency per drive."""

from __future__ import annotations

from browse.compare import CompareData
from reports import units
from reports.chart_kit import PALETTE, Chart, figure_layout, plot_text, rounded, scaled, with_hover


def compare_charts(data: CompareData) -> list[Chart]:
    charts = []
    for mix, label in ((100, "random read"), (0, "random write")):
        charts.append(_compare_iops(data, mix, label))
    charts.append(_compare_throughput(data))
    charts.append(_compare_latency(data))
    return [c for c in charts if c.rows]


def _compare_iops(data: CompareData, mix: int, label: str) -> Chart:
    per_drive = {drive.pk: dict(data.figures[drive.pk]["iops"][str(mix)]) for drive in data.drives}
    sizes = sorted({bs for values in per_drive.values() for bs in values})
    labels = [units.block_size(bs) for bs in sizes]
    traces = [
        {"type": "scatter", "mode": "lines+markers", "name": plot_text(drive.name), "x": labels,
         "y": [rounded(per_drive[drive.pk].get(bs), 0) for bs in sizes], "line": {"color": PALETTE[i]}}
        for i, drive in enumerate(data.drives)
    ]  # fmt: skip
    for trace, drive in zip(traces, data.drives, strict=True):
        with_hover(trace, "IOPS", [per_drive[drive.pk].get(bs) for bs in sizes])
    plotted = [v for values in per_drive.values() for v in values.values()]
    return Chart(
        key=f"iops-{mix}",
        title=f"IOPS by block size, {label} ({units.mix(mix)})",
        figure={
            "data": traces,
            "layout": figure_layout(
                f"IOPS, {label}", "Block size", "IOPS (log scale)", yaxis=units.log_axis(plotted, "IOPS")
            ),
        },
        columns=["Block size", *[f"{d.name} (IOPS)" for d in data.drives]],
        rows=[[units.block_size(bs), *[rounded(per_drive[d.pk].get(bs), 0) for d in data.drives]] for bs in sizes],
    )


def _compare_throughput(data: CompareData) -> Chart:
    traces, table_values = [], {}
    sizes: set[int] = set()
    for drive in data.drives:
        figures = data.figures[drive.pk]["tp"]
        read, write = dict(figures["read"]), dict(figures["write"])
        table_values[drive.pk] = (read, write)
        sizes |= set(read) | set(write)
    ordered = sorted(sizes)
    labels = [units.block_size(bs) for bs in ordered]
    for i, drive in enumerate(data.drives):
        read, write = table_values[drive.pk]
        for direction, values, dash in (("read", read, "solid"), ("write", write, "dash")):
            traces.append(
                {"type": "scatter", "mode": "lines+markers", "name": plot_text(f"{drive.name}, {direction}"),
                 "x": labels, "y": [rounded(scaled(values.get(bs), 1e6)) for bs in ordered],
                 "line": {"color": PALETTE[i], "dash": dash}}
            )  # fmt: skip
            with_hover(traces[-1], "bytes/s", [values.get(bs) for bs in ordered])
    return Chart(
        key="throughput",
        title="Sequential throughput by block size",
        figure={"data": traces, "layout": figure_layout("Sequential throughput", "Block size", "MB/s (10⁶ bytes/s)")},
        columns=["Block size", *[f"{d.name} {direction} (MB/s)" for d in data.drives for direction in ("read", "write")]],
        rows=[
            [units.block_size(bs), *[rounded(scaled(table_values[d.pk][j].get(bs), 1e6)) for d in data.drives for j in (0, 1)]]
            for bs in ordered
        ],
    )  # fmt: skip


def _compare_latency(data: CompareData) -> Chart:
    per_drive = {}
    keys: set[tuple[str, int, int]] = set()
    for drive in data.drives:
        per_drive[drive.pk] = {(p, bs, mix): (mean, p9999) for p, bs, mix, mean, p9999 in data.figures[drive.pk]["lat"]}
        keys |= set(per_drive[drive.pk])
    ordered = sorted(keys, key=lambda k: (k[1], -k[2]))
    labels = [f"{units.block_size(bs)} {units.mix(mix)}" for (_, bs, mix) in ordered]
    traces = []
    for i, drive in enumerate(data.drives):
        for j, (stat, symbol) in enumerate((("mean", "circle"), ("99.99%", "diamond"))):
            traces.append(
                {"type": "scatter", "mode": "markers", "name": plot_text(f"{drive.name}, {stat}"), "x": labels,
                 "y": [rounded(scaled(per_drive[drive.pk].get(k, (None, None))[j], 1e3)) for k in ordered],
                 "marker": {"color": PALETTE[i], "symbol": symbol, "size": 10}}
            )  # fmt: skip
            with_hover(traces[-1], "ns", [per_drive[drive.pk].get(k, (None, None))[j] for k in ordered])
    return Chart(
        key="latency",
        title="Latency (mean and 99.99%) by block size and R/W mix",
        figure={
            "data": traces,
            "layout": figure_layout(
                "Latency", "Block size and R/W mix", "Latency (log scale)",
                yaxis=units.log_axis([y for t in traces for y in t["y"]], "ns", 1e3),
            ),
        },
        columns=["Block size and mix", *[f"{d.name} {s} (µs)" for d in data.drives for s in ("mean", "99.99%")]],
        rows=[
            [label, *[rounded(scaled(per_drive[d.pk].get(k, (None, None))[j], 1e3)) for d in data.drives for j in (0, 1)]]
            for k, label in zip(ordered, labels, strict=True)
        ],
    )  # fmt: skip
