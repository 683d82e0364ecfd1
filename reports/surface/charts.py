"""The surface page (an nvmedb extension, not a PTS test; /drives/<slug>/surface/ and, for a run's owner,
/submissions/<id>/surface/): one answer sentence per access pattern, the line plots (reports.
surface.lines), heatmaps of bandwidth and IOPS over block size x queue depth, the parallelism speedup, and the
smallest cell reaching 90% of each pattern's peak bandwidth. The drive page shows the sentences and links here.

`load` (reports.surface.data) reads one surface run in three bounded queries and `section` builds the
charts from it.
"""

from __future__ import annotations

import math

from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from reports import units
from reports.chart_kit import Chart, figure_layout, plot_text, rounded, subplot_axis, subplot_grid
from reports.surface import lines, spread
from reports.surface.data import LABEL, PATTERN_TITLES, SurfaceData, load, pattern_order

PATTERN_COLOURS = {"read": "#0b5cad", "randread": "#1a7f37", "write": "#c4461b", "randwrite": "#8250df"}
HOW_TO_READ = (
    "Each cell is one fio run of one access pattern at one block size and queue depth (one job, so the queue depth "
    "is the number of I/Os in flight). Reading a row left to right shows what parallelism buys at that block size; "
    "the 90% figure names the smallest cell (fewest bytes in flight, ties to the lower queue depth) that reaches 90% "
    "of the pattern's peak bandwidth. Each cell runs several times, interleaved; its figure is the median, the bars "
    "span the repetitions' min–max, and the 90% point of the medians is checked against each repetition's own. "
    "Bandwidth is decimal: 1 MB/s = 10⁶ bytes/s."
)


def _heatmap(data: SurfaceData, *, key: str, title: str, value, text, colour_title: str, note: str) -> Chart:
    patterns = pattern_order({c["pattern"] for c in data.cells})
    sizes = sorted({c["block_size_bytes"] for c in data.cells})
    depths = sorted({c["iodepth"] for c in data.cells})
    by_key = {(c["pattern"], c["block_size_bytes"], c["iodepth"]): c for c in data.cells}
    rows_n, cols_n = subplot_grid(patterns)
    traces, layout_axes = [], {}
    for index, pattern in enumerate(patterns):
        cells = [[by_key.get((pattern, bs, qd)) for qd in depths] for bs in sizes]
        suffix = subplot_axis(index)
        traces.append(
            {
                "type": "heatmap",
                "name": PATTERN_TITLES[pattern],
                "x": [f"QD {qd}" for qd in depths],
                "y": [units.block_size(bs) for bs in sizes],
                "z": [[value(c) if c else None for c in row] for row in cells],
                "text": [[text(c) if c else units.MISSING for c in row] for row in cells],
                "texttemplate": "%{text}" if len(sizes) * len(depths) <= 48 else "",
                "hovertemplate": f"{PATTERN_TITLES[pattern]}, %{{y}} × %{{x}}: %{{text}}<extra></extra>",
                "coloraxis": "coloraxis",
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
            }
        )
        layout_axes[f"xaxis{suffix}"] = {
            "title": {"text": f"{PATTERN_TITLES[pattern]}: queue depth"},
            "type": "category",
            "automargin": True,
        }
        layout_axes[f"yaxis{suffix}"] = {"title": {"text": "Block size"}, "type": "category", "automargin": True}
    layout = figure_layout(title, "", "")
    layout.update(layout_axes)
    layout["grid"] = {"rows": rows_n, "columns": cols_n, "pattern": "independent"}
    layout["coloraxis"] = {"colorscale": "Viridis", "colorbar": {"title": {"text": colour_title}}}
    layout["height"] = 330 * rows_n + 90
    columns = ["Pattern", "Block size", *[f"QD {qd}" for qd in depths]]
    rows = [
        [
            PATTERN_TITLES[p],
            units.block_size(bs),
            *[text(c) if (c := by_key.get((p, bs, qd))) else None for qd in depths],
        ]
        for p in patterns
        for bs in sizes
    ]
    return Chart(key=key, title=title, figure={"data": traces, "layout": layout}, columns=columns, rows=rows, note=note)


def bandwidth_heatmap(data: SurfaceData) -> Chart:
    return _heatmap(
        data,
        key="surface-bandwidth",
        title="Bandwidth, block size × queue depth (MB/s)",
        value=lambda c: rounded(c["bw_bytes_per_s"] / 1e6, 1),
        text=lambda c: spread.marked(units.bandwidth(c["bw_bytes_per_s"]), c),
        colour_title="MB/s (10⁶ bytes/s)",
        note=f"{LABEL}. Median bandwidth of each cell's repetitions in the pattern's direction; colour in MB/s, "
        f"decimal. {spread.NOISY_NOTE}",
    )


