"""The gate on the drive's link itself: lspci describes a link the PCIe specification allows, one an NVMe drive can
have. The figures are then bounded by that link (analysis.plausibility.measurement); a link that is no such link
bounds nothing, so the submission is held with what is wrong with it rather than bounded by numbers nobody can trust.

`check_link` reads the bundle alone; `check_model_link` also weighs what the site knows of the drive model (its
recorded form factor, the LnkCap of its published units), which store_submission looks up once it knows the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analysis import pcie
from analysis.plausibility.limits import (
    FASTEST_LINK_GTS,
    HOLD,
    LARGEST_PAYLOAD_BYTES,
    GateFailure,
    LinkBounds,
)
from analysis.plausibility.measurement import check_link_bandwidth, check_link_iops
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


# The widest link each NVMe drive form factor carries, from its connector. M.2 (SFF/PCI-SIG M.2, key M) and M.3/NF1:
# x4 (x2 drives exist); U.2/U.3 (SFF-8639): x4 (x2 per port when dual-ported); EDSFF E1.S/E1.L (SFF-TA-1006/1007,
# 1C connector): up to x8; EDSFF E3.S/E3.L (SFF-TA-1008, 2C connector): up to x16; an add-in card: x16. A form factor
# the drive model does not record, or one not named here, bounds nothing beyond NVME_MAX_WIDTH.
FORM_FACTOR_WIDTHS: tuple[tuple[re.Pattern, int], ...] = (
    (re.compile(r"\b(?:m\.?2|ngff|m\.?3|nf1|bga)\b", re.IGNORECASE), 4),
    (re.compile(r"\b(?:u\.?2|u\.?3|sff-8639)\b", re.IGNORECASE), 4),
    (re.compile(r"\be1\.?[sl]\b", re.IGNORECASE), 8),
    (re.compile(r"\be3(?:\.?[sl])?\b", re.IGNORECASE), 16),
    (re.compile(r"\b(?:aic|add-?in|hhhl|fhhl|fhfl|cem)\b", re.IGNORECASE), 16),
)


def form_factor_width(form_factor: str) -> int | None:
    """The widest link the drive model's recorded form factor ("M.2 2280", "U.2", "E3.S 1T", "HHHL AIC") carries."""
    widths = [width for pattern, width in FORM_FACTOR_WIDTHS if pattern.search(form_factor or "")]
    return max(widths) if widths else None  # a text naming two form factors bounds by the wider


@dataclass(frozen=True)
class ModelLinkEvidence:
    """What the site knows about the links a drive model can have, besides this submission's lspci: its recorded
    form factor (staff-reviewed metadata), and the widest capability (LnkCap) its published units report."""

    form_factor: str = ""
    peer_units: int = 0  # published units of other, established contributors with a valid LnkCap
    peer_speed_gts: float | None = None  # the fastest LnkCap among them
    peer_width: int | None = None  # the widest LnkCap among them

    @property
    def width(self) -> int | None:
        return form_factor_width(self.form_factor)

    def bounds(self) -> LinkBounds | None:
        """The fastest link the drive model can have, when anything is known of it: the widest of its form factor
        and of its published units (each at most x16), at the fastest speed its units report (Gen6 without any)."""
        widths = [w for w in (self.width, self.peer_width if self.peer_units else None) if w]
        if not widths:
            return None
        width = min([*widths, NVME_MAX_WIDTH])
        speed = self.peer_speed_gts if self.peer_units and self.peer_speed_gts else FASTEST_LINK_GTS
        sources = []
        if self.width:
            sources.append(f"its form factor {self.form_factor!r}")
        if self.peer_units:
            sources.append(f"the LnkCap of {self.peer_units} published unit{'s' if self.peer_units > 1 else ''}")
        label = f"a {pcie.describe(speed, width)} link, the fastest this drive model can have ({' and '.join(sources)})"
        return LinkBounds(None, pcie.usable_bandwidth(speed, width, LARGEST_PAYLOAD_BYTES), label)


def check_model_link(record: SubmissionRecord, evidence: ModelLinkEvidence) -> list[GateFailure]:
    """A device's link against what is known of its drive model, held when beyond it: a valid LnkCap no wider than
    the model's form factor and no faster or wider than every published unit of the model reports; without a valid
    link or with one, every figure within the fastest link the model can have (its form factor, its published units:
    figures meet the tighter of that and lspci's link). Held, not
    rejected: the evidence is another row of the site (a form factor a contributor proposed, other units that may
    be another hardware revision under the same model number), not this bundle."""
    if record.target_kind != "device":
        return []
    link = record.link
    device = link.device if link is not None else None
    name = f"the drive's link ({device.address or 'the NVMe controller'}): LnkCap " if device else ""
    failures = []
    if device is not None and device.valid:
        capability = pcie.describe(device.capable_speed_gts, device.capable_width)
        if evidence.width and device.capable_width > evidence.width:
            failures.append(
                GateFailure(
                    "pcie_link",
                    HOLD,
                    f"{name}{capability} is wider than the drive model's form factor {evidence.form_factor!r} "
                    f"carries (x{evidence.width})",
                )
            )
        if evidence.peer_units and (
            device.capable_speed_gts > evidence.peer_speed_gts or device.capable_width > evidence.peer_width
        ):
            failures.append(
                GateFailure(
                    "pcie_link",
                    HOLD,
                    f"{name}{capability} is beyond {pcie.describe(evidence.peer_speed_gts, evidence.peer_width)}, "
                    f"the fastest and widest any of the {evidence.peer_units} published units of this drive model "
                    "reports",
                )
            )
    # the figures against the fastest link the model can have; where lspci's link is the tighter bound, the gates
    # already applied it and this finds nothing more
    bounds = evidence.bounds()
    if bounds is None:
        return failures
    for tr in record.test_runs:
        for m in tr.measurements:
            for failure in check_link_bandwidth(m, bounds) + check_link_iops(m, bounds):
                failures.append(GateFailure(failure.rule, HOLD, failure.reason))
    return failures
