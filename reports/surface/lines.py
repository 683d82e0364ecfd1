"""The surface page's line plots (an nvmedb extension, not a PTS test): bandwidth over block size with one line per
queue depth, bandwidth over queue depth with one line per block size, and latency (mean and 99th percentile) over
block size at QD 1 and at the queue depth of each pattern's 90% point. One panel per access pattern, one legend.

Built from `data.SurfaceData` (no query of their own) with the shared chart toolkit (reports.chart_kit).
"""

from __future__ import annotations

from reports import units
from reports.chart_kit import Chart, figure_layout, rounded, subplot_axis, subplot_grid
from reports.surface import spread
from reports.surface.data import LABEL, PATTERN_TITLES, SurfaceData, pattern_order

MAX_LINES = 12  # a legend of more lines cannot be read: beyond it every other level is drawn (the table has all)
# ordered levels (small to large) as a sequential scale, so the line of QD 64 sits between QD 32's and QD 128's
SEQUENTIAL = ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b",
              "#fde725", "#e3c31e", "#c99a17")  # fmt: skip
LATENCY_LINES = (  # (cell key, at which depth, label, colour, dash)
    ("lat_mean_ns", "qd1", "mean, QD 1", "#0b5cad", "solid"),
    ("lat_p99_ns", "qd1", "99th percentile, QD 1", "#0b5cad", "dash"),
    ("lat_mean_ns", "knee", "mean, QD of the 90% point", "#c4461b", "solid"),
    ("lat_p99_ns", "knee", "99th percentile, QD of the 90% point", "#c4461b", "dash"),
)


def _colour(index: int, count: int) -> str:
    return SEQUENTIAL[round(index * (len(SEQUENTIAL) - 1) / max(1, count - 1))]


def _thinned(levels: list[int]) -> list[int]:
    """At most MAX_LINES levels: every other (every fourth...) one, always the smallest and the largest."""
    step = 1
    while len(levels[::step]) > MAX_LINES:
        step *= 2
    shown = levels[::step]
    if shown[-1] != levels[-1]:
        shown = [*shown[: MAX_LINES - 1], levels[-1]]
    return shown


def _log2_axis(values: list[int], label) -> dict:
    """A log axis for powers of two, ticked at the values (every other one when there are many)."""
    ticks = sorted(set(values))
    while len(ticks) > 9:
        ticks = ticks[::2]
    return {"type": "log", "tickvals": ticks, "ticktext": [label(v) for v in ticks], "automargin": True}


def _panels(data: SurfaceData, *, x_title: str, y_title: str, x_axis: dict, y_axis: dict | None = None) -> tuple:
    patterns = pattern_order({c["pattern"] for c in data.cells})
    rows_n, cols_n = subplot_grid(patterns)
    axes = {}
    for index, pattern in enumerate(patterns):
        suffix = subplot_axis(index)
        axes[f"xaxis{suffix}"] = {**x_axis, "title": {"text": f"{PATTERN_TITLES[pattern]}: {x_title}"}}
        axes[f"yaxis{suffix}"] = {"title": {"text": y_title}, "automargin": True, "rangemode": "tozero",
                                  **(y_axis or {})}  # fmt: skip
    return patterns, rows_n, cols_n, axes


def _figure(title: str, traces: list, rows_n: int, cols_n: int, axes: dict) -> dict:
    layout = figure_layout(title, "", "")
    layout.update(axes)
    layout["grid"] = {"rows": rows_n, "columns": cols_n, "pattern": "independent"}
    layout["height"] = 330 * rows_n + 130
    layout["legend"] = {"orientation": "h", "y": -0.12 if rows_n > 1 else -0.3}
    return {"data": traces, "layout": layout}


def _lines(data: SurfaceData, *, key: str, title: str, line_of: str, x_of: str, line_label, x_label, x_title: str,
           note: str) -> Chart:  # fmt: skip
    """Bandwidth (MB/s) over `x_of` with one line per level of `line_of`, a panel per pattern."""
    by_key = {(c["pattern"], c[line_of], c[x_of]): c for c in data.cells}
    levels = sorted({c[line_of] for c in data.cells})
    xs = sorted({c[x_of] for c in data.cells})
    drawn = _thinned(levels)
    patterns, rows_n, cols_n, axes = _panels(data, x_title=x_title, y_title="MB/s (10⁶ bytes/s)",
                                             x_axis=_log2_axis(xs, x_label))  # fmt: skip
    traces = []
    for index, pattern in enumerate(patterns):
        suffix = subplot_axis(index)
        for number, level in enumerate(drawn):
            cells = [by_key.get((pattern, level, x)) for x in xs]
            traces.append({
                "type": "scatter", "mode": "lines+markers", "name": line_label(level), "legendgroup": str(level),
                "showlegend": index == 0, "x": xs,
                "y": [rounded(c["bw_bytes_per_s"] / 1e6, 1) if c else None for c in cells],
                "text": [f"{units.bandwidth(c['bw_bytes_per_s'])}, {units.iops(c['iops'])} ({spread.hover(c)})"
                         if c else units.MISSING for c in cells],
                "marker": {"symbol": ["x" if c and c["noisy"] else "circle" for c in cells],
                           "size": [11 if c and c["noisy"] else 6 for c in cells]},
                **({"error_y": bars} if (bars := spread.error_bars(cells)) else {}),
                "hovertemplate": f"{PATTERN_TITLES[pattern]}, {line_label(level)}, %{{x}}: %{{text}}<extra></extra>",
                "line": {"color": _colour(number, len(drawn))}, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
            })  # fmt: skip
    if len(drawn) < len(levels):
        note += f" {len(drawn)} of the {len(levels)} lines are drawn (every other level); the table has them all."
    rows = [
        [PATTERN_TITLES[p], line_label(level),
         *[rounded(c["bw_bytes_per_s"] / 1e6, 1) if (c := by_key.get((p, level, x))) else None for x in xs]]
        for p in patterns
        for level in levels
    ]  # fmt: skip
    return Chart(
        key=key,
        title=title,
        figure=_figure(title, traces, rows_n, cols_n, axes),
        columns=["Pattern", "Line", *[f"{x_label(x)} (MB/s)" for x in xs]],
        rows=rows,
        note=f"{LABEL}. Each point is the median of the cell's repetitions; its bar spans their min–max. {note} "
        f"{spread.NOISY_NOTE.replace(spread.NOISY_MARK + ' marks', 'A larger × marks')}",
    )


