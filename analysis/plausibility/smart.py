"""Gates on the drive's smart-logs: values a working drive can report, and counters that move no faster than the
link and the wall clock allow, whatever fio's figures say."""

from __future__ import annotations

import math
from collections.abc import Mapping

from analysis.plausibility.limits import (
    CLOCK_SLACK_S,
    HOLD,
    REJECT,
    GateFailure,
    LinkBounds,
    against_link,
    epoch,
    finite,
    fmt,
    show,
    within_link,
)
from analysis.records import SubmissionRecord
from analysis.wear import DATA_UNIT_BYTES

# Composite temperatures a working drive can report: −40 °C (the coldest industrial rating) to 130 °C (past every
# drive's critical shutdown, ~85-90 °C, with room for a sensor reading its hottest component).
MIN_TEMPERATURE_K, MAX_TEMPERATURE_K = 233.15, 403.15

# power_on_hours counts whole hours: each snapshot may be up to one hour behind.
POWER_ON_HOURS_SLACK = 1

SMART_COUNTERS = (
    "data_units_read",
    "data_units_written",
    "host_read_commands",
    "host_write_commands",
    "power_cycles",
    "power_on_hours",
    "unsafe_shutdowns",
    "media_errors",
    "num_err_log_entries",
)

# NVMe SMART fields one byte wide (NVMe Base Specification, SMART / Health Information log).
SMART_BYTE_FIELDS = {"percent_used": 255, "avail_spare": 100, "spare_thresh": 100}


def check_smart_values(smart: Mapping | None, label: str) -> list[GateFailure]:
    """Counters are finite and ≥ 0, one-byte fields within their byte, the composite temperature within what a
    working drive can report (outside it: held, a broken sensor is possible)."""
    if not smart:
        return []
    failures = []
    for key in SMART_COUNTERS:
        value = smart.get(key)
        if value is not None and (not finite(value) or value < 0):
            failures.append(GateFailure("smart_values", REJECT, f"{label}: {key} is {show(value)}"))
    for key, top in SMART_BYTE_FIELDS.items():
        value = smart.get(key)
        if value is not None and (not finite(value) or not 0 <= value <= top):
            failures.append(GateFailure("smart_values", REJECT, f"{label}: {key} is {show(value)}, outside 0-{top}"))
    kelvin = smart.get("temperature_k")
    if kelvin is not None and (not finite(kelvin) or not MIN_TEMPERATURE_K <= kelvin <= MAX_TEMPERATURE_K):
        failures.append(
            GateFailure(
                "smart_values",
                HOLD,
                f"{label}: composite temperature {show(kelvin)} K is outside {MIN_TEMPERATURE_K}-{MAX_TEMPERATURE_K} K",
            )
        )
    return failures


def finite_counters(smart: Mapping) -> dict[str, float | None]:
    """The smart-log's SMART_COUNTERS as floats: None for one that is absent or not a finite number."""
    return {key: float(value) if finite(value := smart.get(key)) else None for key in SMART_COUNTERS}


class SmartLogs:
    """What the gates read of each smart-log, read once per log: its counters (finite_counters) and whether
    check_smart_values finds anything wrong with it. A bundle's logs are each compared two or three times (around
    their run, and with the logs before and after them), and a run's log after is often the next run's log before,
    one parse for both (analysis.bundle_reader). Logs are told apart by identity and held, so their ids stay theirs:
    make one per pass of the gates over a submission (its logs must not change meanwhile)."""

    def __init__(self) -> None:
        self._counters: dict[int, tuple[Mapping, dict[str, float | None]]] = {}
        self._clean: dict[int, tuple[Mapping, bool]] = {}

    def counters(self, smart: Mapping) -> dict[str, float | None]:
        held = self._counters.get(id(smart))
        if held is None:
            held = self._counters[id(smart)] = (smart, finite_counters(smart))
        return held[1]

    def values_failures(self, smart: Mapping | None, label: str) -> list[GateFailure]:
        """check_smart_values(smart, label), worded only for a log it finds something wrong with."""
        if not smart:
            return []
        held = self._clean.get(id(smart))
        if held is not None:
            return [] if held[1] else check_smart_values(smart, label)
        failures = check_smart_values(smart, label)
        self._clean[id(smart)] = (smart, not failures)
        return failures


