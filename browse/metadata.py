"""Contributor-proposed drive metadata: proposing, approving (copies the values onto the drive model), rejecting."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from analysis.models import DriveMetadataProposal, DriveModel, ProposalStatus
from analysis.models.metadata import METADATA_FIELDS, SPEC_FIELDS


class NothingProposed(ValueError):
    pass


class AlreadyReviewed(ValueError):
    pass


def proposal_create(
    *, drive_model: DriveModel, proposer: AbstractBaseUser, values: dict, source_url: str, note: str = ""
) -> DriveMetadataProposal:
    """`values`: text for METADATA_FIELDS, non-negative numbers in SI units (bytes/s, IOPS) for SPEC_FIELDS."""
    cleaned: dict = {name: (values.get(name) or "").strip() for name in METADATA_FIELDS}
    for name in SPEC_FIELDS:
        value = values.get(name)
        if value is not None and not (isinstance(value, int | float) and value > 0):
            raise NothingProposed(f"{name} must be a positive number.")
        cleaned[name] = value
    if not any(v for v in cleaned.values()):
        raise NothingProposed("Propose at least one of controller, NAND type, DRAM, form factor or a spec figure.")
    return DriveMetadataProposal.objects.create(
        drive_model=drive_model, proposer=proposer, source_url=source_url, note=note, **cleaned
    )


@transaction.atomic
def proposal_approve(*, proposal: DriveMetadataProposal, reviewer: AbstractBaseUser) -> DriveModel:
    """Copy the proposal's non-blank values onto its drive model; blank fields leave the model's values alone."""
    proposal = DriveMetadataProposal.objects.select_for_update().get(pk=proposal.pk)
    if proposal.status != ProposalStatus.PENDING:
        raise AlreadyReviewed(f"This proposal was already {proposal.status}.")
    drive_model = DriveModel.objects.select_for_update().get(pk=proposal.drive_model_id)
    values = proposal.proposed_values()
    for name, value in values.items():
        setattr(drive_model, name, value)
    if any(name in SPEC_FIELDS for name in values):
        drive_model.spec_source_url = proposal.source_url
        values["spec_source_url"] = proposal.source_url
    drive_model.save(update_fields=list(values))
    _review(proposal, ProposalStatus.APPROVED, reviewer)
    return drive_model


@transaction.atomic
def proposal_reject(*, proposal: DriveMetadataProposal, reviewer: AbstractBaseUser, note: str = "") -> None:
    proposal = DriveMetadataProposal.objects.select_for_update().get(pk=proposal.pk)
    if proposal.status != ProposalStatus.PENDING:
        raise AlreadyReviewed(f"This proposal was already {proposal.status}.")
    _review(proposal, ProposalStatus.REJECTED, reviewer, note)


def _review(proposal: DriveMetadataProposal, status: str, reviewer: AbstractBaseUser, note: str = "") -> None:
    proposal.status = status
    proposal.reviewer = reviewer
    proposal.reviewed_at = timezone.now()
    proposal.review_note = note[:300]
    proposal.save(update_fields=["status", "reviewer", "reviewed_at", "review_note"])
