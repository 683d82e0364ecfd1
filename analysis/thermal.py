"""Temperature during a run against the drive's own thresholds, and whether it throttled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# smart-log counters that only grow while the drive is too hot or throttling (NVMe Base Specification, SMART log).
# Keys as nvmedb_client.system.nvme.parse_smart_log names them.
THROTTLE_COUNTERS = (
    "warning_temp_time_min",
    "critical_comp_time_min",
    "thm_temp1_trans_count",
    "thm_temp2_trans_count",
    "thm_temp1_total_time_s",
    "thm_temp2_total_time_s",
)


@dataclass(frozen=True)
class ThermalVerdict:
    max_temperature_k: float | None
    throttled: bool
    reason: str


def temperature_k(smart: dict | None) -> float | None:
    """Composite temperature in kelvin from a parsed smart-log."""
    if not smart or smart.get("temperature_k") is None:
        return None
    return float(smart["temperature_k"])


def throttle_increase(before: dict | None, after: dict | None) -> dict[str, float]:
    """The throttle counters that grew between two snapshots, with how much."""
    if not before or not after:
        return {}
    grown = {}
    for key in THROTTLE_COUNTERS:
        try:
            delta = float(after[key]) - float(before[key])
        except (KeyError, TypeError, ValueError):
            continue
        if delta > 0:
            grown[key] = delta
    return grown


def assess(
    snapshots: Sequence[tuple[dict | None, dict | None]],
    *,
    warning_k: float | None,
    critical_k: float | None,
) -> ThermalVerdict:
    """`snapshots` are (before, after) smart-logs for each fio run of one test."""
    temps = [t for pair in snapshots for t in (temperature_k(pair[0]), temperature_k(pair[1])) if t is not None]
    hottest = max(temps) if temps else None
    grown: dict[str, float] = {}
    for before, after in snapshots:
        for key, delta in throttle_increase(before, after).items():
            grown[key] = grown.get(key, 0) + delta
    reasons = []
    if grown:
        reasons.append("throttle counters grew during the run: " + ", ".join(f"{k} +{v:g}" for k, v in grown.items()))
    if hottest is not None and warning_k and hottest >= warning_k:
        limit = "critical" if critical_k and hottest >= critical_k else "warning"
        reasons.append(f"reached {hottest - 273:.0f} °C, at or above the drive's {limit} threshold")
    return ThermalVerdict(hottest, bool(reasons), "; ".join(reasons))
