"""Demand Intensity / Response Time Histogram (DIRTH) of the SNIA PTS v2.0.2: an OLTP-like stimulus (random 8 KiB,
65 % reads) swept over TC x QD, its three operating points and the response-time histogram at each (from fio's json+
latency bins). The stimulus is the test operator's choice in the spec; this is the ADATA PTS 2.0 port's default."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

KIB = 1024
BLOCK_SIZE = 8 * KIB
READ_PCT = 65
# MaxIOPS and MidIOPS are chosen among the cells whose mean response time is below this ceiling (as the ADATA port)
RESPONSE_TIME_CEILING_NS = 5_000_000
OPERATING_POINTS = ("max", "mid", "min")
MIN_POINT = (1, 1)  # MinIOPS: TC 1, QD 1, the lowest demand intensity

# Histogram buckets: the R10 preferred numbers from 100 ns to 100 s, in integer ns so a bin value on an edge is
# compared exactly. A bucket holds [lower, upper); the first starts at 0, the last is open (upper None).
_R10 = (100, 125, 160, 200, 250, 315, 400, 500, 630, 800)
HISTOGRAM_EDGES_NS = tuple(step * 10**decade for decade in range(9) for step in _R10) + (100 * 10**9,)


def _order(point: Mapping) -> tuple:
    """Ties go to the lower demand intensity: fewer outstanding I/Os, then fewer threads."""
    return (point["threads"] * point["iodepth"], point["threads"])


def operating_points(points: Sequence[Mapping]) -> list[dict]:
    """MaxIOPS (highest IOPS), MinIOPS (TC 1/QD 1) and MidIOPS (IOPS nearest the middle of the two) among the
    measured points of the curve, Max and Mid only among those whose mean response time is below the ceiling; each
    missing one says why."""
    measured = [p for p in points if p.get("iops") is not None]
    if not measured:
        reason = "no TC x QD cell of the round has a measurement"
        return [{"name": name, "missing": reason} for name in OPERATING_POINTS]
    low = next((p for p in measured if (p["threads"], p["iodepth"]) == MIN_POINT), None)
    within = [p for p in measured if p.get("lat_mean_ns") is not None and p["lat_mean_ns"] < RESPONSE_TIME_CEILING_NS]
    best = max(within, key=lambda p: (p["iops"], tuple(-x for x in _order(p))), default=None)
    chosen: dict[str, Mapping | None] = {"max": best, "min": low, "mid": None}
    if low is not None and best is not None:
        target = (best["iops"] + low["iops"]) / 2
        chosen["mid"] = min(within, key=lambda p: (abs(p["iops"] - target), _order(p)))
    ceiling = f"no cell has a mean response time below {RESPONSE_TIME_CEILING_NS / 1e6:g} ms"
    why_missing = {
        "max": ceiling,
        "min": "the TC 1/QD 1 cell (MinIOPS) has no measurement",
        "mid": "the TC 1/QD 1 cell (MinIOPS) has no measurement" if low is None else ceiling,
    }
    result = []
    for name in OPERATING_POINTS:
        point = chosen[name]
        if point is None:
            result.append({"name": name, "missing": why_missing[name]})
            continue
        result.append(
            {
                "name": name,
                "threads": point["threads"],
                "iodepth": point["iodepth"],
                "iops": point["iops"],
                "run_id": point["run_id"],
            }
        )
    return result


def histogram(bins: Mapping[int, int]) -> list[list]:
    """fio's latency bins (value in ns -> I/O count) summed into the fixed buckets: [lower_ns, upper_ns, count] for
    every bucket that holds an I/O, in order."""
    counts: dict[int, int] = {}
    for value, count in bins.items():
        index = _bucket(value)
        counts[index] = counts.get(index, 0) + count
    rows = []
    for index in sorted(counts):
        if counts[index] == 0:
            continue
        lower = 0 if index == 0 else HISTOGRAM_EDGES_NS[index - 1]
        upper = HISTOGRAM_EDGES_NS[index] if index < len(HISTOGRAM_EDGES_NS) else None
        rows.append([lower, upper, counts[index]])
    return rows


def _bucket(value: int) -> int:
    low, high = 0, len(HISTOGRAM_EDGES_NS)
    while low < high:  # the number of edges <= value
        middle = (low + high) // 2
        if HISTOGRAM_EDGES_NS[middle] <= value:
            low = middle + 1
        else:
            high = middle
    return low
