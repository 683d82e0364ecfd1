"""How repeatable a surface is (an nvmedb extension, not a PTS test): the words and plot parts the surface page uses
for the repetitions of its cells. Every figure is the median of a cell's repetitions; the spread is their min-max and
coefficient of variation (CV); a cell above CV_LIMIT is noisy; the 90% point of the medians is compared with each
repetition's own. Works on the dicts `data.load` reads (no query of its own)."""

from __future__ import annotations

from nvmedb_client.pts.surface import MIN_REPEATABLE
from nvmedb_client.pts.surface_repeats import CV_THRESHOLD
from reports import units
from reports.chart_kit import rounded

NOISY_MARK = "*"
NOISY_NOTE = (
    f"{NOISY_MARK} marks a noisy cell: the bandwidth of its repetitions varies by more than "
    f"{CV_THRESHOLD:.0%} (coefficient of variation)."
)


def agreement_clause(pattern: dict) -> str:
    """How many repetitions' own 90% point is the medians' knee, for the answer sentence ('' without a knee)."""
    agreeing, repetitions = pattern["knee_agreeing_repetitions"], pattern["repetitions"]
    if agreeing is None or not pattern["knee_iodepth"]:
        return ""
    if repetitions < 2:
        return " from one repetition (not repeatable)"
    if not pattern["knee_moves"]:
        return f", where all {repetitions} repetitions put it"
    return f"; {agreeing} of {repetitions} repetitions put it there, the knee moves between repetitions"


def run_note(patterns: list[dict]) -> str | None:
    """What the figures are: medians of repeated cells, or one pass that is not repeatable."""
    if not patterns:
        return None
    repetitions = max(p["repetitions"] for p in patterns)
    noisy = sum(p["noisy_cells"] for p in patterns)
    if repetitions < 2:
        return (
            "Every cell ran once: no spread and no agreement between repetitions can be shown (a surface from before "
            f"repeated cells, or a trial with fewer than {MIN_REPEATABLE} repetitions); it is not repeatable."
        )
    text = (
        f"Every cell ran {repetitions} times, interleaved (repetition 1 of every cell of a pattern, then repetition "
        "2, ...); each figure is the median of its repetitions, with their min–max"
    )
    text += f"; {noisy} noisy cell{'s' if noisy != 1 else ''} (CV above {CV_THRESHOLD:.0%})." if noisy else "."
    if not all(p["repeatable"] for p in patterns):
        text += f" Fewer than {MIN_REPEATABLE} repetitions were planned: a trial, not repeatable."
    return text


def marked(text: str, cell: dict) -> str:
    return f"{text}{NOISY_MARK}" if cell.get("noisy") else text


def cv_value(cell: dict) -> float | None:
    return None if cell["bw_cv"] is None else rounded(100 * cell["bw_cv"], 1)


def cv_text(cell: dict) -> str:
    """A cell's CV in %, or why it has none."""
    if cell["bw_cv"] is None:
        return f"{units.MISSING} ({cell['spread_reason'] or 'no spread'})" if cell["n_repetitions"] > 1 else "1 run"
    return marked(f"{units.significant(100 * cell['bw_cv'])}%", cell)


def error_bars(cells: list[dict | None]) -> dict | None:
    """Plotly error_y (MB/s) from each cell's median down to its min and up to its max; None when no cell has both."""
    if not any(c and c["bw_min_bytes_per_s"] is not None for c in cells):
        return None
    up = [_spread(c, "bw_max_bytes_per_s", +1) for c in cells]
    down = [_spread(c, "bw_min_bytes_per_s", -1) for c in cells]
    return {"type": "data", "symmetric": False, "array": up, "arrayminus": down, "thickness": 1, "width": 3}


def _spread(cell: dict | None, key: str, sign: int) -> float | None:
    if not cell or cell[key] is None:
        return None
    return rounded(sign * (cell[key] - cell["bw_bytes_per_s"]) / 1e6, 2)


def hover(cell: dict) -> str:
    """The spread part of a cell's hover text."""
    if cell["bw_min_bytes_per_s"] is None:
        return f"{cell['n_repetitions']} repetition(s), no spread"
    return (
        f"median of {cell['n_repetitions']}, {units.bandwidth(cell['bw_min_bytes_per_s'])}–"
        f"{units.bandwidth(cell['bw_max_bytes_per_s'])}, CV {cv_text(cell)}"
    )
