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
    assert reason and "robust z-score" in reason and "6 runs" in reason


def test_too_few_peers_never_make_an_outlier():
    assert aggregates.robust_z(1e9, [1, 2, 3, 4]) is None


def test_identical_peers_fall_back_to_the_mean_absolute_deviation():
    peers = [10, 10, 10, 10, 10, 20]
    assert aggregates.robust_z(10, peers) == pytest.approx(0)
    assert aggregates.robust_z(1000, peers) > aggregates.OUTLIER_Z
    assert aggregates.robust_z(5, [10] * 6) is None
