"""A drive's aggregates (analysis.aggregate_refresh) against the statistics worked out from its runs one group at a
time: every factor level of every metric, medians over units (a unit's runs summarised first), runs, units and
contributors counted."""

import random
from collections import defaultdict

import pytest

from analysis import aggregates
from analysis.aggregate_refresh import refresh_aggregates
from analysis.models import DriveModelAggregate
from analysis.tests.factories import (
    DriveModelFactory,
    PcieLinkFactory,
    PhysicalUnitFactory,
    SubmissionFactory,
    TestRunFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def test_every_level_of_every_metric_is_the_statistics_of_its_runs():
    rng = random.Random(3)
    drive = DriveModelFactory()
    users = [UserFactory() for _ in range(3)]
    units = [PhysicalUnitFactory(drive_model=drive) for _ in range(6)]
    links = [PcieLinkFactory(generation=g, width=w) for g, w in ((3, 4), (4, 4), (4, 2))]
    runs = []
    for i in range(40):
        headline = {"iops_4k_read": rng.uniform(1e5, 9e5)}
        if i % 3:
            headline["bw_1m_read"] = rng.uniform(1e9, 7e9)
        run = TestRunFactory(
            drive_model=drive, submission=SubmissionFactory(uploader=users[i % 3], status="published"),
            unit=units[i % 6] if i % 7 else None, pcie_link=links[i % 3], firmware__revision=("1.0", "2.0")[i % 2],
            edition=("enterprise", "client")[i % 4 == 0], headline=headline,
        )  # fmt: skip
        runs.append(run)
    refresh_aggregates(drive_model=drive)

    expected = defaultdict(list)
    for run in runs:
        levels = {
            "all": "", "firmware": run.firmware.revision, "pcie_generation": f"Gen{run.pcie_link.generation}",
            "pcie_width": f"x{run.pcie_link.width}", "edition": run.edition,
        }  # fmt: skip
        for metric in run.headline:
            for factor, level in levels.items():
                expected[(metric, factor, level)].append(run)
    stored = {(a.metric, a.factor, a.level): a for a in DriveModelAggregate.objects.filter(drive_model=drive)}
    assert (
        set(stored) == set(expected) and len(stored) == 17
    )  # 2 metrics × (all, 2 firmwares, 2 generations, 2 widths, 2 editions); no Gen3 run has bw_1m_read
    for (metric, factor, level), group in expected.items():
        per_unit = aggregates.unit_values((r.headline[metric], aggregates.unit_key(r.unit_id, r.pk)) for r in group)
        spread = aggregates.spread(per_unit)
        row = stored[(metric, factor, level)]
        assert (row.median, row.q1, row.q3, row.iqr) == (spread.median, spread.q1, spread.q3, spread.iqr)
        assert row.n_runs == len(group)
        assert row.n_units == len({r.unit_id for r in group} - {None})
        assert row.n_contributors == len({r.submission.uploader_id for r in group})
