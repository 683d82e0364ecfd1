"""Over-provisioning: the share of a drive's raw capacity the host cannot address."""

from __future__ import annotations


def overprovisioning(*, raw_capacity_bytes: int | None, exposed_bytes: int | None) -> tuple[float | None, str]:
    """Return (share of raw capacity not exposed, 0..1) or (None, why it cannot be known).

    Raw capacity is id-ctrl's total NVM capacity (tnvmcap); exposed is the namespace (or target) size. A 1.92 TB drive
    whose namespace was shrunk to 1.6 TB hides 1 - 1.6/1.92 = 16.7 % of its NAND from the host, on top of whatever
    spare area the vendor keeps beyond tnvmcap (which no command reports).
    """
    if not raw_capacity_bytes:
        return None, "the drive reported no total NVM capacity (id-ctrl tnvmcap is 0 or absent)"
    if not exposed_bytes:
        return None, "the namespace size is unknown"
    if exposed_bytes > raw_capacity_bytes:
        return None, f"the namespace ({exposed_bytes} bytes) is larger than the drive's capacity ({raw_capacity_bytes})"
    return 1 - exposed_bytes / raw_capacity_bytes, ""


def spare_vs_user(hidden_share: float | None) -> float | None:
    """Over-provisioning as vendors quote it (hidden ÷ user capacity) from the share of raw capacity hidden."""
    if hidden_share is None or not 0 <= hidden_share < 1:
        return None
    return hidden_share / (1 - hidden_share)
