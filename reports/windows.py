"""The measurement window the charts read of a run's rows: per cell, the rounds of its steady window (else its last
rounds), and their mean. The IOPS, TP, LAT and WSAT-workload charts and the compare page share this one rule."""

from __future__ import annotations

from collections import defaultdict

from nvmedb_client.steady_state import WINDOW_ROUNDS


def window_cells(rows: list[dict]) -> dict[tuple[str, int, int], list[dict]]:
    """(phase, block size, read %) -> the rows of the measurement window (the steady window, else the last rounds)."""
    cells: dict[tuple[str, int, int], list[dict]] = defaultdict(list)
    for row in rows:
        cells[(row["round__phase"], row["block_size_bytes"], row["read_pct"])].append(row)
    chosen = {}
    for key, cell in cells.items():
        cell.sort(key=lambda r: r["round__number"])
        chosen[key] = [r for r in cell if r["in_steady_window"]] or cell[-WINDOW_ROUNDS:]
    return chosen


def window_mean(rows: list[dict], column: str) -> float | None:
    values = [r[column] for r in rows if r[column] is not None]
    return sum(values) / len(values) if values else None
