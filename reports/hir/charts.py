"""The drive page's HIR section: IOPS over time with the wait states shaded, and the recovery per idle length.

Self-contained: its own loader (three bounded queries: the run, its wait states, its points), its own figures."""

from __future__ import annotations

from analysis.models import HirWaitState, RecoveryPoint
from reports.chart_kit import PALETTE, Chart, figure_layout, plot_text
from reports.recovery_series import latest_run, points_of

RECOVERY_THRESHOLD = 1.2  # nvmedb_client.pts.hir.RECOVERY_MARGIN + 1


def hir_section(drive_id: int, submission_id=None) -> dict | None:
    run = latest_run(drive_id, "hir", submission_id)
    if run is None:
        return None
    states = list(HirWaitState.objects.filter(test_run=run).order_by("index"))
    if not states:
        return None
    points = points_of(run)
    return {"run": run, "states": states, "charts": [iops_over_time(states, points), recovery_by_idle(states)]}


def iops_over_time(states: list[HirWaitState], points: list[RecoveryPoint]) -> Chart:
    traces, shapes = [], []
    styles = {
        "burst": ("Bursts after host idle", "markers", PALETTE[0]),
        "first": ("First burst (after writes)", "markers", PALETTE[7]),
        "baseline": ("Return to baseline", "lines", PALETTE[1]),
    }
    for kind, (name, mode, color) in styles.items():
        chosen = [p for p in points if p.kind == kind]
        if not chosen:
            continue
        x, y = [], []
        for number, point in enumerate(chosen):
            if number and point.stage != chosen[number - 1].stage:
                x.append(None)  # a line never joins two wait states' returns to baseline
                y.append(None)
            x.append(round(point.t_s, 3))
            y.append(round(point.value))
        traces.append({"type": "scatter", "mode": mode, "name": name, "x": x, "y": y,
                       "marker": {"color": color, "size": 6}, "line": {"color": color}})  # fmt: skip
    for state in states:
        span = [p.t_s for p in points if p.stage == state.index and p.kind in ("burst", "first")]
        if span:
            shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": min(span), "x1": max(span),
                           "y0": 0, "y1": 1, "fillcolor": "#8250df", "opacity": 0.12, "line": {"width": 0},
                           "label": {"text": f"{state.idle_s:g} s idle", "textposition": "top center",
                                     "font": {"size": 11}}})  # fmt: skip
    baseline = states[0].baseline_iops
    if baseline:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": baseline, "y1": baseline,
                       "line": {"color": PALETTE[2], "dash": "dash", "width": 1.5}})  # fmt: skip
    return Chart(
        key="hir-iops",
        title="Host idle recovery: IOPS over time",
        figure={
            "data": traces,
            "layout": figure_layout(
                "RND 4 KiB write IOPS, bursts between host idle periods", "Time (s)", "IOPS", shapes=shapes
            ),
        },  # fmt: skip
        columns=["Wait state", "Kind", "Time (s)", "IOPS"],
        rows=[[p.stage, p.kind, round(p.t_s, 3), round(p.value)] for p in points],
        summary_columns=["Wait state", "Idle (s)", "Points"],
        summary_rows=[[s.index, s.idle_s, sum(1 for p in points if p.stage == s.index)] for s in states],
        note="Shaded: the wait states (write bursts, each followed by the host idle time named). Dashed: the steady "
        "baseline IOPS before them.",
    )


def recovery_by_idle(states: list[HirWaitState]) -> Chart:
    labels = [plot_text(f"{s.idle_s:g} s") for s in states]
    ratios = [None if s.recovery_ratio is None else round(s.recovery_ratio, 3) for s in states]
    colors = [PALETTE[2] if s.recovered else PALETTE[7] for s in states]
    return Chart(
        key="hir-recovery",
        title="Host idle recovery: burst IOPS ÷ baseline, per idle length",
        figure={
            "data": [{"type": "bar", "name": "Recovery ratio", "x": labels, "y": ratios, "marker": {"color": colors}}],
            "layout": figure_layout(
                "Recovery per idle length",
                "Host idle between bursts",
                "Burst IOPS ÷ baseline IOPS",
                shapes=[
                    {
                        "type": "line",
                        "xref": "paper",
                        "x0": 0,
                        "x1": 1,
                        "y0": RECOVERY_THRESHOLD,
                        "y1": RECOVERY_THRESHOLD,
                        "line": {"dash": "dash", "color": PALETTE[1]},
                    }
                ],
            ),
        },  # fmt: skip
        columns=["Idle (s)", "Bursts", "Baseline IOPS", "Burst IOPS", "Ratio", "Recovered", "Return IOPS"],
        rows=[
            [
                s.idle_s,
                s.bursts_measured,
                s.baseline_iops,
                s.recovery_iops,
                s.recovery_ratio,
                "yes" if s.recovered else "no" if s.recovered is not None else None,
                s.return_iops,
            ]
            for s in states
        ],  # fmt: skip
        note="Green: more than 20 % above the baseline (a steady window may already vary by 20 %).",
    )


