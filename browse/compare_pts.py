"""The compare page's sections for the tests beyond IOPS, throughput and latency: HIR, XSR, ECW, DIRTH, the WSAT
optional workloads and, kept apart, the surface (an nvmedb extension, not a PTS test).

For each compared drive, its newest public run of each test (the latest `finished_at`, then the latest stored). The
rows come in a fixed number of bounded queries whatever the number of drives (forms.MAX_COMPARED at most): the runs
(one DISTINCT ON query), HIR wait states, XSR groups, XSR intervals (at most MAX_XSR_POINTS a run, picked in SQL), the
WSAT workloads' last samples (WINDOW_ROUNDS a run, picked in SQL) and the surface patterns with their peak cell's
speedup; ECW and DIRTH read their curves in reports.demand_intensity (two queries each, only when a compared drive has
the test: a page comparing drives without any of these tests costs the one query for the runs). Each test's chart is
its report's (reports.registry), in PTS order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, F, OuterRef, Subquery, Window
from django.db.models.functions import DenseRank, Mod, RowNumber

from analysis.models import HirWaitState, Measurement, RecoveryPoint, SurfaceCell, SurfacePattern, TestRun, XsrGroup
from analysis.selectors import newest_run_per, public_runs_q
from browse.forms import MAX_COMPARED
from nvmedb_client.pts.wsat_workloads import WORKLOADS
from nvmedb_client.steady_state import WINDOW_ROUNDS
from reports import registry
from reports.chart_kit import PALETTE, Chart

TESTS = tuple(test for tests, report in registry.each_report() if report.compare_charts for test in tests)
MAX_XSR_POINTS = 400  # per drive's trace: a full XSR run logs 15,840 intervals


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
    wsat_ids = [run_id for test in WORKLOADS for run_id in ids[test]]
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


def pts_charts(drives: list, data: ComparePts | None = None) -> list[Chart]:
    """The PTS charts of the compare page beyond IOPS/TP/LAT, each only when a compared drive has the test."""
    data = data if data is not None else load(drives)
    return [chart for report in _compared(extension=False) for chart in report.compare_charts(drives, data)]


def surface_charts(drives: list, data: ComparePts | None = None) -> list[Chart]:
    """The nvmedb extensions' charts (the surface): shown apart from the PTS charts, under their own label."""
    data = data if data is not None else load(drives)
    return [chart for report in _compared(extension=True) for chart in report.compare_charts(drives, data)]


def _compared(*, extension: bool) -> list:
    return [r for _, r in registry.each_report() if r.compare_charts is not None and r.extension == extension]


def sections(drives: list) -> dict:
    data = load(drives)
    label = "; ".join(r.extension_note for r in _compared(extension=True))
    return {"pts": pts_charts(drives, data), "surface": surface_charts(drives, data), "label": label}


def chart(drives: list, key: str) -> Chart | None:
    """One of this module's compare charts by key (for its CSV), or None."""
    found = sections(drives)
    return next((c for c in [*found["pts"], *found["surface"]] if c.key == key), None)
