"""The drive page's XSR section: per-interval throughput across the access groups, the transitions marked, and the
time each group took to settle. Self-contained: its own loader (three bounded queries) and figure."""

from __future__ import annotations

from django.db.models import Count, F, Window
from django.db.models.functions import Mod, RowNumber

from analysis.models import RecoveryPoint, XsrGroup
from reports.chart_kit import PALETTE, Chart, figure_layout, plot_text
from reports.recovery_series import latest_run, points_of

MAX_XSR_POINTS = 400  # per drive's trace on the compare page: a full XSR run logs 15,840 intervals
GROUP_NAMES = {1: "SEQ 1024 KiB (before)", 2: "RND 8 KiB", 3: "SEQ 1024 KiB (after)"}


def xsr_section(drive_id: int, submission_id=None) -> dict | None:
    run = latest_run(drive_id, "xsr", submission_id)
    if run is None:
        return None
    groups = list(XsrGroup.objects.filter(test_run=run).order_by("index"))
    if not groups:
        return None
    return {"run": run, "groups": groups, "charts": [throughput_over_time(groups, points_of(run))]}


def throughput_over_time(groups: list[XsrGroup], points: list[RecoveryPoint]) -> Chart:
    traces, shapes, annotations = [], [], []
    for number, group in enumerate(groups):
        chosen = [p for p in points if p.stage == group.index and p.kind == "tp"]
        if not chosen:
            continue
        color = PALETTE[number % len(PALETTE)]
        traces.append({"type": "scatter", "mode": "lines", "name": GROUP_NAMES.get(group.index, str(group.index)),
                       "x": [round(p.t_s, 3) for p in chosen], "y": [round(p.value / 1e6, 2) for p in chosen],
                       "line": {"color": color}})  # fmt: skip
        start = chosen[0].t_s
        if number:
            shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": start, "x1": start, "y0": 0, "y1": 1,
                           "line": {"color": "#57606a", "dash": "dot"}})  # fmt: skip
        text = f"settled after {group.recover_s:g} s" if group.recover_s is not None else "never settled"
        annotations.append({"x": start, "y": 1, "yref": "paper", "xanchor": "left", "showarrow": False,
                            "text": text, "font": {"size": 11, "color": color}})  # fmt: skip
        if group.recover_s is not None and group.recover_s > 0:
            shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": start, "x1": start + group.recover_s,
                           "y0": 0, "y1": 1, "fillcolor": color, "opacity": 0.1, "line": {"width": 0}})  # fmt: skip
    return Chart(
        key="xsr-throughput",
        title="Cross stimulus recovery: throughput over time",
        figure={
            "data": traces,
            "layout": figure_layout(
                "Write throughput per interval",
                "Time (s)",
                "MB/s (10⁶ bytes/s)",
                shapes=shapes,
                annotations=annotations,
            ),
        },  # fmt: skip
        columns=["Group", "Time (s)", "MB/s"],
        rows=[[p.stage, round(p.t_s, 3), round(p.value / 1e6, 2)] for p in points if p.kind == "tp"],
        summary_columns=["Group", "Pattern", "Block (bytes)", "Mean MB/s", "Settled MB/s", "Time to settle (s)"],
        summary_rows=[
            [
                GROUP_NAMES.get(g.index, str(g.index)),
                g.pattern,
                g.block_size_bytes,
                None if g.mean_bytes_per_s is None else round(g.mean_bytes_per_s / 1e6, 2),
                None if g.final_bytes_per_s is None else round(g.final_bytes_per_s / 1e6, 2),
                g.recover_s,
            ]
            for g in groups
        ],  # fmt: skip
        note="Dotted: the switch to the next access group. Shaded: the time until five intervals in a row stay "
        "within 20 % of the group's settled level (the mean of its last fifth).",
    )


