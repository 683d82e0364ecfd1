"""Contributor-proposed drive metadata: signed-in users propose with a source, staff approve in the admin."""

from __future__ import annotations

import pytest

from analysis.models import DriveMetadataProposal, ProposalStatus
from browse import metadata

pytestmark = pytest.mark.django_db

PROPOSAL = {"controller": "Phison E18", "nand_type": "Micron 176L TLC", "dram": "1 GB DDR4", "form_factor": "",
            "source_url": "https://example.org/teardown", "note": ""}  # fmt: skip


def test_anonymous_readers_cannot_propose(client, browse_drive):
    response = client.post("/drives/acme-990-1tb/metadata/", PROPOSAL)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not DriveMetadataProposal.objects.exists()
    assert "Log in</a> to propose" in client.get("/drives/acme-990-1tb/").content.decode()


def test_a_proposal_waits_for_staff_and_then_fills_the_drive(client, admin_client, browse_drive, django_user_model):
    user = django_user_model.objects.create_user("proposer", password="x" * 12)
    client.force_login(user)
    assert 'name="source_url"' in client.get("/drives/acme-990-1tb/").content.decode()
    response = client.post("/drives/acme-990-1tb/metadata/", PROPOSAL)
    assert response.status_code == 302
    proposal = DriveMetadataProposal.objects.get()
    assert proposal.status == ProposalStatus.PENDING and proposal.proposer == user
    browse_drive.refresh_from_db()
    assert browse_drive.controller == ""  # nothing shows before review
    assert "Phison E18" not in client.get("/drives/acme-990-1tb/").content.decode()

    response = admin_client.post(
        "/admin/analysis/drivemetadataproposal/",
        {"action": "approve_proposals", "_selected_action": [proposal.pk]},
    )
    assert response.status_code == 302
    browse_drive.refresh_from_db()
    proposal.refresh_from_db()
    assert (browse_drive.controller, browse_drive.nand_type, browse_drive.dram) == (
        "Phison E18",
        "Micron 176L TLC",
        "1 GB DDR4",
    )
    assert browse_drive.form_factor == "M.2 2280"  # a blank proposal field leaves the value alone
    assert proposal.status == ProposalStatus.APPROVED and proposal.reviewer.is_staff
    assert "Phison E18" in client.get("/drives/acme-990-1tb/").content.decode()
    with pytest.raises(metadata.AlreadyReviewed):
        metadata.proposal_reject(proposal=proposal, reviewer=proposal.reviewer)


@pytest.mark.parametrize(
    "change",
    [{"source_url": ""}, {"source_url": "javascript:alert(1)"}, {"source_url": "ftp://x.org/a"},
     {"controller": "", "nand_type": "", "dram": ""}],
)  # fmt: skip
def test_a_proposal_without_a_source_or_values_is_refused_with_a_message(
    client, browse_drive, django_user_model, change
):
    client.force_login(django_user_model.objects.create_user("p2", password="x" * 12))
    response = client.post("/drives/acme-990-1tb/metadata/", {**PROPOSAL, **change})
    assert response.status_code == 400
    assert 'class="error"' in response.content.decode() or "errorlist" in response.content.decode()
    assert not DriveMetadataProposal.objects.exists()


def test_rejecting_leaves_the_drive_alone(admin_user, browse_drive, django_user_model):
    proposal = metadata.proposal_create(
        drive_model=browse_drive,
        proposer=django_user_model.objects.create_user("p3"),
        values={"controller": "Wrong"},
        source_url="https://example.org",
    )
    metadata.proposal_reject(proposal=proposal, reviewer=admin_user, note="source does not say so")
    browse_drive.refresh_from_db()
    assert browse_drive.controller == ""
    with pytest.raises(metadata.NothingProposed):
        metadata.proposal_create(drive_model=browse_drive, proposer=admin_user, values={}, source_url="https://x.org")
