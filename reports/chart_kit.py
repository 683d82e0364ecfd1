"""The shared chart toolkit: the Chart a page shows (figure, table of its numbers, CSV link), its layout and number helpers.

Figures are plain dicts ({"data": [...], "layout": {...}}) embedded with `json_script`. Plotly renders a few HTML
tags and entities in trace names and tick labels, so every string that comes from a bundle (drive names, firmware
revisions) goes through `plot_text`, which escapes it: it then shows literally and can never become markup.
Every test's charts (reports/<test>/charts.py) build on these public names.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Protocol

from django.utils.html import escape, format_html, format_html_join, json_script
from django.utils.safestring import mark_safe

from analysis.headline import window_label
from reports import units

PALETTE = ("#0b5cad", "#c4461b", "#1a7f37", "#8250df", "#b08800", "#cf222e", "#1b7c83", "#57606a")
METRIC_UNITS = {"total_iops": "IOPS", "read_iops": "IOPS", "write_iops": "IOPS"}


@dataclass(frozen=True)
class PageSection:
    """A core test's section of the drive page: its heading, how to read its charts (and how for a trial on a file
    target, which measures the host's file system, not a drive), its name in the page's list of sections, and the
    keys of the charts it holds besides its steady-state ones (steady-<test>)."""

    title: str
    how_to_read: str
    short: str
    chart_keys: tuple[str, ...]
    file_target_how_to_read: str


FILE_TARGET = "This run measured a file on the host's file system: its file system and page cache, not a drive."


class ChartedRuns(Protocol):
    """What the core tests' charts read of a drive page's data (browse's DriveData): the charted run of each test, and
    the measurements and steady-state windows of those runs."""

    selected: dict[str, dict]  # test -> run row

    @property
    def measurements(self) -> dict[int, list[dict]]: ...  # run id -> its charted measurement rows in round order

    @property
    def windows(self) -> list: ...  # the charted runs' SteadyStateWindow rows


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


def figure_layout(title: str, x_title: str, y_title: str, **extra) -> dict:
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


def scaled(value: float | None, divisor: float) -> float | None:
    return None if value is None else value / divisor


def rounded(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def run_window(run: dict | None) -> str:
    """How a run's charted values were averaged: its steady window only if it reached steady state."""
    return window_label(1 if run and run.get("steady") else 0, 1)


def keep_digits(value: float) -> float:
    """At least 4 significant digits and one decimal: 3.4213 GB/s stays 3.421, 553,123 IOPS stays 553,123.0."""
    if value == 0:
        return 0.0
    return round(value, max(1, 3 - math.floor(math.log10(abs(value)))))


def with_hover(trace: dict, unit: str, stored: list[float | None]) -> dict:
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


def metric_unit(metric: str) -> str:
    if metric in METRIC_UNITS:
        return "IOPS"
    if metric.endswith("bytes_per_s"):
        return "bytes/s"
    return "ns"


def subplot_grid(panels: list) -> tuple[int, int]:
    """(rows, columns) of a grid of small charts: one column for a single panel, else two."""
    columns = 1 if len(panels) == 1 else 2
    return math.ceil(len(panels) / columns), columns


def subplot_axis(index: int) -> str:
    """The suffix plotly gives the axes of the index-th subplot: "" for the first, then "2", "3", …"""
    return "" if index == 0 else str(index + 1)
