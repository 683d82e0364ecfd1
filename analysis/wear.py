"""The drive's history before a test: how worn it was and how much had been written to it."""

from __future__ import annotations

from dataclasses import dataclass, field

from analysis.values import optional_int

# NVMe smart-log "data units" are thousands of 512-byte units (NVMe Base Specification, SMART / Health log, bytes 32-47).
DATA_UNIT_BYTES = 512 * 1000


@dataclass(frozen=True)
class Wear:
    percentage_used: int | None
    power_on_hours: int | None
    data_written_bytes: int | None
    missing: dict[str, str] = field(default_factory=dict)


def wear_from_smart(smart: dict | None) -> Wear:
    """Read wear from a smart-log already normalised by nvmedb_client.system.nvme.parse_smart_log."""
    if not smart:
        reason = "no smart-log was captured before the test"
        return Wear(None, None, None, {k: reason for k in ("percentage_used", "power_on_hours", "data_written_bytes")})
    missing = {}
    used = optional_int(smart.get("percent_used"))
    hours = optional_int(smart.get("power_on_hours"))
    written = optional_int(smart.get("data_written_bytes"))
    if used is None:
        missing["percentage_used"] = "smart-log has no percentage used"
    if hours is None:
        missing["power_on_hours"] = "smart-log has no power-on hours"
    if written is None:
        missing["data_written_bytes"] = "smart-log has no data units written"
    return Wear(used, hours, written, missing)
