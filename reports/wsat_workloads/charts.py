"""The drive page's section for the WSAT optional workloads (ws-oltp, ws-vod, ws-meta, ws-comp): per workload, IOPS
against the data written (like the core WSAT chart) and a table of its stimulus, level, amount written and what
stopped it.

Self-contained: `load` reads, in two bounded queries whatever the number of the drive's runs, the newest public run
of each workload (with its sample count, last sample number and written bytes) and then those runs' samples already
averaged by the database in equal groups of consecutive samples (at most MAX_POINTS a run), plus, one by one, the
few samples its level is read from. The level is the page's measurement-window rule (reports.windows.window_cells: the
steady-state window when the run has one, else the last WINDOW_ROUNDS samples), applied to those samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from django.db.models import (
    Case,
    Count,
    F,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
    When,
)

from analysis.models import Measurement, TestRun
from analysis.models.recovery import MAX_POINTS_PER_SEGMENT
from analysis.selectors import newest_run_per, public_test_runs
from nvmedb_client.plan import WSAT_CAPACITY_MULTIPLE, pts_profile, quick_profile
from nvmedb_client.pts.wsat_workloads import WORKLOADS
from nvmedb_client.steady_state import WINDOW_ROUNDS
from reports import units
from reports.chart_kit import PALETTE, Chart, figure_layout, plot_text, rounded
from reports.windows import window_cells, window_mean

TESTS = tuple(WORKLOADS)  # ws-oltp, ws-vod, ws-meta, ws-comp, in the methodology's order
MAX_POINTS = MAX_POINTS_PER_SEGMENT  # per workload trace, as recovery_series
PHASE = "wsat"
PATTERNS = {"randrw": "random", "rw": "sequential", "randwrite": "random", "write": "sequential"}
# The client's time limit under the pts profile, as a sample count (24 h of one-minute samples).
PTS_MAX_SAMPLES = int(pts_profile().wsat_max_s // pts_profile().wsat_sample_s)
RANGE_CAPS = {"pts": pts_profile().range_cap_bytes, "quick": quick_profile(cell_runtime_s=1).range_cap_bytes}
STOP_CAPACITY, STOP_TIME, STOP_SAMPLES = "4× capacity", "24 h", "sample limit"


@dataclass
class Point:
    first: int  # sample numbers averaged
    last: int
    samples: int
    written_bytes: float | None  # the mean of the samples' cumulative bytes written
    iops: float | None  # the mean of the samples' total IOPS (None: no sample of the group has one)


@dataclass
class WorkloadRun:
    test: str
    run: object  # TestRun
    samples: int
    written_bytes: int | None  # at the end of the last sample
    capacity_bytes: int | None  # the 4× rule's capacity: the target's size, capped like the client's profile
    group_size: int
    points: list[Point] = field(default_factory=list)
    stimuli: list[tuple[str, int, int]] = field(default_factory=list)  # (fio rw=, block size, read %)
    level_rows: list[dict] = field(default_factory=list)
    missing_iops: int = 0

    @property
    def level(self) -> float | None:
        rows = [r for cell in window_cells(self.level_rows).values() for r in cell]
        return window_mean(rows, "total_iops")

    @property
    def level_label(self) -> str:
        rows = [r for cell in window_cells(self.level_rows).values() for r in cell]
        if any(r["in_steady_window"] for r in rows):
            return "steady-state window mean"
        return f"mean of the last {len(rows)} sample{'s' if len(rows) != 1 else ''}"

    @property
    def stop(self) -> str:
        return stop_reason(
            written_bytes=self.written_bytes,
            capacity_bytes=self.capacity_bytes,
            samples=self.samples,
            profile=self.run.profile,
        )


@dataclass
class Section:
    workloads: list[WorkloadRun]
    charts: list[Chart]


def capacity_of(run) -> int | None:
    """The capacity the 4× rule counts: the target's size, capped as the client's profile caps it (quick: 1 GiB)."""
    if not run.target_size_bytes:
        return None
    cap = RANGE_CAPS.get(run.profile)  # imported runs: no client profile, no cap
    return run.target_size_bytes if cap is None else min(run.target_size_bytes, cap)


def stop_reason(*, written_bytes: int | None, capacity_bytes: int | None, samples: int, profile: str) -> str:
    """What stopped the run, read from its samples (never the client's word): 4× the capacity written, the 24 h of
    the pts profile (its sample count), else its sample limit (a quick run, or a run cut short)."""
    if capacity_bytes and written_bytes is not None and written_bytes >= WSAT_CAPACITY_MULTIPLE * capacity_bytes:
        return STOP_CAPACITY
    if profile == "pts" and samples >= PTS_MAX_SAMPLES:
        return STOP_TIME
    return STOP_SAMPLES


def load(drive, submission_id=None, *, csv_link=None, visible=None) -> Section | None:
    """The newest run of each workload of `drive` (of `submission_id` when one is chosen) among `visible` (by
    default the public runs; a contributor's pages may pass their trials too), or None."""
    visible = public_test_runs() if visible is None else visible
    runs = visible.filter(drive_model=drive, test__in=TESTS)
    if submission_id is not None:
        runs = runs.filter(submission_id=submission_id)
    newest = newest_run_per(runs, "test").values("pk")
    samples = Q(measurements__round__phase=PHASE)
    fifth_last = (
        Measurement.objects.filter(test_run=OuterRef("pk"), round__phase=PHASE)
        .order_by("-round__number")
        .values("round__number")[WINDOW_ROUNDS - 1 : WINDOW_ROUNDS]
    )
    chosen = list(
        TestRun.objects.filter(pk__in=Subquery(newest))
        .annotate(
            n_samples=Count("measurements", filter=samples),
            last_sample=Max("measurements__round__number", filter=samples),
            written=Max("measurements__cumulative_write_bytes", filter=samples),
            window_from=Subquery(fifth_last),
        )
        .filter(n_samples__gt=0)
        .order_by()
    )
    if not chosen:
        return None
    found = {}
    for run in chosen:
        found[run.pk] = WorkloadRun(
            test=run.test, run=run, samples=run.n_samples, written_bytes=run.written, capacity_bytes=capacity_of(run),
            group_size=max(1, math.ceil(run.last_sample / MAX_POINTS)),
        )  # fmt: skip
    rows: dict[int, list[dict]] = {pk: [] for pk in found}
    for row in grouped_samples(chosen, found):
        rows[row["test_run_id"]].append(row)
    for pk, workload in found.items():
        fold(workload, rows[pk])
    workloads = sorted(found.values(), key=lambda w: TESTS.index(w.test))
    charts = [workload_chart(w) for w in workloads]
    if csv_link is not None:
        for chart in charts:
            chart.csv_url = csv_link(chart.key)
    return Section(workloads=workloads, charts=charts)


def grouped_samples(chosen: list, found: dict[int, WorkloadRun]):
    """One query: each run's samples summed per group of `group_size` consecutive sample numbers, except that the
    samples the level may be read from (in a steady window, or among the last WINDOW_ROUNDS) come one per row."""
    group = Case(
        *[When(test_run_id=run.pk, then=(F("round__number") - 1) / Value(found[run.pk].group_size)) for run in chosen],
        output_field=IntegerField(),
    )
    near_end = Q()
    for run in chosen:
        near_end |= Q(test_run_id=run.pk, round__number__gte=run.window_from or 0)
    alone = Case(
        When(Q(in_steady_window=True) | near_end, then=F("round__number")),
        default=Value(0),
        output_field=IntegerField(),
    )
    return (
        Measurement.objects.filter(test_run_id__in=list(found), round__phase=PHASE)
        .annotate(group=group, alone=alone)
        .values("test_run_id", "group", "alone", "pattern", "block_size_bytes", "read_pct")
        .annotate(
            n=Count("id"),
            first=Min("round__number"),
            last=Max("round__number"),
            iops_sum=Sum("total_iops"),
            n_iops=Count("total_iops"),
            written_sum=Sum("cumulative_write_bytes"),
            n_written=Count("cumulative_write_bytes"),
            steady=Max(Case(When(in_steady_window=True, then=1), default=0, output_field=IntegerField())),
        )
        .order_by("test_run_id", "group", "first")
    )


@dataclass
class _Group:
    """Sums and counts of one group of consecutive samples, divided only once every row of the group is added."""

    first: int
    last: int
    samples: int = 0
    iops_sum: float = 0.0
    n_iops: int = 0
    written_sum: float = 0.0
    n_written: int = 0

    def add(self, row: dict) -> None:
        self.first, self.last = min(self.first, row["first"]), max(self.last, row["last"])
        self.samples += row["n"]
        self.iops_sum += row["iops_sum"] or 0.0
        self.n_iops += row["n_iops"]
        self.written_sum += float(row["written_sum"] or 0)
        self.n_written += row["n_written"]

    def point(self) -> Point:
        return Point(
            first=self.first, last=self.last, samples=self.samples,
            written_bytes=self.written_sum / self.n_written if self.n_written else None,
            iops=self.iops_sum / self.n_iops if self.n_iops else None,
        )  # fmt: skip


def fold(workload: WorkloadRun, rows: list[dict]) -> None:
    """Turn a run's rows of grouped_samples into its points, stimuli and level samples: a group that the level's
    samples split into several rows is one point again."""
    groups: dict[int, _Group] = {}
    for row in rows:
        stimulus = (row["pattern"], row["block_size_bytes"], row["read_pct"])
        if stimulus not in workload.stimuli:
            workload.stimuli.append(stimulus)
        workload.missing_iops += row["n"] - row["n_iops"]
        if row["alone"]:
            workload.level_rows.append(
                {"round__phase": PHASE, "block_size_bytes": row["block_size_bytes"], "read_pct": row["read_pct"],
                 "round__number": row["first"], "in_steady_window": bool(row["steady"]),
                 "total_iops": row["iops_sum"] if row["n_iops"] else None}
            )  # fmt: skip
        groups.setdefault(row["group"], _Group(first=row["first"], last=row["last"])).add(row)
    workload.points = [group.point() for _, group in sorted(groups.items())]


def block_size_label(size: int) -> str:
    return "block-size mix" if size == 0 else units.block_size(size)


def bytes_label(value: float) -> str:
    return f"{units.size(value)} ({units.size_binary(value)})"


def stimulus_label(stimuli: list[tuple[str, int, int]]) -> str:
    """ "random 8 KiB, 65/35 R/W"; a workload whose samples differ lists each stimulus."""
    return "; ".join(
        f"{PATTERNS.get(pattern, pattern or 'unknown pattern')} {block_size_label(size)}, {units.mix(read)}"
        for pattern, size, read in stimuli
    )


def workload_chart(w: WorkloadRun) -> Chart:
    name = WORKLOADS[w.test].name
    plotted = [p for p in w.points if p.written_bytes is not None]
    if w.capacity_bytes:
        x = [rounded(p.written_bytes / w.capacity_bytes, 4) for p in plotted]
        x_title = f"Data written (× the {bytes_label(w.capacity_bytes)} user capacity)"
        x_column = "Written (× capacity)"
    else:
        x = [rounded(p.written_bytes / 1e12, 6) for p in plotted]
        x_title = "Data written (TB, 10¹² bytes)"
        x_column = "Written (TB)"
    y = [rounded(p.iops, 0) for p in plotted]
    level = w.level
    shapes = []
    if level is not None:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": level, "y1": level,
                       "line": {"color": PALETTE[2], "dash": "dash", "width": 1.5}})  # fmt: skip
    if w.capacity_bytes:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": WSAT_CAPACITY_MULTIPLE,
                       "x1": WSAT_CAPACITY_MULTIPLE, "y0": 0, "y1": 1,
                       "line": {"color": "#57606a", "dash": "dot", "width": 1}})  # fmt: skip
    stimulus = stimulus_label(w.stimuli)
    written = (
        None
        if w.written_bytes is None
        else bytes_label(w.written_bytes)
        + (f" ({units.significant(w.written_bytes / w.capacity_bytes)}× capacity)" if w.capacity_bytes else "")
    )
    averaged = (
        f" Each point averages {w.group_size} consecutive samples (at most {MAX_POINTS:,} points a run)."
        if w.group_size > 1
        else ""
    )
    missing = f" {w.missing_iops} sample(s) without IOPS are left out of the means." if w.missing_iops else ""
    return Chart(
        key=w.test,
        title=f"{w.test}: {name} ({stimulus}), IOPS against data written",
        figure={
            "data": [
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": plot_text(f"{w.test} {stimulus}"),
                    "x": x,
                    "y": y,
                    "line": {"color": PALETTE[TESTS.index(w.test) % len(PALETTE)]},
                }
            ],
            "layout": figure_layout(f"Write saturation, {name}", x_title, "IOPS (reads and writes)", shapes=shapes),
        },  # fmt: skip
        columns=["First sample", "Last sample", "Samples", "Written (bytes)", x_column, "IOPS"],
        rows=[
            [p.first, p.last, p.samples, round(p.written_bytes), xi, yi]
            for p, xi, yi in zip(plotted, x, y, strict=True)
        ],
        summary_columns=["Workload", "Stimulus", "Samples", "Level IOPS", "Level read as", "Written", "Stopped at"],
        summary_rows=[
            [w.test, stimulus, w.samples, rounded(level, 0), w.level_label, written, w.stop],
        ],
        verdict=[
            ("Stimulus", stimulus),
            ("Samples", f"{w.samples:,}"),
            ("Level", units.MISSING if level is None else f"{round(level):,} IOPS"),
            ("Level read as", w.level_label),
            ("Written", written or units.MISSING),
            ("Stopped at", w.stop),
        ],
        note=f"Dashed: the level ({w.level_label}). Dotted: {WSAT_CAPACITY_MULTIPLE}× the capacity, where the "
        f"test stops unless 24 h pass first.{averaged}{missing}",
    )


def page_section(drive, submission_id=None, *, csv_link=None) -> Section | None:
    """The drive page's WSAT optional workloads section; each chart (keyed by its workload) has a CSV."""
    return load(drive, submission_id, csv_link=csv_link)
