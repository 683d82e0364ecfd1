"""The drive page's ECW and DIRTH section: the demand-intensity curve of each (IOPS against mean and 99.999th
percentile response time per TC x QD cell) and DIRTH's response-time histograms at its operating points.

Self-contained: `load` reads the newest public ECW and DIRTH curves of the drive in three bounded queries (the
curves, their points, the operating points with their buckets), whatever else the page loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analysis.models import DemandIntensityCurve, DemandIntensityPoint, HistogramBucket
from analysis.selectors import public_test_runs
from reports import units
from reports.chart_kit import PALETTE, Chart, figure_layout, plot_text, rounded

TESTS = {"ecw": "Enterprise composite workload (ECW)", "dirth": "DIRTH (random 4 KiB writes)"}
POINT_LABELS = {"max": "MaxIOPS", "mid": "MidIOPS", "min": "MinIOPS"}
SOURCES = {"capture": "its capture run", "sweep cell": "its sweep cell"}
MAX_CURVES = 20  # the newest curves looked at to find the newest of each test


@dataclass
class Section:
    curves: dict = field(default_factory=dict)  # test -> (curve, [points])
    histograms: list = field(default_factory=list)  # [(operating point, [buckets])] of the DIRTH curve
    charts: list[Chart] = field(default_factory=list)


def load(drive, submission_id=None) -> Section | None:
    """The newest public ECW and DIRTH curves of `drive` (of `submission_id` when one is chosen), or None."""
    runs = public_test_runs().filter(drive_model=drive, test__in=list(TESTS))
    if submission_id is not None:
        runs = runs.filter(submission_id=submission_id)
    newest: dict[str, DemandIntensityCurve] = {}
    for curve in (
        DemandIntensityCurve.objects.filter(test_run__in=runs).select_related("test_run").order_by("-id")[:MAX_CURVES]
    ):
        newest.setdefault(curve.test_run.test, curve)
    if not newest:
        return None
    section = Section()
    points: dict[int, list] = {curve.id: [] for curve in newest.values()}
    for point in DemandIntensityPoint.objects.filter(curve__in=list(newest.values())).order_by("outstanding_ios"):
        points[point.curve_id].append(point)
    section.curves = {test: (newest[test], points[newest[test].id]) for test in TESTS if test in newest}
    if "dirth" in newest:
        by_point: dict[int, tuple] = {}
        buckets = HistogramBucket.objects.filter(operating_point__curve=newest["dirth"]).select_related(
            "operating_point"
        )
        for bucket in buckets.order_by("operating_point__name", "lower_ns"):
            by_point.setdefault(bucket.operating_point_id, (bucket.operating_point, []))[1].append(bucket)
        order = list(POINT_LABELS)
        section.histograms = sorted(by_point.values(), key=lambda pair: order.index(pair[0].name))
    section.charts = [demand_intensity_chart(test, curve, pts) for test, (curve, pts) in section.curves.items()]
    if section.histograms:
        section.charts.append(histogram_chart(section.histograms))
    return section


def demand_intensity_chart(test: str, curve, points: list) -> Chart:
    measured = [p for p in points if p.total_iops is not None]
    labels = [f"TC {p.threads} × QD {p.iodepth}" for p in measured]
    series = (("lat_mean_ns", "mean response time"), ("lat_p99999_ns", "99.999th percentile"))
    traces = []
    for i, (column, name) in enumerate(series):
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": [p.total_iops for p in measured],
                "y": [rounded(_us(getattr(p, column)), 1) for p in measured],
                "text": labels,
                "hovertemplate": "%{text}<br>%{x:,.0f} IOPS<br>%{y:,.1f} µs<extra>" + plot_text(name) + "</extra>",
                "marker": {"color": PALETTE[i]},
            }
        )
    plotted = [_us(getattr(p, c)) for p in measured for c, _ in series]
    missing = [f"TC {p.threads} × QD {p.iodepth}" for p in points if p.total_iops is None]
    note = f"From round {curve.round_number} ({curve.round_basis}); response time is total latency, log scale."
    if missing:
        note += f" Not measured: {', '.join(missing)}."
    return Chart(
        key=f"demand-intensity-{test}",
        title=f"Demand intensity: {TESTS[test]}",
        figure={
            "data": traces,
            "layout": figure_layout(
                "IOPS against response time, one point per TC × QD",
                "IOPS",
                "Response time (log scale)",
                yaxis=units.log_axis(plotted, "ns", 1e3),
            ),
        },
        columns=["TC × QD", "Outstanding I/Os", "IOPS", "Mean (µs)", "99.999% (µs)"],
        rows=[
            [
                f"TC {p.threads} × QD {p.iodepth}",
                p.outstanding_ios,
                rounded(p.total_iops, 0),
                rounded(_us(p.lat_mean_ns), 1),
                rounded(_us(p.lat_p99999_ns), 1),
            ]
            for p in points
        ],  # fmt: skip
        note=note,
    )


def histogram_chart(histograms: list) -> Chart:
    edges = sorted({(b.lower_ns, b.upper_ns) for _, buckets in histograms for b in buckets}, key=lambda e: e[0])
    labels = [_bucket_label(lower, upper) for lower, upper in edges]
    traces, rows = [], []
    for i, (point, buckets) in enumerate(histograms):
        counts = {(b.lower_ns, b.upper_ns): b.io_count for b in buckets}
        total = point.total_ios or sum(counts.values()) or 1
        name = f"{POINT_LABELS[point.name]} (TC {point.threads} × QD {point.iodepth})"
        shares = [rounded(100 * counts[e] / total, 3) if e in counts else None for e in edges]
        traces.append(
            {"type": "bar", "name": plot_text(name), "x": labels, "y": shares, "marker": {"color": PALETTE[i]}}
        )
        source = SOURCES.get(point.histogram_source, "—")
        rows += [[name, source, labels[j], counts.get(e), shares[j]] for j, e in enumerate(edges) if e in counts]
    return Chart(
        key="dirth-histograms",
        title="Response-time histograms at the DIRTH operating points",
        figure={
            "data": traces,
            "layout": figure_layout(
                "Share of I/Os per response-time bucket",
                "Response time bucket",
                "Share of I/Os, % (log scale)",
                barmode="group",
                yaxis={"type": "log", "rangemode": "normal"},
            ),
        },
        columns=["Operating point", "Histogram from", "Response time", "I/Os", "Share (%)"],
        rows=rows,
        note="MaxIOPS: the highest IOPS; MinIOPS: TC 1 × QD 1; MidIOPS: the cell nearest the middle of the two. "
        "Total latency from fio's json+ bins; buckets holding no I/O are left out. Each histogram is read from the "
        "point's own capture run after the sweep, or, in bundles of clients without captures, from its cell of the "
        "sweep round (the shorter sample), as the table says.",
    )


def _us(value: float | None) -> float | None:
    return None if value is None else value / 1e3


def _bucket_label(lower: int, upper: int | None) -> str:
    if upper is None:
        return f"≥ {_duration(lower)}"
    return f"{_duration(lower)}–{_duration(upper)}"


def _duration(ns: int) -> str:
    for divisor, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= divisor:
            return f"{ns / divisor:g} {unit}"
    return f"{ns} ns"


def compare_chart(drives, test: str = "dirth") -> Chart | None:
    """The compare page's ECW or DIRTH chart: each drive's newest public curve of `test` (mean response time against
    IOPS), in two bounded queries; None when no compared drive has one."""
    runs = public_test_runs().filter(drive_model__in=list(drives), test=test)
    newest: dict[int, DemandIntensityCurve] = {}
    curves = DemandIntensityCurve.objects.filter(test_run__in=runs).select_related("test_run").order_by("-id")
    for curve in curves[: MAX_CURVES * len(drives)]:
        newest.setdefault(curve.test_run.drive_model_id, curve)
    if not newest:
        return None
    points: dict[int, list] = {curve.id: [] for curve in newest.values()}
    for point in DemandIntensityPoint.objects.filter(curve__in=list(newest.values())).order_by("outstanding_ios"):
        if point.total_iops is not None:
            points[point.curve_id].append(point)
    traces, rows, plotted = [], [], []
    for i, drive in enumerate(drives):
        if drive.pk not in newest:
            rows.append([drive.name, "no run", None, None])
            continue
        measured = points[newest[drive.pk].id]
        labels = [f"TC {p.threads} × QD {p.iodepth}" for p in measured]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": plot_text(drive.name),
                "x": [p.total_iops for p in measured],
                "y": [rounded(_us(p.lat_mean_ns), 1) for p in measured],
                "text": labels,
                "hovertemplate": "%{text}<br>%{x:,.0f} IOPS<br>%{y:,.1f} µs",
                "marker": {"color": PALETTE[i % len(PALETTE)]},
            }
        )
        plotted += [_us(p.lat_mean_ns) for p in measured]
        rows += [[drive.name, label, rounded(p.total_iops, 0), rounded(_us(p.lat_mean_ns), 1)]
                 for label, p in zip(labels, measured, strict=True)]  # fmt: skip
    return Chart(
        key=f"compare-{test}",
        title=f"Demand intensity: {TESTS[test]}",
        figure={
            "data": traces,
            "layout": figure_layout(
                "Mean response time against IOPS, one point per TC × QD",
                "IOPS",
                "Mean response time (log scale)",
                yaxis=units.log_axis(plotted, "ns", 1e3),
            ),
        },
        columns=["Drive", "TC × QD", "IOPS", "Mean (µs)"],
        rows=rows,
        note=f"Each drive's newest public {test.upper()} run; the curve from its steady (or last) round."
        + (f" No run: {', '.join(missing)}." if (missing := [d.name for d in drives if d.pk not in newest]) else ""),
    )


def page_section(drive, submission_id=None, *, csv_link=None) -> Section | None:
    """The drive page's ECW and DIRTH section (its charts link no CSV: the demand_intensity and
    response_time_histograms tables hold the numbers)."""
    return load(drive, submission_id)


def compare_charts(drives: list, data) -> list[Chart]:
    """The compare page's ECW and DIRTH charts, each only when a compared drive has the test."""
    found = [compare_chart(drives, test) for test in TESTS if data.has(test)]
    return [chart for chart in found if chart is not None]
