"""The PTS steady-state rule applied to a series, for readers whose series are not the client's (imports)."""

from __future__ import annotations

from collections.abc import Sequence

from nvmedb_client.steady_state import WINDOW_ROUNDS, evaluate_window, first_steady_round, latest_window


def judge_series(points: Sequence[tuple[int, float]]) -> tuple[bool, int | None, dict | None, str]:
    """(steady, first steady round, the measurement window as a dict, why not steady) for one variable's series."""
    points = sorted(points)
    rounds = [r for r, _ in points]
    if len(set(rounds)) != len(rounds):
        return False, None, None, "a round was measured more than once"
    steady_round = first_steady_round({"series": points})
    if steady_round is not None:
        values = dict(points)
        window = list(range(steady_round - WINDOW_ROUNDS + 1, steady_round + 1))
        return True, steady_round, evaluate_window(window, [values[r] for r in window]).to_dict(), ""
    if len(points) < WINDOW_ROUNDS:
        return False, None, None, f"only {len(points)} round(s); a window needs {WINDOW_ROUNDS}"
    try:
        verdict = latest_window(points)
    except ValueError as exc:  # rounds not consecutive
        return False, None, None, str(exc)
    return False, None, verdict.to_dict() if verdict else None, f"not steady in {len(points)} rounds"