def compare_chart(data) -> Chart | None:
    """The compare page's XSR chart: each drive's throughput over its newest public XSR run's timeline (at most
    MAX_XSR_POINTS intervals a drive) and, per access group, its settled level and time to settle; None
    when no compared drive has an XSR run. `data`: browse.compare_pts.ComparePts."""
    runs = {d.pk: data.run(d, "xsr") for d in data.drives}
    if not any(runs.values()):
        return None
    traces, shapes, rows, summary, thinned = [], [], [], [], []
    for drive in data.drives:
        run = runs[drive.pk]
        if run is None:
            summary.append([drive.name, None, None, None, None, "no run"])
            continue
        colour = data.colour(drive)
        points = data.rows_of("xsr_points").get(run["id"], [])
        x, y = [], []
        for number, point in enumerate(points):
            if number and point["stage"] != points[number - 1]["stage"]:
                x.append(None)  # never join two access groups
                y.append(None)
                shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": point["t_s"], "x1": point["t_s"],
                               "y0": 0, "y1": 1, "line": {"color": colour, "dash": "dot", "width": 1}})  # fmt: skip
            x.append(round(point["t_s"], 3))
            y.append(round(point["value"] / 1e6, 2))
            rows.append([drive.name, point["stage"], round(point["t_s"], 3), round(point["value"] / 1e6, 2)])
        if x:
            traces.append({"type": "scatter", "mode": "lines", "name": plot_text(drive.name), "x": x, "y": y,
                           "line": {"color": colour}})  # fmt: skip
        logged = data.rows_of("xsr_logged").get(run["id"], 0)
        if logged > len(points):
            thinned.append(f"{drive.name} ({len(points)} of {logged})")
        groups = data.rows_of("xsr_groups").get(run["id"], [])
        for g in groups:
            summary.append([drive.name, GROUP_NAMES.get(g.index, str(g.index)),
                            None if g.mean_bytes_per_s is None else round(g.mean_bytes_per_s / 1e6, 2),
                            None if g.final_bytes_per_s is None else round(g.final_bytes_per_s / 1e6, 2),
                            g.recover_s, "settled" if g.recover_s is not None else "never settled"])  # fmt: skip
        if not groups:
            summary.append([drive.name, None, None, None, None, "no access group stored"])
    note = ("Each drive's newest public XSR run: SEQ 1024 KiB, then RND 8 KiB, then SEQ 1024 KiB writes; dotted, "
            "the switch to the next group. Settled: the mean of a group's last fifth; time to settle: until five "
            "intervals in a row stay within 20 % of it.")  # fmt: skip
    if thinned:
        note += f" Every k-th logged interval shown (measured values, none averaged): {', '.join(thinned)}."
    note += data.note("xsr")
    return Chart(
        key="compare-xsr",
        title="Cross stimulus recovery: throughput over time and time to settle",
        figure={
            "data": traces,
            "layout": figure_layout(
                "Write throughput per interval", "Time from the test's start (s)", "MB/s (10⁶ bytes/s)", shapes=shapes
            ),
        },  # fmt: skip
        columns=["Drive", "Group", "Time (s)", "MB/s"],
        rows=rows,
        summary_columns=["Drive", "Group", "Mean MB/s", "Settled MB/s", "Time to settle (s)", "Verdict"],
        summary_rows=summary,
        note=note,
    )


def page_section(drive, submission_id=None, *, csv_link=None) -> dict | None:
    """The drive page's XSR section (its chart links no CSV: the xsr and recovery_series tables hold the numbers)."""
    return xsr_section(drive.pk, submission_id)


def compare_charts(drives: list, data) -> list[Chart]:
    return [chart] if (chart := compare_chart(data)) is not None else []


def compare_rows(run_ids: list[int]) -> dict:
    """The compare page's XSR rows, in two queries: each run's access groups, its picked intervals and how many it
    logged (read as data.rows_of("xsr_groups"), "xsr_points", "xsr_logged")."""
    groups: dict[int, list[XsrGroup]] = {}
    for group in XsrGroup.objects.filter(test_run_id__in=run_ids).order_by("test_run_id", "index"):
        groups.setdefault(group.test_run_id, []).append(group)
    points: dict[int, list[dict]] = {}
    logged: dict[int, int] = {}
    for point in compare_points(run_ids):
        logged[point["test_run_id"]] = point["logged"]
        points.setdefault(point["test_run_id"], []).append(point)
    return {"xsr_groups": groups, "xsr_points": points, "xsr_logged": logged}


def compare_points(run_ids: list[int]) -> list[dict]:
    """Every k-th logged interval of each run (k = ceil(intervals / MAX_XSR_POINTS)), the first always: measured
    values only, never averaged, so a dip that is picked is the drive's."""
    ranked = (
        RecoveryPoint.objects.filter(test_run_id__in=run_ids, kind="tp")
        .annotate(
            n=Window(RowNumber(), partition_by=[F("test_run_id")], order_by=[F("t_s"), F("id")]),
            logged=Window(Count("id"), partition_by=[F("test_run_id")]),
        )
        .values("test_run_id", "stage", "t_s", "value", "n", "logged")
    )
    # Django filters on window annotations by wrapping the query in a subquery; the stride needs both windows
    stride = (F("logged") + MAX_XSR_POINTS - 1) / MAX_XSR_POINTS
    return list(ranked.alias(offset=Mod(F("n") - 1, stride)).filter(offset=0).order_by("test_run_id", "n"))
