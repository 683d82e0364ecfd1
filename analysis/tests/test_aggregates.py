"""Medians, quartiles and the robust z-score that holds far-off results for review."""

import pytest

from analysis import aggregates


def test_quartiles_interpolate_between_order_statistics():
    spread = aggregates.spread([1, 2, 3, 4])
    assert (spread.median, spread.q1, spread.q3, spread.iqr, spread.n) == (2.5, 1.75, 3.25, 1.5, 4)


def test_a_single_value_has_no_spread():
    assert aggregates.spread([7]).iqr == 0


def test_a_result_far_from_its_peers_is_an_outlier():
    peers = [100_000, 102_000, 98_000, 101_000, 99_000, 100_500]
    assert aggregates.outlier_reason("4 KiB random read", 100_800, peers) is None
    reason = aggregates.outlier_reason("4 KiB random read", 250_000, peers)
    assert reason and "robust z-score" in reason and "6 units" in reason


def test_too_few_peers_never_make_an_outlier():
    assert aggregates.robust_z(1e9, [1, 2, 3, 4]) is None


def test_identical_peers_fall_back_to_the_mean_absolute_deviation():
    peers = [10, 10, 10, 10, 10, 20]
    assert aggregates.robust_z(10, peers) == pytest.approx(0)
    assert aggregates.robust_z(1000, peers) > aggregates.OUTLIER_Z
    assert aggregates.robust_z(5, [10] * 6) is None


def test_unit_values_summarise_each_units_runs_first():
    samples = [(10.0, "a"), (30.0, "a"), (20.0, "a"), (5.0, "b")]
    assert aggregates.unit_values(samples) == [20.0, 5.0]


def test_a_contributor_is_one_voice_whatever_their_units():
    samples = [(1.0, "lab", "u1"), (2.0, "lab", "u2"), (3.0, "lab", "u3"), (9.0, "other", "u4"), (9.0, "other", "u4")]
    assert aggregates.contributor_values(samples) == [2.0, 9.0]


# --- issue 21: the published aggregates count units and contributors, not runs ---------------------------------------

WRITE = "iops_4k_write"


def _run(drive, user, value, *, unit=None, no_unit=False):
    from analysis.tests.factories import PhysicalUnitFactory, SubmissionFactory, TestRunFactory

    if no_unit:
        unit = None
    elif unit is None:
        unit = PhysicalUnitFactory(drive_model=drive)
    return TestRunFactory(drive_model=drive, submission=SubmissionFactory(uploader=user), unit=unit,
                          headline={WRITE: value})  # fmt: skip


def _overall(drive):
    from analysis.models import DriveModelAggregate
    from analysis.services import refresh_aggregates

    refresh_aggregates(drive_model=drive)
    return DriveModelAggregate.objects.get(drive_model=drive, metric=WRITE, factor="all")


def test_the_same_unit_uploaded_six_times_by_one_account_moves_no_median(db):
    from analysis.tests.factories import DriveModelFactory, PhysicalUnitFactory, UserFactory

    drive = DriveModelFactory()
    alice, bob, mallory = UserFactory(), UserFactory(), UserFactory()
    _run(drive, alice, 24_000.0)
    _run(drive, bob, 24_475.0)
    target = PhysicalUnitFactory(drive_model=drive)
    _run(drive, alice, 25_000.0, unit=target)
    before = _overall(drive)
    assert (before.median, before.n_runs, before.n_units, before.n_contributors) == (24_475.0, 3, 3, 2)

    for _ in range(6):  # the attack of issue 21: one unit's bundle, values ×2, uploaded six times by one account
        _run(drive, mallory, 48_949.0, unit=target)
    after = _overall(drive)
    unit_medians = [24_000.0, 24_475.0, aggregates.median([25_000.0] + [48_949.0] * 6)]
    assert after.median == aggregates.median(unit_medians) == before.median == 24_475.0
    assert after.q1 == aggregates.quantile(unit_medians, 0.25) and after.q3 == aggregates.quantile(unit_medians, 0.75)
    assert after.n_units == before.n_units == 3
    assert after.n_runs == 9  # every run is still counted as a run
    assert after.n_contributors == 3


def test_one_accounts_many_uploads_of_its_own_unit_weigh_as_one_unit(db):
    from analysis.tests.factories import DriveModelFactory, PhysicalUnitFactory, UserFactory

    drive = DriveModelFactory()
    honest = UserFactory()
    _run(drive, honest, 24_475.0)
    stuffer, stuffed = UserFactory(), PhysicalUnitFactory(drive_model=drive)
    for _ in range(6):
        _run(drive, stuffer, 48_949.0, unit=stuffed)
    overall = _overall(drive)
    # per run this was 48,949 (7 runs, 6 of them the stuffed unit); per unit it is the middle of the two units
    assert overall.median == aggregates.median([24_475.0, 48_949.0])
    assert (overall.n_runs, overall.n_units, overall.n_contributors) == (7, 2, 2)


def test_a_run_without_a_unit_id_counts_as_its_own_unit(db):
    from analysis.tests.factories import DriveModelFactory, UserFactory

    drive = DriveModelFactory()
    user = UserFactory()
    for value in (10.0, 20.0, 60.0):
        _run(drive, user, value, no_unit=True)
    overall = _overall(drive)
    assert overall.median == 20.0 and overall.n_runs == 3 and overall.n_units == 0
    assert overall.n_contributors == 1 and overall.unconfirmed