def variation_heatmap(data: SurfaceData) -> Chart:
    """The coefficient of variation of each cell's repetitions; noisy cells marked."""
    return _heatmap(
        data,
        key="surface-variation",
        title="Variation between repetitions, block size × queue depth (CV of bandwidth, %)",
        value=spread.cv_value,
        text=spread.cv_text,
        colour_title="CV (%)",
        note=f"{LABEL}. Coefficient of variation: sample standard deviation ÷ mean of the cell's repetitions' "
        f"bandwidth. {spread.NOISY_NOTE} Empty where a cell ran once (no spread).",
    )


def iops_heatmap(data: SurfaceData) -> Chart:
    return _heatmap(
        data,
        key="surface-iops",
        title="IOPS, block size × queue depth",
        value=lambda c: rounded(math.log10(c["iops"]), 3) if c["iops"] and c["iops"] > 0 else None,
        text=lambda c: units.iops(c["iops"]),
        colour_title="log₁₀ IOPS",
        note=f"{LABEL}. Coloured by log₁₀ IOPS so the small blocks do not wash out; the labels are IOPS.",
    )


def speedup_heatmap(data: SurfaceData) -> Chart:
    return _heatmap(
        data,
        key="surface-speedup",
        title="Parallelism speedup per block size (IOPS at QD k ÷ IOPS at QD 1)",
        value=lambda c: rounded(c["speedup"], 3),
        text=lambda c: units.MISSING if c["speedup"] is None else f"{units.significant(c['speedup'])}×",
        colour_title="speedup (×)",
        note=f"{LABEL}. 1× at QD 1 by definition; empty where the QD 1 cell is missing or measured nothing.",
    )


def knee_chart(data: SurfaceData) -> Chart:
    """Each pattern's bandwidth as a share of its peak against bytes in flight, the 90% line and the knee."""
    peaks = {p["pattern"]: p for p in data.patterns}
    patterns = pattern_order(peaks)
    traces = []
    for pattern in patterns:
        peak = peaks[pattern]["peak_bw_bytes_per_s"]
        cells = sorted(
            (c for c in data.cells if c["pattern"] == pattern),
            key=lambda c: (c["block_size_bytes"] * c["iodepth"], c["iodepth"]),
        )
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": PATTERN_TITLES[pattern],
                "x": [c["block_size_bytes"] * c["iodepth"] for c in cells],
                "y": [rounded(100 * c["bw_bytes_per_s"] / peak, 2) if peak else None for c in cells],
                "text": [
                    f"{units.block_size(c['block_size_bytes'])} × QD {c['iodepth']}: {units.bandwidth(c['bw_bytes_per_s'])}"
                    for c in cells
                ],
                "hovertemplate": "%{text} (%{y}% of the peak)<extra>" + PATTERN_TITLES[pattern] + "</extra>",
                "marker": {"color": PATTERN_COLOURS[pattern], "size": 7, "opacity": 0.7},
            }
        )
    knees = [peaks[p] for p in patterns if peaks[p]["knee_iodepth"]]
    for number, k in enumerate(knees):  # one star per pattern, labelled with it (a legend entry and on the plot)
        where = f"{units.block_size(k['knee_block_size_bytes'])} × QD {k['knee_iodepth']}"
        traces.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "name": f"{PATTERN_TITLES[k['pattern']]}: 90% at {where}",
                "x": [k["knee_bytes_in_flight"]],
                "y": [rounded(100 * k["knee_bw_bytes_per_s"] / k["peak_bw_bytes_per_s"], 2)],
                "text": [f"{PATTERN_TITLES[k['pattern']]}: {where}"],
                "textposition": ("top left", "bottom right", "top right", "bottom left")[number % 4],
                "textfont": {"color": PATTERN_COLOURS[k["pattern"]]},
                "hovertemplate": "%{text} (%{y}% of the peak)<extra></extra>",
                "marker": {"symbol": "star", "size": 16, "color": PATTERN_COLOURS[k["pattern"]],
                           "line": {"color": "#111", "width": 1}},
            }
        )  # fmt: skip
    layout = figure_layout(
        "Bandwidth as a share of the pattern's peak, by bytes in flight",
        "Bytes in flight (block size × queue depth)",
        "% of the pattern's peak bandwidth",
        xaxis={"type": "log", **_byte_ticks({c["block_size_bytes"] * c["iodepth"] for c in data.cells})},
        shapes=[
            {
                "type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": 90, "y1": 90,
                "line": {"dash": "dash", "color": "#57606a"},
            }
        ],
    )  # fmt: skip
    rows = [
        [
            PATTERN_TITLES[p["pattern"]],
            units.bandwidth(p["peak_bw_bytes_per_s"]),
            f"{units.block_size(p['peak_block_size_bytes'])} × QD {p['peak_iodepth']}",
            f"{units.block_size(p['knee_block_size_bytes'])} × QD {p['knee_iodepth']}"
            if p["knee_iodepth"]
            else p["knee_reason"],
            units.size_binary(p["knee_bytes_in_flight"]) if p["knee_bytes_in_flight"] else None,
            units.bandwidth(p["knee_bw_bytes_per_s"]) if p["knee_bw_bytes_per_s"] is not None else None,
        ]
        for p in (peaks[name] for name in patterns)
    ]
    return Chart(
        key="surface-knee",
        title="Smallest block size × queue depth reaching 90% of the peak bandwidth",
        figure={"data": traces, "layout": layout},
        columns=["Pattern", "Peak bandwidth", "Peak at", "90% first reached at", "Bytes in flight", "Its bandwidth"],
        rows=rows,
        note=f"{LABEL}. Smallest = fewest bytes in flight (block size × QD), ties broken by the lower QD; a cell at "
        "exactly 90% counts. The dashed line is 90%; each star is that cell of the pattern it names.",
    )


