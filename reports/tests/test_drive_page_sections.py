"""The drive page's sections of the tests that have their own come from the reports registry: a section is linked,
drawn and (when the page has no core section) opened only when the drive has a public run of its test with
something to show; without one the page says it has nothing to chart."""

from __future__ import annotations

import re

import pytest

from analysis.models import HirWaitState
from analysis.services import refresh_aggregates
from analysis.tests import factories

pytestmark = pytest.mark.django_db


def hir_only_drive(slug: str, *, wait_states: int):
    """A drive whose one public run is a HIR run with `wait_states` wait states stored."""
    drive = factories.DriveModelFactory(slug=slug)
    run = factories.TestRunFactory(test="hir", drive_model=drive)
    for index in range(1, wait_states + 1):
        HirWaitState.objects.create(
            test_run=run, index=index, idle_s=5.0 * index, burst_s=5.0, bursts_planned=12, bursts_measured=12,
            baseline_iops=40000.0, baseline_steady=True, recovery_iops=44000.0, recovery_ratio=1.1, recovered=False,
            return_iops=40000.0,
        )  # fmt: skip
    refresh_aggregates(drive_model=drive)
    return drive


def section_links(html: str) -> list[str]:
    nav = re.search(r'<nav class="page-sections".*?</nav>', html, re.S).group(0)
    return re.findall(r'href="#(test-[\w-]+)"', nav)


def test_a_test_with_something_to_show_is_linked_drawn_and_opened_first(client):
    drive = hir_only_drive("hir-only", wait_states=2)
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert section_links(html) == ["test-hir"]
    assert '<details class="charts test-section" id="test-hir" open>' in html
    assert 'id="no-charts"' not in html


def test_a_run_with_nothing_to_show_gets_no_section_and_the_page_says_so(client):
    drive = hir_only_drive("hir-empty", wait_states=0)
    html = client.get(f"/drives/{drive.slug}/").content.decode()
    assert section_links(html) == []
    assert 'id="test-hir"' not in html
    assert 'id="no-charts"' in html
