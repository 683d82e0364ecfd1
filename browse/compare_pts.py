"""The compare page's sections for the tests beyond IOPS, throughput and latency: HIR, XSR, ECW, DIRTH, the WSAT
optional workloads and, kept apart, the surface (an nvmedb extension, not a PTS test).

For each compared drive, its newest public run of each test (the latest `finished_at`, then the latest stored). The
rows come in a fixed number of bounded queries whatever the number of drives (forms.MAX_COMPARED at most): the runs
(one DISTINCT ON query), HIR wait states, XSR groups, XSR intervals (at most MAX_XSR_POINTS a run, picked in SQL), the
WSAT workloads' last samples (WINDOW_ROUNDS a run, picked in SQL) and the surface patterns with their peak cell's
speedup; ECW and DIRTH read their curves in charts_dirth (two queries each, only when a compared drive has the test:
a page comparing drives without any of these tests costs the one query for the runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, F, OuterRef, Subquery, Window
from django.db.models.functions import DenseRank, Mod, RowNumber

from analysis.models import HirWaitState, Measurement, RecoveryPoint, SurfaceCell, SurfacePattern, TestRun, XsrGroup
from analysis.selectors import newest_run_per, public_runs_q
from browse import charts_dirth, charts_hir, charts_surface, charts_xsr
from browse.chart_kit import PALETTE, Chart, figure_layout, plot_text, rounded
from browse.forms import MAX_COMPARED
from nvmedb_client.steady_state import WINDOW_ROUNDS

WSAT_WORKLOADS = {"ws-oltp": "OLTP (RND 8 KiB, 65/35)", "ws-vod": "Video on demand (SEQ 128 KiB, 90/10)",
                  "ws-meta": "Metadata (SEQ 0.5 KiB, 50/50)", "ws-comp": "Composite block size (RND mix, 40/60)"}  # fmt: skip
TESTS = ("hir", "xsr", "ecw", "dirth", *WSAT_WORKLOADS, "surface")
MAX_XSR_POINTS = 400  # per drive's trace: a full XSR run logs 15,840 intervals
NO_RUN = "no run"


@dataclass
class ComparePts:
    drives: list
    runs: dict[tuple[int, str], dict] = field(default_factory=dict)  # (drive id, test) -> its newest public run
    hir: dict[int, list[HirWaitState]] = field(default_factory=dict)  # run id -> wait states
    xsr_groups: dict[int, list[XsrGroup]] = field(default_factory=dict)  # run id -> access groups
    xsr_points: dict[int, list[dict]] = field(default_factory=dict)  # run id -> picked intervals (stage, t_s, value)
    xsr_logged: dict[int, int] = field(default_factory=dict)  # run id -> intervals stored
    wsat: dict[int, list[dict]] = field(default_factory=dict)  # run id -> its last samples
    surface: dict[int, list[dict]] = field(default_factory=dict)  # run id -> patterns (peak, knee, peak speedup)

    def run(self, drive, test: str) -> dict | None:
        return self.runs.get((drive.pk, test))

    def colour(self, drive) -> str:
        """A drive's colour: its place among the compared drives, as on the IOPS/TP/LAT charts."""
        return PALETTE[[d.pk for d in self.drives].index(drive.pk) % len(PALETTE)]

    def has(self, test: str) -> bool:
        return any(t == test for _, t in self.runs)

    def note(self, *tests: str) -> str:
        """The end of a chart's note: the drives without a public run of `tests`."""
        missing = [d.name for d in self.drives if not any(self.run(d, t) for t in tests)]
        return f" No run: {', '.join(missing)}." if missing else ""


def load(drives: list) -> ComparePts:
    if len(drives) > MAX_COMPARED:
        raise ValueError(f"The compare page compares at most {MAX_COMPARED} drives (got {len(drives)}).")
    data = ComparePts(drives=list(drives))
    newest = newest_run_per(
        TestRun.objects.filter(public_runs_q(), drive_model_id__in=[d.pk for d in drives], test__in=TESTS),
        "drive_model_id",
        "test",
    ).values("id", "drive_model_id", "test", "submission_id", "profile", "finished_at")
    for run in newest:
        data.runs[(run["drive_model_id"], run["test"])] = run
    ids = {test: [r["id"] for (_, t), r in data.runs.items() if t == test] for test in TESTS}
    if ids["hir"]:
        for state in HirWaitState.objects.filter(test_run_id__in=ids["hir"]).order_by("test_run_id", "index"):
            data.hir.setdefault(state.test_run_id, []).append(state)
    if ids["xsr"]:
        for group in XsrGroup.objects.filter(test_run_id__in=ids["xsr"]).order_by("test_run_id", "index"):
            data.xsr_groups.setdefault(group.test_run_id, []).append(group)
        for point in _xsr_points(ids["xsr"]):
            data.xsr_logged[point["test_run_id"]] = point["logged"]
            data.xsr_points.setdefault(point["test_run_id"], []).append(point)
    wsat_ids = [run_id for test in WSAT_WORKLOADS for run_id in ids[test]]
    if wsat_ids:
        for sample in _last_wsat_samples(wsat_ids):
            data.wsat.setdefault(sample["test_run_id"], []).append(sample)
    if ids["surface"]:
        for pattern in _surface_patterns(ids["surface"]):
            data.surface.setdefault(pattern["test_run_id"], []).append(pattern)
    return data


