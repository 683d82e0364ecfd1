"""The headline metrics: the few numbers a drive page, the drive list and the aggregates lead with.

Each is the mean over the PTS measurement window (the five rounds ending at the steady round) of one cell of one test;
when steady state was not reached, over the last five rounds measured (the run carries the steady_state_not_reached
flag). Latency is the PTS latency test's tracking cell, 4 KiB 100 % random writes at QD1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from analysis.records import MeasurementRecord
from nvmedb_client.steady_state import WINDOW_ROUNDS

KIB = 1024


@dataclass(frozen=True)
class Headline:
    key: str
    label: str
    test: str
    phase: str
    block_size_bytes: int
    read_pct: int
    column: str  # Measurement field
    unit: str
    higher_is_better: bool = True


HEADLINES: tuple[Headline, ...] = (
    Headline("iops_4k_read", "4 KiB random read", "iops", "wdpc", 4 * KIB, 100, "total_iops", "IOPS"),
    Headline("iops_4k_write", "4 KiB random write", "iops", "wdpc", 4 * KIB, 0, "total_iops", "IOPS"),
    Headline("iops_64k_65_35", "64 KiB random 65/35", "iops", "wdpc", 64 * KIB, 65, "total_iops", "IOPS"),
    Headline(
        "bw_1m_read", "1024 KiB sequential read", "tp", "tp-read", 1024 * KIB, 100, "read_bw_bytes_per_s", "bytes/s"
    ),
    Headline(
        "bw_1m_write", "1024 KiB sequential write", "tp", "tp-write", 1024 * KIB, 0, "write_bw_bytes_per_s", "bytes/s"
    ),
    Headline("lat_4k_mean", "4 KiB write latency, mean", "lat", "wdpc", 4 * KIB, 0, "lat_mean_ns", "ns", False),
    Headline("lat_4k_p9999", "4 KiB write latency, 99.99%", "lat", "wdpc", 4 * KIB, 0, "lat_p9999_ns", "ns", False),
)
BY_KEY = {h.key: h for h in HEADLINES}


STEADY_WINDOW_MEAN = "steady-state window mean"
LAST_ROUNDS_MEAN = f"mean of the last {WINDOW_ROUNDS} rounds, not steady"


def window_label(n_steady: int, n_runs: int) -> str:
    """What a value over `n_runs` runs is, `n_steady` of them steady: only steady windows earn "steady-state"."""
    if n_runs and n_steady == n_runs:
        return STEADY_WINDOW_MEAN
    if not n_steady:
        return LAST_ROUNDS_MEAN
    return f"{n_steady} of {n_runs} runs steady (window mean); the others the {LAST_ROUNDS_MEAN}"


def measurement_value(m: MeasurementRecord, column: str) -> float | None:
    if m.summary is None:
        return None
    if column == "lat_p9999_ns":
        return worst_percentile(m.summary.percentiles_ns, "99.990000")
    if column == "lat_p99_ns":
        return worst_percentile(m.summary.percentiles_ns, "99.000000")
    value = getattr(m.summary, column, None)
    return float(value) if value is not None else None


def worst_percentile(percentiles_ns: dict, key: str) -> float | None:
    values = [float(d[key]) for d in (percentiles_ns or {}).values() if isinstance(d, dict) and key in d]
    return max(values) if values else None


def headline_values(test: str, measurements: Sequence[MeasurementRecord]) -> dict[str, float]:
    values = {}
    for headline in HEADLINES:
        if headline.test != test:
            continue
        cells = [
            m
            for m in measurements
            if m.phase == headline.phase
            and m.block_size_bytes == headline.block_size_bytes
            and m.read_pct == headline.read_pct
        ]
        value = window_mean(cells, headline.column)
        if value is not None:
            values[headline.key] = value
    return values


def window_mean(cells: Iterable[MeasurementRecord], column: str) -> float | None:
    cells = sorted(cells, key=lambda m: m.round_number)
    chosen = [m for m in cells if m.in_steady_window] or cells[-WINDOW_ROUNDS:]
    numbers = [v for v in (measurement_value(m, column) for m in chosen) if v is not None]
    return sum(numbers) / len(numbers) if numbers else None
