"""The drive page's charts of the core tests in order (IOPS, TP, LAT, WSAT, their steady state, temperature, the
breakdowns). Each test's charts live in their own module (charts_iops, charts_tp, charts_lat, charts_wsat,
charts_steady); the shared toolkit is chart_kit. The names other modules use from here stay importable."""

from __future__ import annotations

from browse.chart_kit import PALETTE, Chart, figure_layout, run_window
from browse.charts_breakdowns import breakdowns, cached_breakdowns
from browse.charts_compare import compare_charts
from browse.charts_iops import iops_by_block_size, iops_heatmap
from browse.charts_lat import latency
from browse.charts_steady import (
    convergence_windows,
    humanize_variables,
    steady_charts,
    variable_label,
    window_chart,
)
from browse.charts_tp import throughput
from browse.charts_wsat import write_saturation
from browse.queries import DriveData

__all__ = [
    "Chart",
    "breakdowns",
    "compare_charts",
    "convergence_windows",
    "drive_charts",
    "humanize_variables",
    "temperature",
    "variable_label",
    "window_chart",
]


def drive_charts(data: DriveData) -> list[Chart]:
    charts: list[Chart] = []
    iops = data.selected.get("iops")
    if iops:
        rows = data.measurements.get(iops["id"], [])
        charts.append(iops_by_block_size(rows, window=run_window(iops)))
        charts.append(iops_heatmap(rows, window=run_window(iops)))
        charts.extend(steady_charts(data, iops))
    tp = data.selected.get("tp")
    if tp:
        charts.append(
            throughput(
                data.measurements.get(tp["id"], []),
                tp["pcie_link__usable_bandwidth_bytes_per_s"],
                window=run_window(tp),
            )
        )
        charts.extend(steady_charts(data, tp))
    lat = data.selected.get("lat")
    if lat:
        charts.append(latency(data.measurements.get(lat["id"], []), window=run_window(lat)))
        charts.extend(steady_charts(data, lat))
    wsat = data.selected.get("wsat")
    if wsat:
        charts.append(write_saturation(data.measurements.get(wsat["id"], [])))
    if data.selected:
        charts.append(temperature(data))
    charts.extend(cached_breakdowns(data))
    return [c for c in charts if c.rows]


def temperature(data: DriveData) -> Chart:
    traces, table = [], []
    for i, (test, run) in enumerate(data.selected.items()):
        rows = sorted(data.measurements.get(run["id"], []), key=lambda r: (r["started_at"] is None, r["started_at"]))
        rows = [r for r in rows if r["temperature_after_k"] is not None]
        if not rows:
            continue
        start = rows[0]["started_at"]
        if start is not None and all(r["started_at"] is not None for r in rows):
            x = [round((r["started_at"] - start).total_seconds() / 60, 1) for r in rows]
        else:
            x = list(range(1, len(rows) + 1))
        y = [round(r["temperature_after_k"] - 273.15, 1) for r in rows]
        traces.append(
            {"type": "scatter", "mode": "lines", "name": f"{test.upper()} test", "x": x, "y": y,
             "line": {"color": PALETTE[i % len(PALETTE)]}}
        )  # fmt: skip
        table.extend([test.upper(), r["run_key"], xi, yi] for r, xi, yi in zip(rows, x, y, strict=True))
        warning = run.get("warning_temperature_k")
        if warning:
            traces.append(
                {"type": "scatter", "mode": "lines", "name": f"warning threshold ({test.upper()} drive)",
                 "x": [x[0], x[-1]], "y": [round(warning - 273.15, 1)] * 2, "line": {"color": "#cf222e", "dash": "dot"}}
            )  # fmt: skip
    summary = []
    for test in dict.fromkeys(row[0] for row in table):
        temps = [row[3] for row in table if row[0] == test]
        summary.append([test, len(temps), temps[0], max(temps), temps[-1]])
    return Chart(
        summary_columns=["Test", "Samples", "First (°C)", "Highest (°C)", "Last (°C)"],
        summary_rows=summary,
        key="temperature",
        title="Drive temperature across each run (after each fio run)",
        figure={
            "data": traces,
            "layout": figure_layout("Temperature", "Minutes since the test started (or sample number)", "°C"),
        },
        columns=["Test", "fio run", "Minutes (or sample)", "Temperature (°C)"],
        rows=table,
        note="From the drive's SMART log after each fio run.",
    )
