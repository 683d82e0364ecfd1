"""The SNIA SSS PTS v2.0.2 steady-state rule (§2.1.24), shared by the client and the server.

A tracking variable y is steady over a measurement window of the last 5 rounds when
(a) max(y) - min(y) <= 20% of mean(y) (data excursion), and
(b) the least-squares line through (round, y) moves by at most 10% of mean(y) across the window,
    i.e. |slope| * (5 - 1) <= 0.10 * mean(y) (slope excursion).
Both limits are inclusive and nothing is rounded before comparing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

WINDOW_ROUNDS = 5
MAX_DATA_EXCURSION = 0.20
MAX_SLOPE_EXCURSION = 0.10
DEFAULT_MAX_ROUNDS = 25


@dataclass(frozen=True)
class WindowVerdict:
    first_round: int
    last_round: int
    rounds: tuple[int, ...]
    values: tuple[float, ...]
    average: float
    data_excursion: float
    data_excursion_limit: float
    slope: float
    intercept: float
    slope_excursion: float
    slope_excursion_limit: float
    steady: bool

    def to_dict(self) -> dict:
        data = asdict(self)
        data["rounds"] = list(self.rounds)
        data["values"] = list(self.values)
        return data


def evaluate_window(rounds: Sequence[int], values: Sequence[float]) -> WindowVerdict:
    """Judge one measurement window: exactly 5 consecutive rounds and their values."""
    rounds = tuple(int(r) for r in rounds)
    values = tuple(float(v) for v in values)
    if len(rounds) != WINDOW_ROUNDS or len(values) != WINDOW_ROUNDS:
        raise ValueError(f"a measurement window has exactly {WINDOW_ROUNDS} rounds and values")
    if any(b - a != 1 for a, b in zip(rounds, rounds[1:], strict=False)):
        raise ValueError(f"a measurement window needs consecutive round numbers, got {list(rounds)}")

    average = sum(values) / WINDOW_ROUNDS
    x_mean = sum(rounds) / WINDOW_ROUNDS
    sxx = sum((x - x_mean) ** 2 for x in rounds)
    sxy = sum((x - x_mean) * (y - average) for x, y in zip(rounds, values, strict=True))
    slope = sxy / sxx
    intercept = average - slope * x_mean

    data_excursion = max(values) - min(values)
    data_excursion_limit = MAX_DATA_EXCURSION * average
    slope_excursion = abs(slope) * (WINDOW_ROUNDS - 1)
    slope_excursion_limit = MAX_SLOPE_EXCURSION * average
    return WindowVerdict(
        first_round=rounds[0],
        last_round=rounds[-1],
        rounds=rounds,
        values=values,
        average=average,
        data_excursion=data_excursion,
        data_excursion_limit=data_excursion_limit,
        slope=slope,
        intercept=intercept,
        slope_excursion=slope_excursion,
        slope_excursion_limit=slope_excursion_limit,
        steady=data_excursion <= data_excursion_limit and slope_excursion <= slope_excursion_limit,
    )


def latest_window(series: Sequence[tuple[int, float]]) -> WindowVerdict | None:
    """The verdict on the last 5 rounds of a (round, value) series; None while it has fewer than 5 rounds."""
    points = sorted(series)
    if len(points) < WINDOW_ROUNDS:
        return None
    window = points[-WINDOW_ROUNDS:]
    return evaluate_window([r for r, _ in window], [v for _, v in window])


def first_steady_round(series_by_variable: Mapping[str, Sequence[tuple[int, float]]]) -> int | None:
    """The first round at which every tracking variable's window (ending at that round) is steady.

    A round counts only when every variable has a value for it. None when no such round exists yet.
    """
    if not series_by_variable:
        return None
    by_variable = {name: dict(points) for name, points in series_by_variable.items()}
    common_rounds = sorted(set.intersection(*(set(points) for points in by_variable.values())))
    for round_number in common_rounds:
        if all(_steady_at(points, round_number) for points in by_variable.values()):
            return round_number
    return None


def _steady_at(points: Mapping[int, float], round_number: int) -> bool:
    window = range(round_number - WINDOW_ROUNDS + 1, round_number + 1)
    if any(r not in points for r in window):
        return False
    return evaluate_window(list(window), [points[r] for r in window]).steady
