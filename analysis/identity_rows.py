"""Who a stored submission is about: its vendor, drive model, firmware and physical unit rows (found, or created
the first time), and what the site already knows of the links that drive model can have."""

from __future__ import annotations

from django.conf import settings
from django.utils.text import slugify

from analysis import pcie, plausibility
from analysis.identity import PCI_VENDORS, drive_slug, serial_hash
from analysis.models import DriveModel, Firmware, PhysicalUnit, TestRun, Vendor
from analysis.records import SubmissionRecord
from analysis.run_status import PUBLISHED
from analysis.selectors import trial_q
from submissions.review import established_uploader_ids


def identity_rows(record: SubmissionRecord) -> tuple[DriveModel, Firmware | None, PhysicalUnit | None]:
    identity = record.identity
    # nearly always a drive already known: found with its vendor in one query (a vendor's name is unique)
    drive_model = (
        DriveModel.objects.select_related("vendor")
        .filter(
            vendor__name=identity.vendor, model_number=identity.model_number, capacity_bytes=identity.capacity_bytes
        )
        .first()
    )
    if drive_model is None:
        drive_model = _new_drive_model(record)
    # metadata no command reports (NAND type...) fills blanks only: staff-reviewed edits are never overwritten
    blanks = {k: v for k, v in record.drive_metadata.items() if v and not getattr(drive_model, k, "x")}
    if blanks:
        for key, value in blanks.items():
            setattr(drive_model, key, value)
        drive_model.save(update_fields=list(blanks))
    firmware = None
    if identity.firmware:
        firmware, _ = Firmware.objects.get_or_create(drive_model=drive_model, revision=identity.firmware)
    unit = None
    if identity.serial:
        digest = serial_hash(identity.serial, key=settings.NVMEDB_SERIAL_HASH_KEY, model_number=identity.model_number)
        unit, _ = PhysicalUnit.objects.get_or_create(drive_model=drive_model, serial_hash=digest)
    return drive_model, firmware, unit


def _new_drive_model(record: SubmissionRecord) -> DriveModel:
    """The drive model of `record`'s identity the first time it is seen (its vendor too, if new); the one another
    ingest created meanwhile otherwise."""
    identity = record.identity
    vendor = Vendor.objects.filter(name=identity.vendor).first()
    if vendor is None:
        pci_id = identity.pci_vendor_id
        # the id belongs to the brand only when it names it (a Seagate drive may carry Phison's controller id)
        if PCI_VENDORS.get(pci_id) != identity.vendor or Vendor.objects.filter(pci_vendor_id=pci_id).exists():
            pci_id = None
        vendor, _ = Vendor.objects.get_or_create(
            name=identity.vendor,
            defaults={"slug": unique_slug(Vendor, slugify(identity.vendor)), "pci_vendor_id": pci_id},
        )
    drive_model, _ = DriveModel.objects.get_or_create(
        vendor=vendor,
        model_number=identity.model_number,
        capacity_bytes=identity.capacity_bytes,
        defaults={
            "name": identity.name,
            "slug": unique_slug(DriveModel, drive_slug(identity.name, identity.capacity_bytes)),
            "interface": record.interface,
        },
    )
    return drive_model


def model_link_evidence(drive_model: DriveModel, submission) -> plausibility.ModelLinkEvidence:
    """What the site knows of the links `drive_model` can have: its recorded form factor, and the fastest and widest
    valid LnkCap of its published, public units, counted as the outlier votes are (other contributors past review
    only, so fresh accounts cannot widen the bound for a later submission)."""
    rows = list(
        TestRun.objects.exclude(trial_q())
        .filter(
            drive_model=drive_model,
            submission__status=PUBLISHED,
            submission__hidden=False,
            pcie_link__capable_speed_gts__in=list(pcie.GENERATION_BY_SPEED_GTS),
            pcie_link__capable_width__in=[w for w in pcie.SPEC_WIDTHS if w <= plausibility.NVME_MAX_WIDTH],
        )
        .exclude(submission_id=submission.pk)
        .exclude(submission__uploader_id=submission.uploader_id)
        .values_list("submission__uploader_id", "unit_id", "pcie_link__capable_speed_gts", "pcie_link__capable_width")
        .order_by()  # no ordering: it would add the submission's time to the DISTINCT, a row per run
        .distinct()
    )
    established = established_uploader_ids({row[0] for row in rows})
    peers = [row for row in rows if row[0] in established]
    return plausibility.ModelLinkEvidence(
        form_factor=drive_model.form_factor,
        peer_units=len({(uploader, unit) for uploader, unit, _, _ in peers}),
        peer_speed_gts=max((speed for _, _, speed, _ in peers), default=None),
        peer_width=max((width for _, _, _, width in peers), default=None),
    )


def unique_slug(model, base: str) -> str:
    base = base or "unknown"
    slug, counter = base, 2
    while model.objects.filter(slug=slug).exists():
        slug, counter = f"{base}-{counter}", counter + 1
    return slug