def _byte_ticks(values: set[int]) -> dict:
    """Binary byte labels (4 KiB, 64 KiB, 1 MiB...) at every fourth power of two, not plotly's decimal 10k, 100k."""
    ticks = sorted(v for v in values if v > 0 and v & (v - 1) == 0 and (v.bit_length() - 1) % 4 == 0)
    return {"tickvals": ticks, "ticktext": [units.size_binary(v) for v in ticks]} if ticks else {}


def answers(data: SurfaceData) -> list[dict]:
    """One sentence per access pattern: its peak, the smallest cell reaching 90% of it (block size × QD and bytes in
    flight) and the QD 1 → peak speedup (the peak cell's IOPS ÷ the QD 1 cell's at the peak's block size)."""
    by_key = {(c["pattern"], c["block_size_bytes"], c["iodepth"]): c for c in data.cells}
    by_pattern = {p["pattern"]: p for p in data.patterns}
    found = []
    for p in (by_pattern[name] for name in pattern_order(by_pattern)):
        title = PATTERN_TITLES[p["pattern"]]
        if p["peak_bw_bytes_per_s"] is None:
            found.append({"pattern": p["pattern"], "sentence": f"{title}: no cell measured a bandwidth."})
            continue
        peak_at = f"{units.block_size(p['peak_block_size_bytes'])} × QD {p['peak_iodepth']}"
        sentence = f"{title} peaks at {units.bandwidth(p['peak_bw_bytes_per_s'])} ({peak_at})"
        if p["knee_iodepth"]:
            sentence += (
                f"; it reaches 90% of that at {units.block_size(p['knee_block_size_bytes'])} × QD "
                f"{p['knee_iodepth']} ({units.size_binary(p['knee_bytes_in_flight'])} in flight, "
                f"{units.bandwidth(p['knee_bw_bytes_per_s'])}){spread.agreement_clause(p)}"
            )
        else:
            sentence += f"; no cell reaches 90% of it ({p['knee_reason'] or 'no knee'})"
        peak_cell = by_key.get((p["pattern"], p["peak_block_size_bytes"], p["peak_iodepth"]))
        speedup = peak_cell["speedup"] if peak_cell else None
        if speedup is not None:
            sentence += (
                f"; QD 1 → peak: {units.significant(speedup)}× (IOPS at QD {p['peak_iodepth']} ÷ at QD 1, "
                f"{units.block_size(p['peak_block_size_bytes'])})."
            )
        else:
            sentence += "; QD 1 → peak: no QD 1 cell at the peak's block size."
        found.append({"pattern": p["pattern"], "sentence": sentence})
    return found


def answers_html(data: SurfaceData) -> str:
    return format_html_join(
        "",
        '<li class="surface-answer" data-pattern="{}">{}</li>',
        ((a["pattern"], a["sentence"]) for a in answers(data)),
    )


def _notes(data: SurfaceData) -> list[str]:
    notes = {p["target_note"] for p in data.patterns if p["target_note"]}
    if any(p["queue_depth_real"] is False for p in data.patterns):
        notes.add("The fio engine of this run does not keep the queue depth in flight: QD > 1 cells are not real.")
    repeats = spread.run_note(data.patterns)
    return [*([repeats] if repeats else []), *sorted(notes)]


def section(data: SurfaceData | None) -> dict | None:
    """The surface page's context (templates/browse/surface.html; None: no surface run to show)."""
    if data is None or not data.cells:
        return None
    charts = [
        lines.bandwidth_by_block_size(data),
        lines.bandwidth_by_depth(data),
        knee_chart(data),
        lines.latency_by_block_size(data),
        bandwidth_heatmap(data),
        iops_heatmap(data),
        speedup_heatmap(data),
        variation_heatmap(data),
    ]
    return {
        "run": data.run,
        "label": LABEL,
        "how_to_read": HOW_TO_READ,
        "answers": mark_safe(answers_html(data)),  # noqa: S308 -- built with format_html_join
        "charts": [chart.key for chart in charts],
        "html": mark_safe("".join(str(chart.html) for chart in charts)),  # noqa: S308 -- each built with format_html
        "notes": _notes(data),
        "claim_differs": any(p["claim_differs"] for p in data.patterns),
    }


