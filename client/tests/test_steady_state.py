"""The SNIA PTS v2.0.2 §2.1.24 steady-state rule at its boundaries, and on a real published PTS run."""

import math
import re
import statistics
from collections import defaultdict

import pytest

from nvmedb_client.fio_output import parse_fio_output, summarize
from nvmedb_client.steady_state import (
    MAX_DATA_EXCURSION,
    MAX_SLOPE_EXCURSION,
    WINDOW_ROUNDS,
    evaluate_window,
    first_steady_round,
    latest_window,
)

ROUNDS = [1, 2, 3, 4, 5]


def test_a_window_whose_range_is_exactly_20_percent_of_its_average_is_steady():
    values = [45.0, 55.0, 50.0, 50.0, 50.0]
    assert MAX_DATA_EXCURSION * 50.0 == 10.0  # the boundary is exact in binary floating point
    verdict = evaluate_window(ROUNDS, values)
    assert verdict.average == 50.0
    assert verdict.data_excursion == verdict.data_excursion_limit == 10.0
    assert verdict.slope_excursion < verdict.slope_excursion_limit
    assert verdict.steady


def test_it_rejects_a_window_whose_range_exceeds_20_percent_by_a_hair():
    verdict = evaluate_window(ROUNDS, [45.0, 55.0 + 1e-9, 50.0, 50.0, 50.0])
    assert verdict.data_excursion > verdict.data_excursion_limit
    assert verdict.slope_excursion < verdict.slope_excursion_limit
    assert not verdict.steady


def test_a_fitted_line_that_moves_exactly_10_percent_across_the_window_is_steady():
    values = [38.0, 39.0, 40.0, 41.0, 42.0]
    assert MAX_SLOPE_EXCURSION * 40.0 == 4.0
    verdict = evaluate_window(ROUNDS, values)
    assert verdict.slope == 1.0
    assert verdict.slope_excursion == verdict.slope_excursion_limit == 4.0
    assert verdict.data_excursion < verdict.data_excursion_limit
    assert verdict.steady


def test_a_falling_line_at_exactly_10_percent_is_steady_too():
    verdict = evaluate_window(ROUNDS, [42.0, 41.0, 40.0, 39.0, 38.0])
    assert verdict.slope == -1.0
    assert verdict.slope_excursion == verdict.slope_excursion_limit
    assert verdict.steady


def test_it_rejects_a_fitted_line_that_moves_just_over_10_percent():
    step = 1.0 + 1e-9
    verdict = evaluate_window(ROUNDS, [40.0 + (r - 3) * step for r in ROUNDS])
    assert verdict.slope_excursion > verdict.slope_excursion_limit
    assert verdict.data_excursion < verdict.data_excursion_limit
    assert not verdict.steady


def test_the_slope_excursion_spans_the_four_round_steps_of_the_window():
    verdict = evaluate_window(ROUNDS, [10.0, 12.0, 14.0, 16.0, 18.0])
    assert verdict.slope == 2.0
    assert verdict.slope_excursion == 2.0 * (WINDOW_ROUNDS - 1)
    assert verdict.intercept == 8.0


def test_the_verdict_does_not_depend_on_where_the_round_numbers_start():
    values = [38.0, 39.0, 40.0, 41.0, 42.0]
    early = evaluate_window(ROUNDS, values)
    late = evaluate_window([21, 22, 23, 24, 25], values)
    assert (late.slope, late.slope_excursion, late.steady) == (early.slope, early.slope_excursion, early.steady)
    assert late.intercept == early.intercept - 20 * early.slope
    assert (late.first_round, late.last_round) == (21, 25)


@pytest.mark.parametrize(
    "rounds, values",
    [([1, 2, 3, 4], [1.0, 1.0, 1.0, 1.0]), ([1, 2, 3, 4, 6], [1.0] * 5), ([1, 2, 3, 4, 5], [1.0] * 4)],
)
def test_a_window_must_be_five_consecutive_rounds(rounds, values):
    with pytest.raises(ValueError):
        evaluate_window(rounds, values)


def test_there_is_no_window_before_the_fifth_round():
    assert latest_window([(1, 10.0), (2, 10.0), (3, 10.0), (4, 10.0)]) is None


