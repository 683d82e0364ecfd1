"""The shortcuts of store_submission held to the plain paths they replace: the aggregates worked out per combination
of levels (analysis.aggregate_refresh), the column checks that skip values which fit (analysis.columns), and the
measurement and flag rows written as values rather than model instances (analysis.dataset_rows, nvmedb.bulk)."""

import math
import random
from collections import defaultdict

import pytest

from analysis import aggregate_refresh, aggregates, columns, dataset_rows
from analysis.aggregate_refresh import refresh_aggregates
from analysis.bundle_reader import read_bundle
from analysis.models import DriveModelAggregate, Flag, Measurement
from analysis.tests.factories import (
    DriveModelFactory,
    PcieLinkFactory,
    PhysicalUnitFactory,
    SubmissionFactory,
    TestRunFactory,
    UserFactory,
)
from nvmedb import bulk


def test_the_two_run_median_is_aggregates_median_to_the_bit():
    rng = random.Random(5)
    pairs = [(rng.uniform(-1e9, 1e9), rng.uniform(-1e9, 1e9)) for _ in range(2000)]
    pairs += [(0.1, 0.2), (0.2, 0.1), (1e308, 1.7e308), (5e-324, 0.0), (3.0, 3.0), (-0.0, 0.0)]
    for pair in pairs:
        assert aggregate_refresh._median(list(pair)).hex() == aggregates.median(list(pair)).hex(), pair
    for n in (1, 3, 4, 7):
        values = [rng.uniform(0, 1e6) for _ in range(n)]
        assert aggregate_refresh._median(values) == aggregates.median(values)


@pytest.mark.django_db
def test_levels_that_hold_every_run_have_the_statistics_of_the_plain_groups():
    """One edition and one link width: those levels hold the same runs as `all` and are worked out once. Units span
    firmware levels, some runs have no unit, some no value: every row against the statistics of its own runs."""
    rng = random.Random(11)
    drive = DriveModelFactory()
    users = [UserFactory() for _ in range(4)]
    units = [PhysicalUnitFactory(drive_model=drive) for _ in range(7)]
    links = [PcieLinkFactory(generation=g, width=4) for g in (3, 4)]
    runs = []
    for i in range(60):
        headline = {"iops_4k_read": rng.uniform(1e5, 9e5), "bw_1m_read": rng.uniform(1e9, 7e9) if i % 5 else None}
        runs.append(
            TestRunFactory(
                drive_model=drive,
                submission=SubmissionFactory(uploader=users[i % 4], status="published"),
                unit=units[i % 7] if i % 6 else None,
                pcie_link=links[i % 2],
                firmware__revision=("1.0", "2.0", "3.0")[i % 3],
                edition="enterprise",
                headline=headline,
            )  # fmt: skip
        )
    refresh_aggregates(drive_model=drive)

    expected = defaultdict(list)
    for run in runs:
        levels = {
            "all": "", "firmware": run.firmware.revision, "pcie_generation": f"Gen{run.pcie_link.generation}",
            "pcie_width": "x4", "edition": "enterprise",
        }  # fmt: skip
        for metric, value in run.headline.items():
            if value is not None:
                for factor, level in levels.items():
                    expected[(metric, factor, level)].append(run)
    stored = {(a.metric, a.factor, a.level): a for a in DriveModelAggregate.objects.filter(drive_model=drive)}
    assert set(stored) == set(expected) and len(stored) == 2 * 8
    for (metric, factor, level), group in expected.items():
        samples = ((r.headline[metric], aggregates.unit_key(r.unit_id, r.pk)) for r in group)
        spread = aggregates.spread(aggregates.unit_values(samples))
        row = stored[(metric, factor, level)]
        assert (row.median, row.q1, row.q3, row.iqr) == (spread.median, spread.q1, spread.q3, spread.iqr)
        assert row.n_runs == len(group)
        assert row.n_units == len({r.unit_id for r in group} - {None})
        assert row.n_contributors == len({r.submission.uploader_id for r in group})


