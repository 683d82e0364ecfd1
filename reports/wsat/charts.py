"""The WSAT test's drive-page chart: IOPS against the total data written."""

from __future__ import annotations

from reports.chart_kit import FILE_TARGET, PALETTE, Chart, ChartedRuns, PageSection, figure_layout, rounded

SECTION = PageSection(
    title="Write saturation: IOPS as the drive fills",
    how_to_read="A drive starts fast on fresh blocks and settles as garbage collection starts; the level it settles "
    "at is what sustained writes get.",
    short="Write saturation",
    chart_keys=("wsat",),
    file_target_how_to_read=f"IOPS as the file is written over and over. {FILE_TARGET}",
)


def write_saturation(rows: list[dict]) -> Chart:
    points = sorted(
        (r for r in rows if r["cumulative_write_bytes"] is not None), key=lambda r: r["cumulative_write_bytes"]
    )
    x = [round(r["cumulative_write_bytes"] / 1e9, 2) for r in points]
    y = [rounded(r["total_iops"], 0) for r in points]
    return Chart(
        key="wsat",
        title="Write saturation: IOPS against total data written",
        figure={
            "data": [
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": "4 KiB random write",
                    "x": x,
                    "y": y,
                    "line": {"color": PALETTE[0]},
                }
            ],
            "layout": figure_layout("Write saturation", "Total written (GB, 10⁹ bytes)", "IOPS"),
        },  # fmt: skip
        columns=["Sample", "Total written (GB)", "IOPS"],
        rows=[[r["round__number"], xi, yi] for r, xi, yi in zip(points, x, y, strict=True)],
    )


def drive_charts(data: ChartedRuns, run: dict) -> list[Chart]:
    """The drive page's WSAT chart of this run (WSAT is judged by its level, not by a steady-state window)."""
    return [write_saturation(data.measurements.get(run["id"], []))]