def test_the_latest_window_is_the_last_five_rounds_in_round_order():
    series = [(6, 100.0), (1, 1.0), (5, 100.0), (3, 100.0), (2, 100.0), (4, 100.0)]
    verdict = latest_window(series)
    assert verdict.rounds == (2, 3, 4, 5, 6)
    assert verdict.values == (100.0,) * 5
    assert verdict.steady
    assert verdict.to_dict()["rounds"] == [2, 3, 4, 5, 6]


def test_the_first_steady_round_waits_until_every_variable_is_steady_in_the_same_round():
    # a is steady at round 5, then a spike at round 6 keeps it unsteady until the spike leaves the window (round 11);
    # b only becomes steady at round 6. Steady at 5 alone, or at 6 alone, is not enough.
    a = [(r, 100.0) for r in range(1, 6)] + [(6, 150.0)] + [(r, 100.0) for r in range(7, 13)]
    b = [(1, 10.0)] + [(r, 100.0) for r in range(2, 13)]
    assert first_steady_round({"a": a}) == 5
    assert first_steady_round({"b": b}) == 6
    assert first_steady_round({"a": a, "b": b}) == 11


def test_the_first_steady_round_is_none_when_the_rule_is_never_met():
    rising = [(r, 100.0 * 1.5**r) for r in range(1, 26)]
    assert first_steady_round({"rising": rising}) is None
    assert first_steady_round({}) is None


def _ssspt_series(shared_samples):
    """total IOPS per round for every (block size, R/W mix) of the published SSSPT IOPS run."""
    series = defaultdict(list)
    for path in (shared_samples / "ssspt-hp-iops-1").glob("wdpc_*_round*.json"):
        match = re.fullmatch(r"wdpc_bs(\w+?)_read(\d+)_round(\d+)\.json", path.name)
        summary = summarize(parse_fio_output(path.read_bytes()))
        series[(match[1], int(match[2]))].append((int(match[3]), summary.total_iops))
    return {key: sorted(points) for key, points in series.items()}


def test_the_window_statistics_match_an_independent_least_squares_fit_on_a_real_run(shared_samples):
    series = _ssspt_series(shared_samples)
    assert len(series) == 8 * 7  # 8 block sizes x 7 mixes
    for key, points in series.items():
        verdict = latest_window(points)
        rounds = [r for r, _ in points[-5:]]
        values = [v for _, v in points[-5:]]
        fit = statistics.linear_regression(rounds, values)
        assert math.isclose(verdict.slope, fit.slope, rel_tol=1e-9, abs_tol=1e-9), key
        assert math.isclose(verdict.intercept, fit.intercept, rel_tol=1e-9), key
        assert verdict.average == pytest.approx(statistics.fmean(values), rel=1e-12)
        assert verdict.data_excursion == max(values) - min(values)
        within = verdict.data_excursion <= 0.2 * verdict.average and abs(fit.slope) * 4 <= 0.1 * verdict.average
        assert verdict.steady == within, key


def test_pure_reads_of_the_real_run_are_steady_as_soon_as_a_window_exists(shared_samples):
    # reads cause no garbage collection, so the 100/0 series settle at once; the SSSPT tool also stopped at round 5
    series = _ssspt_series(shared_samples)
    reads = {key: points for key, points in series.items() if key[1] == 100}
    assert len(reads) == 8
    for key, points in reads.items():
        assert len(points) == WINDOW_ROUNDS
        assert first_steady_round({"read": points}) == WINDOW_ROUNDS, key


def test_we_never_call_a_real_series_steady_before_the_ssspt_tool_stopped_measuring_it(shared_samples):
    # The SSSPT tool repeated each cell until it judged it steady, so every series ends at its own steady round.
    # Our rule may disagree (stricter is allowed) but must never find steadiness in an earlier round.
    steady_series = 0
    for key, points in _ssspt_series(shared_samples).items():
        found = first_steady_round({"iops": points})
        last_round = points[-1][0]
        assert found is None or found == last_round, key
        if found is None:
            verdict = latest_window(points)
            assert (
                verdict.data_excursion > verdict.data_excursion_limit
                or verdict.slope_excursion > verdict.slope_excursion_limit
            ), key
        else:
            steady_series += 1
    assert steady_series > 0