def _changes(first: dict[str, float | None], last: dict[str, float | None]) -> dict[str, float | None]:
    """Each counter's change from one log's finite_counters to another's: None where either is None."""
    return {
        key: None if (was := first[key]) is None or (now := last[key]) is None else now - was for key in SMART_COUNTERS
    }


def check_smart_progress(
    before: Mapping | None,
    after: Mapping | None,
    *,
    window_s: float | None,
    bounds: LinkBounds,
    label: str,
    logs: SmartLogs | None = None,
) -> list[GateFailure]:
    """Between two snapshots `window_s` apart: no counter goes backwards, the drive's own data-unit counters moved no
    faster than the link carries, and power-on hours advanced no more than the wall clock did. These hold however
    fio's figures and the counters were scaled together, because the wall clock and the link are not scaled.
    `logs` reads each log's counters once for a caller that compares every log several times."""
    if not before or not after:
        return []
    counters = finite_counters if logs is None else logs.counters
    changes = _changes(counters(before), counters(after))
    failures = []
    for key, change in changes.items():
        if change is not None and change < 0:
            failures.append(GateFailure("smart_progress", REJECT, f"{label}: {key} went backwards by {-change:g}"))
    if window_s is None or window_s < 0:
        return failures
    seconds = window_s + 2 * CLOCK_SLACK_S
    for key in ("data_units_read", "data_units_written"):
        change = changes[key]
        if change is None or change <= 0:
            continue
        moved = max(change - 2, 0) * DATA_UNIT_BYTES  # each snapshot rounds up by at most one unit
        rate = moved / seconds
        if not within_link(rate, bounds):  # the reason is worded only for a failure
            what = f"{label}: {key} grew {fmt(moved)} B in {seconds:g} s ({fmt(rate)} B/s)"
            failures += against_link("smart_progress", what, rate, bounds)
    hours = changes["power_on_hours"]
    if hours is not None and hours > math.ceil(seconds / 3600) + POWER_ON_HOURS_SLACK:
        failures.append(
            GateFailure(
                "smart_progress",
                HOLD,
                f"{label}: power_on_hours advanced {hours:g} h in {seconds / 3600:.2f} h of wall clock",
            )
        )
    return failures


def check_power_on_clock(snapshots: list[tuple[object, Mapping]], *, busy_s: float) -> list[GateFailure]:
    """Over the whole bundle, the drive's power-on hours advanced no more than the wall clock between the first and
    the last snapshot, and at least the `busy_s` seconds the runs themselves lasted (the drive was powered while it
    ran; between sessions of a resumed run the host may have been off), give or take an hour at each end."""
    timed = [(epoch(t), s) for t, s in snapshots if epoch(t) is not None and finite(s.get("power_on_hours"))]
    if len(timed) < 2:
        return []
    (first_t, first), (last_t, last) = min(timed, key=lambda p: p[0]), max(timed, key=lambda p: p[0])
    elapsed_h, busy_h = (last_t - first_t) / 3600, max(busy_s, 0.0) / 3600
    advanced = float(last["power_on_hours"]) - float(first["power_on_hours"])
    if busy_h - 2 * POWER_ON_HOURS_SLACK <= advanced <= elapsed_h + 2 * POWER_ON_HOURS_SLACK:
        return []
    return [
        GateFailure(
            "power_on_clock",
            HOLD,
            f"power_on_hours advanced {advanced:g} h while the runs lasted {busy_h:.2f} h within {elapsed_h:.2f} h "
            "of wall clock: the smart-logs and the run timestamps do not describe the same time",
        )
    ]


def check_smart_logs_present(record: SubmissionRecord) -> list[GateFailure]:
    """A client run on a device has a smart-log before and after every fio run: without them the counters that tie
    fio's figures to a real drive cannot be checked, so the submission is held and not compliant."""
    if record.source != "client" or record.target_kind != "device":
        return []
    lacking = [m.run_key for tr in record.test_runs for m in tr.measurements if not (m.smart_before and m.smart_after)]
    if not lacking:
        return []
    shown = ", ".join(lacking[:3]) + (f" and {len(lacking) - 3} more" if len(lacking) > 3 else "")
    return [
        GateFailure(
            "smart_logs_missing",
            HOLD,
            f"device target without a readable smart-log before and after run {shown}: the drive's own counters "
            "cannot confirm fio's figures",
        )
    ]
