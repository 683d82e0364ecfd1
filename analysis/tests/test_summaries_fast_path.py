"""The page summary rebuild (browse.summaries.summary_fields: every public run read once, the breakdowns built once)
writes the same row as the part-by-part build the pages use (reference_summary_fields), field for field, on varied
data: several firmware revisions and PCIe generations, units tested more than once and runs of no known unit,
over-provisioning levels, missing headline values, a surface run, a withdrawn submission and whole-submission flags."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from analysis.models import DriveModel, DrivePageSummary, Flag
from analysis.services import refresh_aggregates
from analysis.tests import factories
from analysis.tests.conftest import make_browse_submission
from analysis.tests.surface_factory import surface_run
from browse import summaries


def as_stored(fields: dict | None):
    return None if fields is None else json.loads(json.dumps(fields))


def assert_same_row(drive: DriveModel) -> dict | None:
    drive = DriveModel.objects.get(pk=drive.pk)
    fast, reference = as_stored(summaries.summary_fields(drive)), as_stored(summaries.reference_summary_fields(drive))
    if fast is None or reference is None:
        assert fast is reference
        return None
    assert sorted(fast) == sorted(reference)
    differing = [key for key in fast if fast[key] != reference[key]]
    assert differing == [], f"the rebuild's row differs in {differing}"
    return fast


def add_varied_runs(drive: DriveModel, seed: int, n_submissions: int) -> None:
    """Light submissions (runs with headline values, no measurements) spread over firmware, links, units and
    over-provisioning, some values missing, two of them sharing a unit."""
    rng = random.Random(seed)
    firmwares = [factories.FirmwareFactory(drive_model=drive, revision=f"FW{i}") for i in (1, 2, 7)]
    links = [factories.PcieLinkFactory(generation=g, speed_gts={3: 8.0, 4: 16.0, 5: 32.0}[g]) for g in (3, 4, 5)]
    shared_unit = factories.PhysicalUnitFactory(drive_model=drive)
    for i in range(n_submissions):
        submission = factories.SubmissionFactory()
        unit = shared_unit if i % 4 == 0 else (None if i % 5 == 1 else factories.PhysicalUnitFactory(drive_model=drive))
        for test in ("iops", "tp", "lat"):
            headline = {
                "iops": {"iops_4k_read": rng.uniform(4e5, 8e5), "iops_4k_write": rng.uniform(1e5, 3e5)},
                "tp": {"bw_1m_read": rng.uniform(3e9, 7e9), "bw_1m_write": rng.uniform(2e9, 5e9)},
                "lat": {"lat_4k_mean": rng.uniform(5e4, 9e4)},
            }[test]
            if rng.random() < 0.15:
                headline = {}  # a run that measured none of its headline cells
            factories.TestRunFactory(
                submission=submission, drive_model=drive, firmware=rng.choice(firmwares), unit=unit,
                pcie_link=rng.choice(links), test=test, headline=headline, steady=rng.choice([True, False]),
                overprovisioning=rng.choice([None, 0.0, 0.07, 0.28]), compliant=rng.random() < 0.8,
            )  # fmt: skip
        if i % 6 == 2:
            Flag.objects.create(submission=submission, kind="bus_bound", reason="whole-submission flag")


@pytest.mark.parametrize("seed", [1, 2])
def test_the_rebuild_writes_the_reference_row_on_varied_data(browse_drive, seed):
    drive = browse_drive
    add_varied_runs(drive, seed, n_submissions=14)
    make_browse_submission(drive_model=drive, firmware="FW3", generation=5, scale=1.1)
    surface_run(drive_model=drive)
    withdrawn = factories.SubmissionFactory(status="withdrawn")
    factories.TestRunFactory(submission=withdrawn, drive_model=drive, headline={"iops_4k_read": 1.0})
    refresh_aggregates(drive_model=drive)
    row = assert_same_row(drive)
    assert row["n_submissions"] >= 16 and row["summary"]["n_surface_runs"] == 1
    assert row["page"]["spread"]["op_breakdown"], "the varied over-provisioning levels are broken down"
    assert len(row["breakdowns"]) == 4
    published = Flag.objects.filter(submission__status="published")
    on_runs = {
        (f.kind, f.submission_id)
        for f in published.filter(test_run__drive_model=drive).exclude(test_run__test="surface")
    }
    whole = {
        (f.kind, f.submission_id)
        for f in published.filter(test_run__isnull=True, submission__test_runs__drive_model=drive)
    }
    expected = Counter(kind for kind, _ in on_runs) + Counter(kind for kind, _ in whole)
    assert {c["kind"]: c["n_submissions"] for c in row["summary"]["flag_counts"]} == expected and len(whole) == 2
    assert summaries.rebuild_summary(drive.pk) == summaries.WRITTEN
    stored = DrivePageSummary.objects.filter(drive_model=drive).values(*row).get()
    assert as_stored({k: stored[k] for k in row}) == row  # what the task wrote is that row


def test_the_rebuild_matches_on_a_drive_with_only_a_surface_run_and_one_with_no_public_run(db):
    lone = factories.DriveModelFactory(slug="lone-surface")
    surface_run(drive_model=lone, pcie_link=factories.PcieLinkFactory(generation=5, speed_gts=32.0))
    refresh_aggregates(drive_model=lone)
    assert assert_same_row(lone)["summary"]["n_surface_runs"] == 1
    empty = factories.DriveModelFactory(slug="withdrawn-only")
    factories.TestRunFactory(drive_model=empty, submission=factories.SubmissionFactory(status="withdrawn"))
    assert assert_same_row(empty) is None
