"""The reports registry: every test the client plans has a report, the published tables keep their order, and the
read side reaches a test's charts and tables only through the registry (imports run browse/datasets -> reports)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.template.loader import get_template

from datasets.tables import TABLES
from nvmedb_client.pts import registry as client_registry
from reports import registry

ROOT = Path(__file__).resolve().parents[2]
TEST_PACKAGES = {"iops", "tp", "lat", "wsat", "hir", "xsr", "demand_intensity", "wsat_workloads", "surface"}


def imported_modules(folder: str) -> list[tuple[Path, str]]:
    """(file, module) of every import in the folder's source files (tests left out)."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if "tests" in path.relative_to(ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.extend((path, f"{node.module}.{alias.name}") for alias in node.names)
            elif isinstance(node, ast.Import):
                found.extend((path, alias.name) for alias in node.names)
    return found


def test_every_test_the_client_plans_has_a_report_in_the_same_order():
    assert registry.TESTS == client_registry.TESTS


def test_tests_that_share_a_report_map_to_the_same_one_and_each_report_is_listed_once():
    assert registry.report("ecw") is registry.report("dirth")
    assert registry.report("ws-oltp") is registry.report("ws-comp")
    listed = registry.each_report()
    assert [tests for tests, _ in listed][:6] == [("iops",), ("tp",), ("lat",), ("wsat",), ("hir",), ("xsr",)]
    assert ("ecw", "dirth") in [tests for tests, _ in listed]
    assert len({id(each) for _, each in listed}) == len(listed)


def test_an_unknown_test_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown test 'nope': choose from iops, tp"):
        registry.report("nope")


def test_the_core_tests_draw_charts_and_the_others_have_a_section_of_their_own():
    for tests, each in registry.each_report():
        core = set(tests) <= {"iops", "tp", "lat", "wsat"}
        assert (each.drive_charts is not None) == core, tests
        assert (each.section is not None) == core, tests
        assert (each.own_section is not None) == (not core), tests


def test_the_drive_page_shows_the_surface_then_the_other_tests_sections_in_pts_order():
    anchors = [each.own_section.anchor for _, each in registry.own_sections()]
    assert anchors == ["surface", "hir", "xsr", "demand-intensity", "wsat-workloads"]


def test_each_test_section_template_draws_the_section_its_report_describes():
    for tests, each in registry.own_sections():
        section = each.own_section
        source = get_template(section.template).template.source
        assert f'id="test-{section.anchor}"' in source, tests
        assert f'open_section == "{section.anchor}"' in source, tests  # the page opens it when it comes first
        assert f"{section.name}." in source, tests  # it reads its data under the name the page gives it


def test_the_drive_page_template_loops_over_the_registry_and_names_no_test_section():
    page = (ROOT / "templates" / "browse" / "drive_detail.html").read_text()
    assert "{% include test_section.template %}" in page
    for _, each in registry.own_sections():
        assert each.own_section.template not in page
        assert f"#test-{each.own_section.anchor}" not in page


def test_a_table_two_tests_share_is_published_once_after_both_and_extensions_come_last():
    names = list(TABLES)
    pts = [table.name for table in registry.pts_tables()]
    assert pts == ["hir", "xsr", "recovery_series", "demand_intensity", "response_time_histograms"]
    assert names.count("recovery_series") == 1
    assert names[-3:] == [table.name for table in registry.extension_tables()]
    assert names[-3:] == ["surface_runs", "surface", "surface_patterns"]
    assert names.index("aggregates") < names.index("hir") < names.index("factor_effects")


def test_browse_and_datasets_reach_a_test_only_through_the_registry():
    for folder in ("browse", "datasets"):
        for path, module in imported_modules(folder):
            parts = module.split(".")
            if parts[0] == "reports" and len(parts) > 1:
                assert parts[1] not in TEST_PACKAGES, f"{path.relative_to(ROOT)} imports {module}"


def test_analysis_imports_nothing_of_reports():
    """reports builds on analysis (its models and derivations), never the other way round."""
    for path, module in imported_modules("analysis"):
        assert module.split(".")[0] != "reports", f"{path.relative_to(ROOT)} imports {module}"


def test_reports_imports_neither_browse_nor_datasets():
    for path, module in imported_modules("reports"):
        assert module.split(".")[0] not in {"browse", "datasets"}, f"{path.relative_to(ROOT)} imports {module}"