def compare_chart(data) -> Chart | None:
    """The compare page's HIR chart: each drive's recovery ratio by idle length (its newest public HIR run), the
    recovery threshold drawn; None when no compared drive has a HIR run. `data`: browse.compare_pts.ComparePts."""
    runs = {d.pk: data.run(d, "hir") for d in data.drives}
    if not any(runs.values()):
        return None
    states = {pk: {s.idle_s: s for s in data.rows_of("hir").get(run["id"], [])} for pk, run in runs.items() if run}
    idles = sorted({idle for by_idle in states.values() for idle in by_idle})
    labels = [f"{idle:g} s" for idle in idles]
    traces, rows = [], []
    for drive in data.drives:
        if runs[drive.pk] is None:
            rows.append([drive.name, None, None, None, None, "no run"])
            continue
        by_idle = states[drive.pk]
        ratios = [_ratio(by_idle.get(idle)) for idle in idles]
        traces.append({"type": "scatter", "mode": "lines+markers", "name": plot_text(drive.name), "x": labels,
                       "y": ratios, "connectgaps": False, "marker": {"color": data.colour(drive), "size": 8},
                       "line": {"color": data.colour(drive)},
                       "hovertemplate": "%{x} idle: %{y:.3f}× the baseline<extra>%{fullData.name}</extra>"})  # fmt: skip
        for idle in idles or [None]:
            state = by_idle.get(idle)
            if state is None:
                rows.append([drive.name, idle, None, None, None, "no wait state stored"])
                continue
            verdict = "yes" if state.recovered else "no" if state.recovered is not None else "not measured"
            rows.append([drive.name, idle, state.baseline_iops, state.recovery_iops, _ratio(state), verdict])
    threshold = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": RECOVERY_THRESHOLD, "y1": RECOVERY_THRESHOLD,
                 "line": {"dash": "dash", "color": PALETTE[7]},
                 "label": {"text": f"{RECOVERY_THRESHOLD:.2f} recovery threshold", "textposition": "end",
                           "font": {"size": 11}}}  # fmt: skip
    return Chart(
        key="compare-hir",
        title="Host idle recovery: burst IOPS ÷ baseline, per idle length",
        figure={
            "data": traces,
            "layout": figure_layout(
                "Recovery ratio by host idle length",
                "Host idle between bursts",
                "Burst IOPS ÷ baseline IOPS (ratio)",
                shapes=[threshold],
            ),
        },  # fmt: skip
        columns=["Drive", "Idle (s)", "Baseline IOPS", "Burst IOPS", "Ratio", "Recovered"],
        rows=rows,
        note=f"Each drive's newest public HIR run. Dashed: {RECOVERY_THRESHOLD:.2f}, above which a wait state counts "
        "as recovered; a gap is a wait state without a figure." + data.note("hir"),
    )


def _ratio(state: HirWaitState | None) -> float | None:
    return None if state is None or state.recovery_ratio is None else round(state.recovery_ratio, 3)


def page_section(drive, submission_id=None, *, csv_link=None) -> dict | None:
    """The drive page's HIR section (its charts link no CSV: the hir and recovery_series tables hold the numbers)."""
    return hir_section(drive.pk, submission_id)


def compare_charts(drives: list, data) -> list[Chart]:
    return [chart] if (chart := compare_chart(data)) is not None else []


def compare_rows(run_ids: list[int]) -> dict:
    """The compare page's HIR rows, in one query: run id -> its wait states (read as data.rows_of("hir"))."""
    states: dict[int, list[HirWaitState]] = {}
    for state in HirWaitState.objects.filter(test_run_id__in=run_ids).order_by("test_run_id", "index"):
        states.setdefault(state.test_run_id, []).append(state)
    return {"hir": states}
