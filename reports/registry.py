"""Each PTS test's report (the SNIA PTS's word for a test's charts and tables): test name -> its Report, in PTS order.

A Report says what the read side shows of a test: the core tests' (IOPS, TP, LAT, WSAT) charts of the drive page's
run, the other tests' own section of the drive page, their charts on the compare page, and their export tables (the
core tests' rows are in the shared tables datasets declares: measurements, steady_state, runs). Tests that share a
report (ECW and DIRTH; the four WSAT workloads) map to the same object. Adding a test is adding its package under
reports/ and one line here; browse and datasets ask this registry and know no test's module by name. The client's
counterpart is nvmedb_client.pts.registry; derivation at ingest stays in analysis.pts (the write path).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reports import recovery_series
from reports.chart_kit import Chart, PageSection
from reports.demand_intensity import charts as demand_intensity_charts
from reports.demand_intensity import tables as demand_intensity_tables
from reports.hir import charts as hir_charts
from reports.hir import tables as hir_tables
from reports.iops import charts as iops_charts
from reports.lat import charts as lat_charts
from reports.surface import charts as surface_charts
from reports.surface import data as surface_data
from reports.surface import tables as surface_tables
from reports.table_types import Table
from reports.tp import charts as tp_charts
from reports.wsat import charts as wsat_charts
from reports.wsat_workloads import charts as wsat_workloads_charts
from reports.wsat_workloads import compare as wsat_workloads_compare
from reports.xsr import charts as xsr_charts
from reports.xsr import tables as xsr_tables


@dataclass(frozen=True)
class Report:
    label: str
    # a core test: (the drive page's data, the run of this test it charts) -> its charts, in page order, shown in
    # its section of the drive page
    drive_charts: Callable[..., list[Chart]] | None = None
    section: PageSection | None = None
    # a test with its own section of the drive page: (drive, submission id, csv_link=) -> the section, or None
    page_section: Callable | None = None
    section_name: str = ""  # the drive page template's name for that section
    csv_by_test: bool = False  # the section's charts are keyed by their test and served as CSV (drive_chart_csv)
    # (compared drives, the compare page's loaded rows) -> its compare-page charts (each only when a drive has the test)
    compare_charts: Callable[..., list[Chart]] | None = None
    # (run ids of its tests' newest compared runs) -> {name: rows by run id}, the rows its compare charts read
    compare_rows: Callable[[list[int]], dict] | None = None
    tables: tuple[Table, ...] = ()  # its own export tables; one shared by several tests is listed by each
    own_page: Callable | None = None  # a test with a page of its own (the surface): (drive, submission id, runs=)
    extension_note: str = ""  # an nvmedb extension (not a PTS test): kept apart, under this note

    @property
    def extension(self) -> bool:
        return bool(self.extension_note)


IOPS = Report("IOPS", drive_charts=iops_charts.drive_charts, section=iops_charts.SECTION)
TP = Report("Throughput", drive_charts=tp_charts.drive_charts, section=tp_charts.SECTION)
LAT = Report("Latency", drive_charts=lat_charts.drive_charts, section=lat_charts.SECTION)
WSAT = Report("Write saturation", drive_charts=wsat_charts.drive_charts, section=wsat_charts.SECTION)
HIR = Report(
    "Host idle recovery",
    page_section=hir_charts.page_section,
    section_name="hir",
    compare_charts=hir_charts.compare_charts,
    compare_rows=hir_charts.compare_rows,
    tables=(*hir_tables.tables(), *recovery_series.tables()),
)
XSR = Report(
    "Cross stimulus recovery",
    page_section=xsr_charts.page_section,
    section_name="xsr",
    compare_charts=xsr_charts.compare_charts,
    compare_rows=xsr_charts.compare_rows,
    tables=(*xsr_tables.tables(), *recovery_series.tables()),
)
DEMAND_INTENSITY = Report(
    "ECW and DIRTH (demand intensity)",
    page_section=demand_intensity_charts.page_section,
    section_name="dirth_section",
    compare_charts=demand_intensity_charts.compare_charts,
    tables=demand_intensity_tables.tables(),
)
WSAT_WORKLOADS = Report(
    "WSAT optional workloads",
    page_section=wsat_workloads_charts.page_section,
    section_name="wsat_workloads",
    csv_by_test=True,
    compare_charts=wsat_workloads_compare.compare_charts,
    compare_rows=wsat_workloads_compare.compare_rows,
)
SURFACE = Report(
    "Surface",
    page_section=surface_charts.page_section,
    section_name="surface",
    compare_charts=surface_charts.compare_charts,
    compare_rows=surface_data.compare_rows,
    tables=surface_tables.tables(),
    own_page=surface_charts.own_page,
    extension_note=surface_data.LABEL,
)

REPORTS: dict[str, Report] = {
    "iops": IOPS,
    "tp": TP,
    "lat": LAT,
    "wsat": WSAT,
    "hir": HIR,
    "xsr": XSR,
    "ecw": DEMAND_INTENSITY,  # ECW and DIRTH share the TC x QD sweep, one section and two tables
    "dirth": DEMAND_INTENSITY,
    **{test: WSAT_WORKLOADS for test in wsat_workloads_charts.TESTS},
    "surface": SURFACE,
}
TESTS = tuple(REPORTS)


def report(test: str) -> Report:
    try:
        return REPORTS[test]
    except KeyError:
        raise ValueError(f"unknown test {test!r}: choose from {', '.join(TESTS)}") from None


def each_report() -> list[tuple[tuple[str, ...], Report]]:
    """Every report once, with the tests it covers, in PTS order."""
    found: dict[int, tuple[list[str], Report]] = {}
    for test, each in REPORTS.items():
        found.setdefault(id(each), ([], each))[0].append(test)
    return [(tuple(tests), each) for tests, each in found.values()]


def _tables_of(chosen: Iterable[Report]) -> tuple[Table, ...]:
    """Each table once, placed after the last test that lists it: a table two tests share (HIR and XSR's
    recovery_series) comes after both tests' own tables."""
    found: dict[str, Table] = {}
    for each in chosen:
        for table in each.tables:
            found.pop(table.name, None)
            found[table.name] = table
    return tuple(found.values())


def pts_tables() -> tuple[Table, ...]:
    """The PTS tests' own export tables, in PTS order."""
    return _tables_of(each for _, each in each_report() if not each.extension)


def extension_tables() -> tuple[Table, ...]:
    """The nvmedb extensions' export tables (published after every PTS table)."""
    return _tables_of(each for _, each in each_report() if each.extension)


def core_sections() -> dict[str, PageSection]:
    """test -> its section of the drive page, for the core tests (those whose charts the page draws), in PTS order."""
    return {test: each.section for test, each in REPORTS.items() if each.section is not None}