def bandwidth_by_block_size(data: SurfaceData) -> Chart:
    return _lines(
        data,
        key="surface-bw-by-bs",
        title="Bandwidth over block size, one line per queue depth",
        line_of="iodepth",
        x_of="block_size_bytes",
        line_label=lambda qd: f"QD {qd}",
        x_label=units.block_size,
        x_title="block size",
        note="Where a line flattens, a larger block buys nothing at that queue depth. Log block-size axis; MB/s "
        "decimal.",
    )


def bandwidth_by_depth(data: SurfaceData) -> Chart:
    return _lines(
        data,
        key="surface-bw-by-qd",
        title="Bandwidth over queue depth, one line per block size",
        line_of="block_size_bytes",
        x_of="iodepth",
        line_label=units.block_size,
        x_label=str,
        x_title="queue depth",
        note="What parallelism buys at each block size: a line that flattens has reached what the target gives at "
        "that size. Log queue-depth axis; MB/s decimal.",
    )


def latency_by_block_size(data: SurfaceData) -> Chart:
    """Mean and 99th-percentile total latency over block size, at QD 1 and at the QD of the pattern's 90% point."""
    by_key = {(c["pattern"], c["block_size_bytes"], c["iodepth"]): c for c in data.cells}
    knees = {p["pattern"]: p["knee_iodepth"] for p in data.patterns}
    sizes = sorted({c["block_size_bytes"] for c in data.cells})
    patterns, rows_n, cols_n, axes = _panels(
        data, x_title="block size", y_title="latency, µs (log)", x_axis=_log2_axis(sizes, units.block_size),
        y_axis={"type": "log", "rangemode": "normal"},
    )  # fmt: skip
    for index, pattern in enumerate(patterns):
        knee = knees.get(pattern)
        title = axes[f"xaxis{subplot_axis(index)}"]["title"]
        title["text"] += f" (90% point at QD {knee})" if knee else " (no 90% point)"
    traces, rows = [], []
    for index, pattern in enumerate(patterns):
        suffix = subplot_axis(index)
        for column, where, label, colour, dash in LATENCY_LINES:
            depth = 1 if where == "qd1" else knees.get(pattern)
            if depth is None or (where == "knee" and depth == 1):
                continue  # no 90% point, or it is at QD 1: the QD 1 lines are its lines
            cells = [by_key.get((pattern, bs, depth)) for bs in sizes]
            values = [c[column] if c else None for c in cells]
            traces.append({
                "type": "scatter", "mode": "lines+markers", "name": label, "legendgroup": label,
                "showlegend": not any(t["name"] == label for t in traces), "x": sizes,
                "y": [rounded(v / 1e3, 2) if v is not None else None for v in values],
                "text": [units.latency(v) for v in values],
                "hovertemplate": f"{PATTERN_TITLES[pattern]}, {label.replace('QD of the 90% point', f'QD {depth}')}, "
                "%{x}: %{text}<extra></extra>",
                "line": {"color": colour, "dash": dash}, "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
            })  # fmt: skip
        for depth in dict.fromkeys((1, knees.get(pattern) or 1)):
            for bs in sizes:
                c = by_key.get((pattern, bs, depth))
                rows.append([
                    PATTERN_TITLES[pattern], units.block_size(bs), depth,
                    rounded(c["lat_mean_ns"] / 1e3, 2) if c and c["lat_mean_ns"] is not None else None,
                    rounded(c["lat_p99_ns"] / 1e3, 2) if c and c["lat_p99_ns"] is not None else None,
                ])  # fmt: skip
    missing = [c for c in data.cells if c["lat_mean_ns"] is None or c["lat_p99_ns"] is None]
    note = (
        f"{LABEL}. Total latency (submission + completion) of each cell's median repetition's fio run, in its "
        "direction: the mean and "
        "the 99th percentile, the percentiles fio keeps for every cell (99, 99.9, 99.99, 99.999; the table and CSV "
        "hold the 99th). Log latency axis."
    )
    if missing:
        note += f" {len(missing)} of the {len(data.cells)} cells have no stored latency (—): the fio run's figure is missing."
    return Chart(
        key="surface-latency",
        title="Latency over block size: mean and 99th percentile, at QD 1 and at the 90% point's queue depth",
        figure=_figure("Latency over block size", traces, rows_n, cols_n, axes),
        columns=["Pattern", "Block size", "QD", "Mean (µs)", "99th percentile (µs)"],
        rows=rows,
        note=note,
    )