class Opaque:
    """A value of no type the checks know (its repr the same in every test worker)."""

    def __repr__(self):
        return "Opaque()"


HOSTILE_VALUES = [
    None, 0, 1, -1, 2**15, 2**31 - 1, 2**31, 2**63, -(2**63) - 1, True, False, 0.0, -0.0, 1.5, math.nan, math.inf,
    -math.inf, 1e308, "", "x", "x" * 16, "x" * 200, "x" * 256, "x" * 600, "a\x00b", "µs", 3 + 0j, [1], {"a": 1},
    b"bytes", Opaque(),
]  # fmt: skip


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=repr)
def test_a_value_the_checks_skip_is_one_problem_finds_nothing_wrong_with(value):
    checks = [(model, name) for model, name, _attribute, _what, _fits in columns._measurement_checks()]
    checks += [(Measurement, name) for name, _fits in columns._summary_checks()]
    assert len(checks) == 28
    for model, name in checks:
        if columns._fits(model, name)(value):
            assert columns.problem(model, name, value, "the value") is None, (model, name, value)


def _nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


JSON_VALUES = [
    {}, {"read": {"99.000000": 81234.5, "99.990000": 1.5e-05}}, {"why": "null"}, {"x": None}, {"x": math.nan},
    [math.inf], {"x": -math.inf}, {"x": "a\x00b"}, {"x": "\\u0000"}, {1: "an int key"}, {"big": 2**70},
    {"x": 2**63 - 1}, {"µs": "✓"}, _nested(300), "text", 12, 1.5, True,
]  # fmt: skip


@pytest.mark.parametrize("value", JSON_VALUES, ids=lambda v: repr(v)[:40])
def test_the_json_check_answers_as_the_standard_library_alone(value):
    try:
        expected = columns.standard_json_problem(value, "it")
    except TypeError as refused:  # the standard library refuses it, and so does the check
        with pytest.raises(type(refused)):
            columns._json_problem(value, "it", "Measurement.missing")
        return
    assert columns._json_problem(value, "it", "Measurement.missing") == expected


def test_the_measurement_values_are_every_field_of_the_model_but_its_id(make_verified):
    record = read_bundle(make_verified())
    test_record = record.test_runs[0]
    run = TestRunFactory.build(id=7, drive_model_id=3)
    values = dataset_rows.measurement_values(test_record.measurements[0], run, 5, 7.04e9, 0, record)
    assert list(values) == [f.attname for f in Measurement._meta.concrete_fields if not f.primary_key]
    assert (values["round_id"], values["test_run_id"], values["drive_model_id"]) == (5, 7, 3)


@pytest.mark.django_db
def test_rows_written_as_values_are_the_rows_written_as_instances():
    submission = SubmissionFactory()
    run = TestRunFactory(submission=submission)
    made = [("bus_bound", "a reason"), ("imported", "another"), ("thermal_throttle", "µs ✓ \\ \t tab")]
    by_instances = bulk.insert_rows([Flag(submission=submission, test_run=run, kind=k, reason=r) for k, r in made])
    names = ["submission_id", "test_run_id", "measurement_id", "kind", "reason"]
    ids = bulk.insert_values_returning_ids(Flag, names, [(submission.pk, run.pk, None, k, r) for k, r in made])
    assert len(ids) == 3 and not set(ids) & {flag.pk for flag in by_instances}
    stored = {flag.pk: flag for flag in Flag.objects.filter(submission=submission)}
    fields = [f.attname for f in Flag._meta.concrete_fields if not f.primary_key]
    for instance, row_id in zip(by_instances, ids, strict=True):
        assert [getattr(stored[row_id], f) for f in fields] == [getattr(stored[instance.pk], f) for f in fields]
    assert bulk.insert_values_returning_ids(Flag, names, []) == []
