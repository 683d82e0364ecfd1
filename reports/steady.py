"""Steady-state charts of the IOPS, TP and LAT tests: the convergence of the tracking variables round by round, each
measurement window with its verdict, and the tracking variables' human labels."""

from __future__ import annotations

import re
from types import SimpleNamespace

from analysis.headline import BY_KEY
from reports import units
from reports.chart_kit import PALETTE, Chart, ChartedRuns, figure_layout, metric_unit, plot_text, rounded, scaled

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


def steady_charts(data: ChartedRuns, run: dict) -> list[Chart]:
    every_window = [w for w in data.windows if w.test_run_id == run["id"]]
    if not every_window:
        return []
    windows = convergence_windows(every_window)
    rows = data.measurements.get(run["id"], [])
    unit = metric_unit(windows[0].metric)
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
                "y": [rounded(scaled(series[n], divisor), 2) for n in ordered],
                "line": {"color": PALETTE[i % len(PALETTE)]},
            }
        )
    rounds = sorted({n for series in by_round.values() for n in series})
    for n in rounds:
        table.append([n, *[rounded(scaled(by_round[w.variable].get(n), divisor), 2) for w in windows]])
    test = run["test"]
    convergence = Chart(
        key=f"steady-{test}",
        title=f"Steady-state convergence, {test.upper()} test: tracking variables by round",
        figure={
            "data": traces,
            "layout": figure_layout("Tracking variables by round", "Round", axis, xaxis={"dtick": 1}),
        },
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
    unit = metric_unit(window.metric)
    divisor, axis = units.axis_for(unit, window.values)
    rounds = list(window.rounds)
    values = [scaled(v, divisor) for v in window.values]
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
        [n, rounded(v, 2), rounded(average, 2), rounded(f, 2) if fitted else None]
        for n, v, f in zip(rounds, values, fitted or [None] * len(rounds), strict=True)
    ]

    def shown(value):
        return units.by_unit(unit, value)

    verdict = [
        ("Verdict", "steady" if window.steady else "not steady"),
        ("Steady at round", str(window.steady_round) if window.steady_round is not None else "—"),
        ("Window", f"rounds {window.first_round}–{window.last_round}"),
        ("Average", shown(window.average)),
        ("Data excursion (max − min)", shown(window.data_excursion)),
        ("Allowed (20% of average)", shown(window.data_excursion_limit)),
        ("Slope excursion (|slope| × 4)", shown(window.slope_excursion)),
        ("Allowed (10% of average)", shown(window.slope_excursion_limit)),
    ]
    if window.claim_differs:
        verdict.append(("Client's claim", "differs: " + (humanize_variables(window.note) or "see the submission page")))
    return Chart(
        key=f"window-{window.pk}",
        title=f"Measurement window: {variable_label(window)}",
        figure={
            "data": traces,
            "layout": figure_layout(f"Measurement window: {variable_label(window)}", "Round", axis, xaxis={"dtick": 1}),
        },
        columns=["Round", f"Measured ({axis})", f"Average ({axis})", f"Fitted ({axis})"],
        rows=table,
        note="The shaded band is the average ±10% (the 20% data-excursion band); the dashed line is the fit.",
        verdict=verdict,
    )
