"""The drive page's charts in order: each core test's (IOPS, TP, LAT, WSAT and their steady state, from its report in
reports.registry), then the temperature across the runs and the breakdowns."""

from __future__ import annotations

from browse.charts_breakdowns import cached_breakdowns
from browse.queries import DriveData
from reports import registry
from reports.chart_kit import PALETTE, Chart, figure_layout


def drive_charts(data: DriveData) -> list[Chart]:
    charts: list[Chart] = []
    for test, report in registry.REPORTS.items():
        run = data.selected.get(test)
        if run and report.drive_charts is not None:
            charts.extend(report.drive_charts(data, run))
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
