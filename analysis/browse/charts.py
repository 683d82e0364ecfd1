"""Plotly figures built on the server from page data, each with the table of its numbers (shown and as CSV).

Figures are plain dicts ({"data": [...], "layout": {...}}) embedded with `json_script`. Plotly renders a few HTML
tags and entities in trace names and tick labels, so every string that comes from a bundle (drive names, firmware
revisions) goes through `plot_text`, which escapes it: it then shows literally and can never become markup.
"""

from __future__ import annotations

import copy
import html
import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from types import SimpleNamespace

from django.core.cache import cache
from django.utils.html import escape, format_html, format_html_join, json_script
from django.utils.safestring import mark_safe

from analysis.browse import units
from analysis.browse.compare import CompareData
from analysis.browse.queries import (
    STATISTICS_SECONDS,
    DriveData,
    metric_column,
    window_cells,
    window_mean,
)
from analysis.headline import BY_KEY, window_label
from analysis.models import DrivePageSummary

PALETTE = ("#0b5cad", "#c4461b", "#1a7f37", "#8250df", "#b08800", "#cf222e", "#1b7c83", "#57606a")
METRIC_UNITS = {"total_iops": "IOPS", "read_iops": "IOPS", "write_iops": "IOPS"}


def plot_text(value: object) -> str:
    return html.escape(str(value), quote=False)


@dataclass
class Chart:
    key: str
    title: str
    figure: dict
    columns: list[str]
    rows: list[list]
    note: str = ""
    verdict: list[tuple[str, str]] = field(default_factory=list)
    csv_url: str = ""
    # When a chart has many points, the page shows this summary and the CSV holds every row.
    summary_columns: list[str] | None = None
    summary_rows: list[list] | None = None
    # A chart with one level would draw a single point: the page shows this sentence instead (the CSV stays).
    sentence: str = ""
    # The element id of another chart whose table holds the same numbers: this one links there instead of repeating it.
    numbers_elsewhere: tuple = ()  # (element id, what a reader calls that chart)

    @property
    def table_html(self) -> str:
        columns = self.summary_columns or self.columns
        return html_table(columns, self.summary_rows if self.summary_rows is not None else self.rows)

    @property
    def html(self) -> str:
        """The chart's figure element: an empty plot container, its figure as JSON, and its numbers. Built here (the
        page has dozens of charts; an {% include %} per chart is slow); every value is escaped or JSON-encoded."""
        csv = format_html(' · <a href="{}" class="csv">CSV</a>', self.csv_url) if self.csv_url else ""
        if self.sentence:
            return format_html(
                '<p class="chart-sentence" id="{id}">{sentence}{csv}</p>',
                id=self.element_id,
                sentence=self.sentence,
                csv=format_html(' <small>(<a href="{}" class="csv">CSV</a>)</small>', self.csv_url)
                if self.csv_url
                else "",
            )
        if self.numbers_elsewhere:
            numbers = format_html(
                '<p class="numbers numbers-elsewhere">Numbers: <a href="#{}">the table under {}</a>{}</p>',
                self.numbers_elsewhere[0], self.numbers_elsewhere[1], csv,
            )  # fmt: skip
        else:
            numbers = format_html(
                '<details class="numbers" open><summary>Numbers{csv}</summary>{summary}{table}</details>',
                csv=csv,
                summary=mark_safe('<p class="note">A summary; the CSV holds every point.</p>')
                if self.summary_rows is not None
                else "",
                table=self.table_html,
            )
        verdict = format_html_join("", "<dt>{}</dt><dd>{}</dd>", self.verdict)
        return format_html(
            '<figure class="chart" id="{id}"><figcaption><h3>{title}</h3>{note}</figcaption>'
            '<div class="chart-body{wide}"><div class="plot" data-figure="{data_id}" role="img"'
            ' aria-label="{title} (numbers in the table below)"></div>{verdict}</div>{figure}{numbers}</figure>',
            id=self.element_id,
            title=self.title,
            note=format_html('<p class="note">{}</p>', self.note) if self.note else "",
            wide=" with-verdict" if self.verdict else "",
            data_id=self.data_id,
            verdict=format_html('<dl class="verdict">{}</dl>', verdict) if self.verdict else "",
            figure=json_script(self.figure, self.data_id),
            numbers=numbers,
        )

    @property
    def element_id(self) -> str:
        return f"chart-{self.key}"

    @property
    def data_id(self) -> str:
        return f"chart-{self.key}-data"