def summary(data: SurfaceData | None) -> dict | None:
    """The drive page's short surface summary: the answer sentences and the run; the plots are on the surface page."""
    if data is None or not data.cells:
        return None
    return {
        "run": data.run,
        "label": LABEL,
        "answers": mark_safe(answers_html(data)),  # noqa: S308 -- built with format_html_join
        "notes": _notes(data),
        "claim_differs": any(p["claim_differs"] for p in data.patterns),
    }


def compare_chart(data) -> Chart | None:
    """The compare page's surface chart (nvmedb extension): per drive and access pattern of its newest public surface
    run, the peak bandwidth, the smallest (block size, QD) reaching 90% of it and the parallelism speedup of the peak
    cell; None when no compared drive has a surface run. `data`: browse.compare_pts.ComparePts."""
    runs = {d.pk: data.run(d, "surface") for d in data.drives}
    if not any(runs.values()):
        return None
    by_drive = {
        pk: {p["pattern"]: p for p in data.rows_of("surface").get(run["id"], [])} for pk, run in runs.items() if run
    }
    patterns = pattern_order({name for found in by_drive.values() for name in found})
    traces, rows = [], []
    for drive in data.drives:
        if runs[drive.pk] is None:
            rows.append([drive.name, None, None, None, "no run", None, None])
            continue
        found = by_drive[drive.pk]
        shown = [found.get(name) for name in patterns]
        traces.append(
            {
                "type": "bar",
                "name": plot_text(drive.name),
                "x": [PATTERN_TITLES[name] for name in patterns],
                "y": [rounded(p["peak_bw_bytes_per_s"] / 1e6, 1) if p and p["peak_bw_bytes_per_s"] is not None
                      else None for p in shown],
                "text": [plot_text(_knee_text(p)) if p else units.MISSING for p in shown],
                "hovertemplate": "%{x}: peak %{y:,.1f} MB/s; 90% at %{text}<extra>%{fullData.name}</extra>",
                "textposition": "none",
                "marker": {"color": data.colour(drive)},
            }
        )  # fmt: skip
        for name in patterns:
            p = found.get(name)
            if p is None:
                rows.append([drive.name, PATTERN_TITLES[name], None, None, "pattern not measured", None, None])
                continue
            rows.append([
                drive.name, PATTERN_TITLES[name],
                None if p["peak_bw_bytes_per_s"] is None else rounded(p["peak_bw_bytes_per_s"] / 1e6, 1),
                f"{units.block_size(p['peak_block_size_bytes'])} × QD {p['peak_iodepth']}" if p["peak_iodepth"] else None,
                _knee_text(p),
                None if p["knee_bw_bytes_per_s"] is None else rounded(p["knee_bw_bytes_per_s"] / 1e6, 1),
                rounded(p["peak_speedup"], 2),
            ])  # fmt: skip
    return Chart(
        key="compare-surface",
        title="Surface: peak bandwidth and the smallest block size × queue depth reaching 90% of it",
        figure={
            "data": traces,
            "layout": figure_layout(
                "Peak bandwidth per access pattern",
                "Access pattern",
                "Peak bandwidth, MB/s (10⁶ bytes/s)",
                barmode="group",
            ),
        },  # fmt: skip
        columns=["Drive", "Pattern", "Peak MB/s", "Peak at", "90% first reached at", "Its MB/s", "Speedup at peak (×)"],
        rows=rows,
        note=f"{LABEL}. Each drive's newest public surface run. Smallest = fewest bytes in flight, ties to the lower "
        "QD. Speedup at peak: the peak cell's IOPS ÷ the QD 1 cell's at its block size." + data.note("surface"),
    )


def _knee_text(pattern: dict) -> str:
    if pattern["knee_iodepth"]:
        return f"{units.block_size(pattern['knee_block_size_bytes'])} × QD {pattern['knee_iodepth']}"
    return f"none: {pattern['knee_reason']}" if pattern["knee_reason"] else "none"


def page_section(drive, submission_id=None, *, csv_link=None) -> dict | None:
    """The drive page's short surface summary (the plots and their CSV are on the surface page)."""
    return summary(load(drive, submission_id))


def own_page(drive=None, submission_id=None, *, runs=None) -> dict | None:
    """The surface page's context of a drive's newest public surface run, or of a submission's among `runs`."""
    return section(load(drive, submission_id, runs=runs))


def compare_charts(drives: list, data) -> list[Chart]:
    return [chart] if (chart := compare_chart(data)) is not None else []
