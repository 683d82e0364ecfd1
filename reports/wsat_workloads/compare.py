"""The compare page's chart of the WSAT optional workloads: each compared drive's level (the mean of the last samples
of its newest public run of each workload). `data` is the compare page's loaded rows (browse.compare_pts.ComparePts:
`runs`, the samples compare_rows read, `run`, `colour`, `note`)."""

from __future__ import annotations

from django.db.models import F, Window
from django.db.models.functions import DenseRank

from analysis.models import Measurement
from nvmedb_client.steady_state import WINDOW_ROUNDS
from reports.chart_kit import Chart, figure_layout, plot_text, rounded

WORKLOAD_LABELS = {"ws-oltp": "OLTP (RND 8 KiB, 65/35)", "ws-vod": "Video on demand (SEQ 128 KiB, 90/10)",
                   "ws-meta": "Metadata (SEQ 0.5 KiB, 50/50)", "ws-comp": "Composite block size (RND mix, 40/60)"}  # fmt: skip
NO_RUN = "no run"


def wsat_levels(data) -> dict[tuple[int, str], dict]:
    """(drive id, workload) -> the mean IOPS and bandwidth of the run's last samples and how many there are."""
    levels = {}
    for (drive_id, test), run in data.runs.items():
        if test not in WORKLOAD_LABELS:
            continue
        samples = data.rows_of("wsat").get(run["id"], [])
        iops = [s["total_iops"] for s in samples if s["total_iops"] is not None]
        bw = [s["total_bw_bytes_per_s"] for s in samples if s["total_bw_bytes_per_s"] is not None]
        levels[(drive_id, test)] = {
            "iops": sum(iops) / len(iops) if iops else None,
            "bw": sum(bw) / len(bw) if bw else None,
            "samples": len({s["round__number"] for s in samples}),
        }
    return levels


def compare_chart(data) -> Chart | None:
    if not any(data.run(d, t) for d in data.drives for t in WORKLOAD_LABELS):
        return None
    levels = wsat_levels(data)
    workloads = [t for t in WORKLOAD_LABELS if any(data.run(d, t) for d in data.drives)]
    traces, rows = [], []
    for drive in data.drives:
        shown = [levels.get((drive.pk, t), {}) for t in workloads]
        traces.append({"type": "bar", "name": plot_text(drive.name), "x": [plot_text(WORKLOAD_LABELS[t]) for t in workloads],
                       "y": [rounded(level.get("iops"), 0) for level in shown],
                       "hovertemplate": "%{x}: %{y:,.0f} IOPS<extra>%{fullData.name}</extra>",
                       "marker": {"color": data.colour(drive)}})  # fmt: skip
        for test, level in zip(workloads, shown, strict=True):
            bw = level.get("bw")
            rows.append([drive.name, WORKLOAD_LABELS[test], rounded(level.get("iops"), 0),
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
        "WSAT level: these series are never judged for steady state)." + data.note(*WORKLOAD_LABELS),
    )


def compare_charts(drives: list, data) -> list[Chart]:
    return [chart] if (chart := compare_chart(data)) is not None else []


def compare_rows(run_ids: list[int]) -> dict:
    """The compare page's WSAT-workload rows, in one query: run id -> its last samples (data.rows_of("wsat"))."""
    samples: dict[int, list[dict]] = {}
    for sample in last_samples(run_ids):
        samples.setdefault(sample["test_run_id"], []).append(sample)
    return {"wsat": samples}


def last_samples(run_ids: list[int]) -> list[dict]:
    """The samples of each run's last WINDOW_ROUNDS rounds, as the core WSAT's level (analysis.headline)."""
    return list(
        Measurement.objects.filter(test_run_id__in=run_ids, round__phase="wsat")
        .annotate(
            back=Window(DenseRank(), partition_by=[F("test_run_id")], order_by=F("round__number").desc()),
        )
        .filter(back__lte=WINDOW_ROUNDS)
        .values("test_run_id", "round__number", "total_iops", "total_bw_bytes_per_s")
    )
