"""The compare page's sections for the tests beyond IOPS, throughput and latency: HIR, XSR, ECW, DIRTH, the WSAT
optional workloads and, kept apart, the surface (an nvmedb extension, not a PTS test).

For each compared drive, its newest public run of each test (the latest `finished_at`, then the latest stored). The
rows come in a fixed number of bounded queries whatever the number of drives (forms.MAX_COMPARED at most): the runs
(one DISTINCT ON query), then each report's compare_rows (reports.registry), only for the tests a compared drive has:
HIR wait states; XSR groups and intervals (at most reports.xsr.charts.MAX_XSR_POINTS a run, picked in SQL); the WSAT
workloads' last samples (WINDOW_ROUNDS a run); the surface patterns with their peak cell's speedup. ECW and DIRTH
read their curves with their charts (two queries each, only when a compared drive has the test): a page comparing
drives without any of these tests costs the one query for the runs. Each test's chart is its report's, in PTS order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analysis.models import TestRun
from analysis.selectors import newest_run_per, public_runs_q
from browse.forms import MAX_COMPARED
from reports import registry
from reports.chart_kit import PALETTE, Chart

TESTS = tuple(test for tests, report in registry.each_report() if report.compare_charts for test in tests)


@dataclass
class ComparePts:
    drives: list
    runs: dict[tuple[int, str], dict] = field(default_factory=dict)  # (drive id, test) -> its newest public run
    rows: dict[str, dict] = field(default_factory=dict)  # what each report's compare_rows read, by the name it gives

    def rows_of(self, name: str) -> dict:
        """Rows a report's compare_rows read under `name` (run id -> rows); empty when no compared drive has a run."""
        return self.rows.get(name, {})

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
    for tests, report in registry.each_report():
        run_ids = [run["id"] for (_, test), run in data.runs.items() if test in tests]
        if report.compare_rows is not None and run_ids:
            data.rows.update(report.compare_rows(run_ids))
    return data


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
