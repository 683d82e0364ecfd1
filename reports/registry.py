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
from typing import Any

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
class OwnSection:
    """A test's own section of the drive page (the tests beyond the core four): its data, where the page links to it,
    the template that draws it and when the page shows it. The drive page loops over these; it names no test."""

    load: Callable  # (drive, submission id, csv_link=) -> the section's data, or None
    name: str  # the drive page's context name for that data (its template, and the page's first screen, read it)
    anchor: str  # its id on the page is test-<anchor>; its template opens it when it is the page's open_section
    link: str  # its name in the page's list of sections
    template: str  # reports/<test>/section.html
    shows: Callable[[Any], bool] = bool  # (its loaded data) -> whether the page shows the section


@dataclass(frozen=True)
class Report:
    label: str
    # a core test: (the drive page's data, the run of this test it charts) -> its charts, in page order, shown in
    # its section of the drive page
    drive_charts: Callable[..., list[Chart]] | None = None
    section: PageSection | None = None
    own_section: OwnSection | None = None  # a test with a section of its own on the drive page
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
    own_section=OwnSection(
        load=hir_charts.page_section,
        name="hir",
        anchor="hir",
        link="HIR",
        template="reports/hir/section.html",
    ),
    compare_charts=hir_charts.compare_charts,
    compare_rows=hir_charts.compare_rows,
    tables=(*hir_tables.tables(), *recovery_series.tables()),
)
XSR = Report(
    "Cross stimulus recovery",
    own_section=OwnSection(
        load=xsr_charts.page_section,
        name="xsr",
        anchor="xsr",
        link="XSR",
        template="reports/xsr/section.html",
    ),
    compare_charts=xsr_charts.compare_charts,
    compare_rows=xsr_charts.compare_rows,
    tables=(*xsr_tables.tables(), *recovery_series.tables()),
)
DEMAND_INTENSITY = Report(
    "ECW and DIRTH (demand intensity)",
    own_section=OwnSection(
        load=demand_intensity_charts.page_section,
        name="dirth_section",
        anchor="demand-intensity",
        link="ECW, DIRTH",
        template="reports/demand_intensity/section.html",
    ),
    compare_charts=demand_intensity_charts.compare_charts,
    tables=demand_intensity_tables.tables(),
)
WSAT_WORKLOADS = Report(
    "WSAT optional workloads",
    own_section=OwnSection(
        load=wsat_workloads_charts.page_section,
        name="wsat_workloads",
        anchor="wsat-workloads",
        link="WSAT workloads",
        template="reports/wsat_workloads/section.html",
    ),
    csv_by_test=True,
    compare_charts=wsat_workloads_compare.compare_charts,
    compare_rows=wsat_workloads_compare.compare_rows,
)
SURFACE = Report(
    "Surface",
    own_section=OwnSection(
        load=surface_charts.page_section,
        name="surface",
        anchor="surface",
        link="Surface",
        template="reports/surface/section.html",
    ),
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


def own_sections() -> list[tuple[tuple[str, ...], Report]]:
    """The reports with a section of their own on the drive page, with their tests, in page order: the extensions'
    first (the page's first screen already points to the surface), then the PTS tests' in PTS order."""
    found = [(tests, each) for tests, each in each_report() if each.own_section is not None]
    return sorted(found, key=lambda pair: not pair[1].extension)  # stable: PTS order within each group
