"""The gate on the drive's link itself: lspci describes a link the PCIe specification allows, one an NVMe drive can
have. The figures are then bounded by that link (analysis.plausibility.measurement); a link that is no such link
bounds nothing, so the submission is held with what is wrong with it rather than bounded by numbers nobody can trust.
"""

from __future__ import annotations

from analysis import pcie
from analysis.plausibility.limits import HOLD, GateFailure
from analysis.records import SubmissionRecord

# The widest link of any NVMe drive form factor: an add-in card (CEM x16) or an EDSFF E3 drive on a 2C connector.
# PCIe defines x32, but no NVMe drive carries it; a drive's LnkCap wider than this is held whatever its form factor.
NVME_MAX_WIDTH = 16


def check_link(record: SubmissionRecord) -> list[GateFailure]:
    """On a device target whose lspci lists the drive: every link on its path is one the PCIe specification allows
    (speeds 2.5-64 GT/s, widths x1-x32, negotiated no faster nor wider than capable), and the drive's capability is
    no wider than an NVMe drive can be. Held with the reason: it is evidence of an edited or broken lspci, but a
    reviewer can see a genuine oddity (an lspci too old to name the link's speed, a tunnelled USB4 link)."""
    link = record.link
    if record.target_kind != "device" or link is None:
        return []
    failures = [
        GateFailure("pcie_link", HOLD, f"{problem}: no link the PCIe specification allows") for problem in link.problems
    ]
    device = link.device
    if device.valid and device.capable_width > NVME_MAX_WIDTH:
        failures.append(
            GateFailure(
                "pcie_link",
                HOLD,
                f"the drive's link ({device.address or 'the NVMe controller'}): LnkCap "
                f"{pcie.describe(device.capable_speed_gts, device.capable_width)} is wider than any NVMe drive's form "
                f"factor carries (x{NVME_MAX_WIDTH}: an add-in card or an E3 drive)",
            )
        )
    return failures