def _xsr_points(run_ids: list[int]) -> list[dict]:
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


def _last_wsat_samples(run_ids: list[int]) -> list[dict]:
    """The samples of each run's last WINDOW_ROUNDS rounds, as the core WSAT's level (analysis.headline)."""
    return list(
        Measurement.objects.filter(test_run_id__in=run_ids, round__phase="wsat")
        .annotate(
            back=Window(DenseRank(), partition_by=[F("test_run_id")], order_by=F("round__number").desc()),
        )
        .filter(back__lte=WINDOW_ROUNDS)
        .values("test_run_id", "round__number", "total_iops", "total_bw_bytes_per_s")
    )


def _surface_patterns(run_ids: list[int]) -> list[dict]:
    peak_cell = SurfaceCell.objects.filter(
        test_run_id=OuterRef("test_run_id"), pattern=OuterRef("pattern"),
        block_size_bytes=OuterRef("peak_block_size_bytes"), iodepth=OuterRef("peak_iodepth"),
    )  # fmt: skip
    return list(
        SurfacePattern.objects.filter(test_run_id__in=run_ids)
        .annotate(peak_speedup=Subquery(peak_cell.values("speedup")[:1]))
        .order_by("test_run_id", "pattern")
        .values(
            "test_run_id", "pattern", "peak_bw_bytes_per_s", "peak_block_size_bytes", "peak_iodepth",
            "knee_block_size_bytes", "knee_iodepth", "knee_bw_bytes_per_s", "knee_reason", "peak_speedup",
        )
    )  # fmt: skip


def wsat_levels(data: ComparePts) -> dict[tuple[int, str], dict]:
    """(drive id, workload) -> the mean IOPS and bandwidth of the run's last samples and how many there are."""
    levels = {}
    for (drive_id, test), run in data.runs.items():
        if test not in WSAT_WORKLOADS:
            continue
        samples = data.wsat.get(run["id"], [])
        iops = [s["total_iops"] for s in samples if s["total_iops"] is not None]
        bw = [s["total_bw_bytes_per_s"] for s in samples if s["total_bw_bytes_per_s"] is not None]
        levels[(drive_id, test)] = {
            "iops": sum(iops) / len(iops) if iops else None,
            "bw": sum(bw) / len(bw) if bw else None,
            "samples": len({s["round__number"] for s in samples}),
        }
    return levels


def wsat_chart(data: ComparePts) -> Chart | None:
    if not any(data.run(d, t) for d in data.drives for t in WSAT_WORKLOADS):
        return None
    levels = wsat_levels(data)
    workloads = [t for t in WSAT_WORKLOADS if any(data.run(d, t) for d in data.drives)]
    traces, rows = [], []
    for drive in data.drives:
        shown = [levels.get((drive.pk, t), {}) for t in workloads]
        traces.append({"type": "bar", "name": plot_text(drive.name), "x": [plot_text(WSAT_WORKLOADS[t]) for t in workloads],
                       "y": [rounded(level.get("iops"), 0) for level in shown],
                       "hovertemplate": "%{x}: %{y:,.0f} IOPS<extra>%{fullData.name}</extra>",
                       "marker": {"color": data.colour(drive)}})  # fmt: skip
        for test, level in zip(workloads, shown, strict=True):
            bw = level.get("bw")
            rows.append([drive.name, WSAT_WORKLOADS[test], rounded(level.get("iops"), 0),
                         None if bw is None else rounded(bw / 1e6, 2),
                         level.get("samples") if level else NO_RUN])  # fmt: skip
    return Chart(
        key="compare-wsat-workloads",
        title="WSAT optional workloads: level after the last samples",
        figure={
            "data": traces,
            "layout": figure_layout("IOPS, mean of the last samples", "Workload", "IOPS", barmode="group"),
        },
        columns=["Drive", "Workload", "IOPS", "MB/s (10⁶ bytes/s)", "Samples averaged"],
        rows=rows,
        note=f"Each drive's newest public run of each workload; the mean of its last {WINDOW_ROUNDS} samples (as the "
        "WSAT level: these series are never judged for steady state)." + data.note(*WSAT_WORKLOADS),
    )


def pts_charts(drives: list, data: ComparePts | None = None) -> list[Chart]:
    """The PTS charts of the compare page beyond IOPS/TP/LAT, each only when a compared drive has the test."""
    data = data if data is not None else load(drives)
    found = [
        charts_hir.compare_chart(data),
        charts_xsr.compare_chart(data),
        *[charts_dirth.compare_chart(drives, test) for test in ("ecw", "dirth") if data.has(test)],
        wsat_chart(data),
    ]
    return [chart for chart in found if chart is not None]


def surface_charts(drives: list, data: ComparePts | None = None) -> list[Chart]:
    """The surface's chart (nvmedb extension): shown apart from the PTS charts, under its own label."""
    data = data if data is not None else load(drives)
    chart = charts_surface.compare_chart(data)
    return [chart] if chart is not None else []


def sections(drives: list) -> dict:
    data = load(drives)
    return {"pts": pts_charts(drives, data), "surface": surface_charts(drives, data), "label": charts_surface.LABEL}


def chart(drives: list, key: str) -> Chart | None:
    """One of this module's compare charts by key (for its CSV), or None."""
    found = sections(drives)
    return next((c for c in [*found["pts"], *found["surface"]] if c.key == key), None)