def html_table(columns: list[str], rows: list[list], *, text_columns: int = 1) -> str:
    """A table of numbers, built here because templates are slow at thousands of cells; every cell escaped.
    The first `text_columns` columns are text, the rest numbers (right-aligned, thousands separated)."""
    head = "".join(f'<th scope="col">{escape(c)}</th>' for c in columns)
    body = "".join(
        "<tr>" + "".join(_cell_html(value, text=i < text_columns) for i, value in enumerate(row)) + "</tr>"
        for row in rows
    )
    return mark_safe(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")  # noqa: S308


def _cell_html(value, *, text: bool) -> str:
    if value is None:
        shown = "—"
    elif isinstance(value, float) and not text:
        shown = escape(units.significant(value))
    else:
        shown = escape(f"{value:,}" if isinstance(value, int) and not text else value)
    return f"<td>{shown}</td>" if text else f'<td class="num">{shown}</td>'


def _layout(title: str, x_title: str, y_title: str, **extra) -> dict:
    layout = {
        "title": {"text": plot_text(title)},
        "xaxis": {"title": {"text": x_title}, "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True, "rangemode": "tozero"},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 60},
        "legend": {"orientation": "h", "y": -0.25},
        "height": 420,
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(layout.get(key), dict):
            layout[key] = {**layout[key], **value}
        else:
            layout[key] = value
    return layout


def _scaled(value: float | None, divisor: float) -> float | None:
    return None if value is None else value / divisor


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def run_window(run: dict | None) -> str:
    """How a run's charted values were averaged: its steady window only if it reached steady state."""
    return window_label(1 if run and run.get("steady") else 0, 1)


def _keep_digits(value: float) -> float:
    """At least 4 significant digits and one decimal: 3.4213 GB/s stays 3.421, 553,123 IOPS stays 553,123.0."""
    if value == 0:
        return 0.0
    return round(value, max(1, 3 - math.floor(math.log10(abs(value)))))


def _hover(trace: dict, unit: str, stored: list[float | None]) -> dict:
    """Hover text in the formatting layer's units (bytes/s also in binary units), never plotly's "100k"."""
    if unit == "bytes/s":
        trace["text"] = [
            units.MISSING if v is None else f"{units.bandwidth(v)} ({units.bandwidth_binary(v)})" for v in stored
        ]
    else:
        trace["text"] = [units.by_unit(unit, v) for v in stored]
    trace["hovertemplate"] = "%{x}: %{text}<extra>%{fullData.name}</extra>"
    if trace["type"] == "bar":
        trace["textposition"] = "none"  # the text is for hover; the table under the chart has the numbers
    return trace


def _metric_unit(metric: str) -> str:
    if metric in METRIC_UNITS:
        return "IOPS"
    if metric.endswith("bytes_per_s"):
        return "bytes/s"
    return "ns"


# --- drive page ---------------------------------------------------------------------------------------------------


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


def cached_breakdowns(data: DriveData) -> list[Chart]:
    """The breakdowns read every public run: written with the drive's data, else cached per data version."""
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
            "y": [_round(means.get((bs, mix)), 0) for bs in sizes],
            "line": {"color": PALETTE[i % len(PALETTE)]},
        }
        for i, mix in enumerate(mixes)
    ]
    for trace, mix in zip(traces, mixes, strict=True):
        _hover(trace, "IOPS", [means.get((bs, mix)) for bs in sizes])
    table = [[units.block_size(bs), *[_round(means.get((bs, mix)), 0) for mix in mixes]] for bs in sizes]
    return Chart(
        key="iops",
        title=f"IOPS by block size, one line per R/W mix ({window})",
        figure={
            "data": traces,
            "layout": _layout(
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
    z = [[_round(math.log10(v), 3) if (v := means.get((bs, mix))) else None for mix in mixes] for bs in sizes]
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
        "layout": _layout("IOPS, block size × R/W mix", "R/W mix", "Block size", yaxis={"type": "category"}),
    }
    return Chart(
        key="iops-matrix",
        title=f"IOPS matrix: block size × R/W mix ({window})",
        figure=figure,
        columns=["Block size", *[f"{units.mix(mix)} (IOPS)" for mix in mixes]],
        rows=[[units.block_size(bs), *[_round(means.get((bs, mix)), 0) for mix in mixes]] for bs in sizes],
        note="The same numbers as the table under the 2D plot, as the PTS report's matrix.",
        numbers_elsewhere=("chart-iops", "the IOPS by block size plot"),
    )


CONVERGENCE_LINES = 8  # a legend of more than a dozen lines cannot be read; the selector reaches every variable


def variable_label(window) -> str:
    """A tracking variable as people read it: "IOPS, 4 KiB, 65/35 R/W", never iops.total_iops.rw065.bs4096."""
    what = {"total_iops": "IOPS", "read_iops": "read IOPS", "write_iops": "write IOPS",
            "read_bw_bytes_per_s": "read throughput", "write_bw_bytes_per_s": "write throughput",
            "total_bw_bytes_per_s": "throughput", "lat_mean_ns": "mean latency",
            "lat_p9999_ns": "99.99% latency", "lat_max_ns": "maximum latency"}.get(window.metric, "value")  # fmt: skip
    return f"{what}, {units.block_size(window.block_size_bytes)}, {units.mix(window.read_pct)}"


RAW_VARIABLE = re.compile(r"\b(?:iops|tp|lat|wsat)\.([a-z_]+)\.rw(\d{3})\.bs(\d+)\b")


def humanize_variables(text: str) -> str:
    """Stored tracking-variable ids inside a sentence (a flag's reason, a verdict's note) as their human labels."""

    def label(match: re.Match) -> str:
        metric, read_pct, block = match.group(1), int(match.group(2)), int(match.group(3))
        return variable_label(SimpleNamespace(metric=metric, read_pct=read_pct, block_size_bytes=block))

    return RAW_VARIABLE.sub(label, text or "")


def convergence_windows(windows: list) -> list:
    """The tracking variables the convergence chart draws: the headline cells first, then by block size and mix."""
    headline_cells = {(h.phase, h.block_size_bytes, h.read_pct) for h in BY_KEY.values()}
    ordered = sorted(
        windows,
        key=lambda w: ((w.phase, w.block_size_bytes, w.read_pct) not in headline_cells, w.block_size_bytes,
                       -w.read_pct),
    )  # fmt: skip
    return ordered[:CONVERGENCE_LINES]


def steady_charts(data: DriveData, run: dict) -> list[Chart]:
    every_window = [w for w in data.windows if w.test_run_id == run["id"]]
    if not every_window:
        return []
    windows = convergence_windows(every_window)
    rows = data.measurements.get(run["id"], [])
    unit = _metric_unit(windows[0].metric)
    divisor, axis = units.axis_for(unit, [r.get(w.metric) for r in rows for w in windows[:1]])
    traces, table = [], []
    by_round: dict[str, dict[int, float | None]] = {}
    for i, window in enumerate(windows):
        series = {
            r["round__number"]: r[window.metric]
            for r in rows
            if r["round__phase"] == window.phase
            and r["block_size_bytes"] == window.block_size_bytes
            and r["read_pct"] == window.read_pct
            and window.metric in r
        }
        by_round[window.variable] = series
        ordered = sorted(series)
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": plot_text(variable_label(window)),
                "x": ordered,
                "y": [_round(_scaled(series[n], divisor), 2) for n in ordered],
                "line": {"color": PALETTE[i % len(PALETTE)]},
            }
        )
    rounds = sorted({n for series in by_round.values() for n in series})
    for n in rounds:
        table.append([n, *[_round(_scaled(by_round[w.variable].get(n), divisor), 2) for w in windows]])
    test = run["test"]
    convergence = Chart(
        key=f"steady-{test}",
        title=f"Steady-state convergence, {test.upper()} test: tracking variables by round",
        figure={"data": traces, "layout": _layout("Tracking variables by round", "Round", axis, xaxis={"dtick": 1})},
        columns=["Round", *[f"{variable_label(w)} ({axis})" for w in windows]],
        rows=table,
        note="Each line is one tracking variable; the test stops at the first round where all are steady."
        + (
            f" {len(windows)} of its {len(every_window)} variables are drawn (the headline cells first); pick any"
            " in the steady-state detail below."
            if len(every_window) > len(windows)
            else ""
        ),
    )
    return [
        convergence,
        *[window_chart(w) for w in every_window if w.rounds and w.values and w.average is not None],
    ]


def window_chart(window) -> Chart:
    unit = _metric_unit(window.metric)
    divisor, axis = units.axis_for(unit, window.values)
    rounds = list(window.rounds)
    values = [_scaled(v, divisor) for v in window.values]
    average = window.average / divisor
    fitted = (
        [(window.slope * n + window.intercept) / divisor for n in rounds]
        if window.slope is not None and window.intercept is not None
        else []
    )
    traces = [
        {"type": "scatter", "mode": "lines", "name": "average +10%", "x": rounds, "y": [average * 1.1] * len(rounds),
         "line": {"color": "#8c959f", "dash": "dot"}},
        {"type": "scatter", "mode": "lines", "name": "average −10%", "x": rounds, "y": [average * 0.9] * len(rounds),
         "line": {"color": "#8c959f", "dash": "dot"}, "fill": "tonexty", "fillcolor": "rgba(140,149,159,0.15)"},
        {"type": "scatter", "mode": "lines", "name": "average", "x": rounds, "y": [average] * len(rounds),
         "line": {"color": "#57606a"}},
        {"type": "scatter", "mode": "markers+lines", "name": "measured", "x": rounds, "y": values,
         "line": {"color": PALETTE[0]}},
    ]  # fmt: skip
    if fitted:
        traces.append(
            {"type": "scatter", "mode": "lines", "name": "least-squares fit", "x": rounds, "y": fitted,
             "line": {"color": PALETTE[1], "dash": "dash"}}
        )  # fmt: skip
    table = [
        [n, _round(v, 2), _round(average, 2), _round(f, 2) if fitted else None]
        for n, v, f in zip(rounds, values, fitted or [None] * len(rounds), strict=True)
    ]

    def scaled(value):
        return units.by_unit(unit, value)

    verdict = [
        ("Verdict", "steady" if window.steady else "not steady"),
        ("Steady at round", str(window.steady_round) if window.steady_round is not None else "—"),
        ("Window", f"rounds {window.first_round}–{window.last_round}"),
        ("Average", scaled(window.average)),
        ("Data excursion (max − min)", scaled(window.data_excursion)),
        ("Allowed (20% of average)", scaled(window.data_excursion_limit)),
        ("Slope excursion (|slope| × 4)", scaled(window.slope_excursion)),
        ("Allowed (10% of average)", scaled(window.slope_excursion_limit)),
    ]
    if window.claim_differs:
        verdict.append(("Client's claim", "differs: " + (humanize_variables(window.note) or "see the submission page")))
    return Chart(
        key=f"window-{window.pk}",
        title=f"Measurement window: {variable_label(window)}",
        figure={
            "data": traces,
            "layout": _layout(f"Measurement window: {variable_label(window)}", "Round", axis, xaxis={"dtick": 1}),
        },
        columns=["Round", f"Measured ({axis})", f"Average ({axis})", f"Fitted ({axis})"],
        rows=table,
        note="The shaded band is the average ±10% (the 20% data-excursion band); the dashed line is the fit.",
        verdict=verdict,
    )


def throughput(rows: list[dict], usable_bandwidth: float | None, *, window: str) -> Chart:
    cells = window_cells(rows)
    sizes = sorted({bs for (_, bs, _) in cells})
    read = {bs: window_mean(c, "read_bw_bytes_per_s") for (phase, bs, _), c in cells.items() if phase == "tp-read"}
    write = {bs: window_mean(c, "write_bw_bytes_per_s") for (phase, bs, _), c in cells.items() if phase == "tp-write"}
    labels = [units.block_size(bs) for bs in sizes]
    traces = [
        {"type": "bar", "name": "sequential read", "x": labels,
         "y": [_round(_scaled(read.get(bs), 1e6)) for bs in sizes], "marker": {"color": PALETTE[0]}},
        {"type": "bar", "name": "sequential write", "x": labels,
         "y": [_round(_scaled(write.get(bs), 1e6)) for bs in sizes], "marker": {"color": PALETTE[1]}},
    ]  # fmt: skip
    _hover(traces[0], "bytes/s", [read.get(bs) for bs in sizes])
    _hover(traces[1], "bytes/s", [write.get(bs) for bs in sizes])
    layout = _layout("Sequential throughput by block size", "Block size", "MB/s (10⁶ bytes/s)", barmode="group")
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
        [units.block_size(bs), _round(_scaled(read.get(bs), 1e6)), _round(_scaled(write.get(bs), 1e6)),
         _round(_scaled(usable_bandwidth, 1e6))]
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


def latency(rows: list[dict], *, window: str) -> Chart:
    cells = window_cells(rows)
    keys = sorted(cells, key=lambda k: (k[1], -k[2]))
    labels = [f"{units.block_size(bs)} {units.mix(mix)}" for (_, bs, mix) in keys]
    stats = (("lat_mean_ns", "mean"), ("lat_p9999_ns", "99.99%"), ("lat_max_ns", "max"))
    values = {column: [_round(_scaled(window_mean(cells[k], column), 1e3), 1) for k in keys] for column, _ in stats}
    traces = [
        _hover(
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
            "layout": _layout(
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


def write_saturation(rows: list[dict]) -> Chart:
    points = sorted(
        (r for r in rows if r["cumulative_write_bytes"] is not None), key=lambda r: r["cumulative_write_bytes"]
    )
    x = [round(r["cumulative_write_bytes"] / 1e9, 2) for r in points]
    y = [_round(r["total_iops"], 0) for r in points]
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
            "layout": _layout("Write saturation", "Total written (GB, 10⁹ bytes)", "IOPS"),
        },  # fmt: skip
        columns=["Sample", "Total written (GB)", "IOPS"],
        rows=[[r["round__number"], xi, yi] for r, xi, yi in zip(points, x, y, strict=True)],
    )


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
            "layout": _layout("Temperature", "Minutes since the test started (or sample number)", "°C"),
        },
        columns=["Test", "fio run", "Minutes (or sample)", "Temperature (°C)"],
        rows=table,
        note="From the drive's SMART log after each fio run.",
    )


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
        by_level[level].append((str(unit), _keep_digits(statistics.median(values) / divisor), len(values)))
    levels = sorted(by_level)
    sentence = _single_level_sentence(headline, factor_label, levels, points) if len(levels) == 1 else ""
    # a box needs two units: one unit is drawn as its point, never as a box flattened to a line
    traces = [
        {
            "type": "box",
            "name": plot_text(level),
            "x": [plot_text(level)] * len(by_level[level]),
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
            "layout": _layout(
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
                _keep_digits(statistics.median(p[1] for p in points_)),
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


# --- compare ------------------------------------------------------------------------------------------------------


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
         "y": [_round(per_drive[drive.pk].get(bs), 0) for bs in sizes], "line": {"color": PALETTE[i]}}
        for i, drive in enumerate(data.drives)
    ]  # fmt: skip
    for trace, drive in zip(traces, data.drives, strict=True):
        _hover(trace, "IOPS", [per_drive[drive.pk].get(bs) for bs in sizes])
    plotted = [v for values in per_drive.values() for v in values.values()]
    return Chart(
        key=f"iops-{mix}",
        title=f"IOPS by block size, {label} ({units.mix(mix)})",
        figure={
            "data": traces,
            "layout": _layout(
                f"IOPS, {label}", "Block size", "IOPS (log scale)", yaxis=units.log_axis(plotted, "IOPS")
            ),
        },
        columns=["Block size", *[f"{d.name} (IOPS)" for d in data.drives]],
        rows=[[units.block_size(bs), *[_round(per_drive[d.pk].get(bs), 0) for d in data.drives]] for bs in sizes],
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
                 "x": labels, "y": [_round(_scaled(values.get(bs), 1e6)) for bs in ordered],
                 "line": {"color": PALETTE[i], "dash": dash}}
            )  # fmt: skip
            _hover(traces[-1], "bytes/s", [values.get(bs) for bs in ordered])
    return Chart(
        key="throughput",
        title="Sequential throughput by block size",
        figure={"data": traces, "layout": _layout("Sequential throughput", "Block size", "MB/s (10⁶ bytes/s)")},
        columns=["Block size", *[f"{d.name} {direction} (MB/s)" for d in data.drives for direction in ("read", "write")]],
        rows=[
            [units.block_size(bs), *[_round(_scaled(table_values[d.pk][j].get(bs), 1e6)) for d in data.drives for j in (0, 1)]]
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
                 "y": [_round(_scaled(per_drive[drive.pk].get(k, (None, None))[j], 1e3)) for k in ordered],
                 "marker": {"color": PALETTE[i], "symbol": symbol, "size": 10}}
            )  # fmt: skip
            _hover(traces[-1], "ns", [per_drive[drive.pk].get(k, (None, None))[j] for k in ordered])
    return Chart(
        key="latency",
        title="Latency (mean and 99.99%) by block size and R/W mix",
        figure={
            "data": traces,
            "layout": _layout(
                "Latency", "Block size and R/W mix", "Latency (log scale)",
                yaxis=units.log_axis([y for t in traces for y in t["y"]], "ns", 1e3),
            ),
        },
        columns=["Block size and mix", *[f"{d.name} {s} (µs)" for d in data.drives for s in ("mean", "99.99%")]],
        rows=[
            [label, *[_round(_scaled(per_drive[d.pk].get(k, (None, None))[j], 1e3)) for d in data.drives for j in (0, 1)]]
            for k, label in zip(ordered, labels, strict=True)
        ],
    )  # fmt: skip
