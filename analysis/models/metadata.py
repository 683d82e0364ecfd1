"""Drive metadata no tool reports (controller, NAND type, DRAM, form factor), proposed by contributors with a source
and applied to the drive model only when a staff member approves it."""

from django.conf import settings
from django.db import models

from analysis.models.hardware import DriveModel

METADATA_FIELDS = ("controller", "nand_type", "dram", "form_factor")
# spec-sheet figures, stored in SI base units (bytes/s, IOPS), each compared with one headline metric
SPEC_FIELDS = {
    "spec_seq_read_bytes_per_s": "bw_1m_read",
    "spec_seq_write_bytes_per_s": "bw_1m_write",
    "spec_rand_read_iops": "iops_4k_read",
    "spec_rand_write_iops": "iops_4k_write",
}


class ProposalStatus(models.TextChoices):
    PENDING = "pending", "Pending review"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class DriveMetadataProposal(models.Model):
    drive_model = models.ForeignKey(DriveModel, on_delete=models.CASCADE, related_name="metadata_proposals")
    proposer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    controller = models.CharField(max_length=100, blank=True)
    nand_type = models.CharField(max_length=100, blank=True)
    dram = models.CharField(max_length=100, blank=True)
    form_factor = models.CharField(max_length=50, blank=True)
    spec_seq_read_bytes_per_s = models.FloatField(null=True, blank=True)
    spec_seq_write_bytes_per_s = models.FloatField(null=True, blank=True)
    spec_rand_read_iops = models.FloatField(null=True, blank=True)
    spec_rand_write_iops = models.FloatField(null=True, blank=True)
    source_url = models.URLField(max_length=500, help_text="Where the values can be checked (datasheet, review).")
    note = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PENDING)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.CharField(max_length=300, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["status", "created"])]

    def __str__(self) -> str:
        return f"{self.drive_model_id}: {self.proposed_values()} ({self.status})"

    def proposed_values(self) -> dict[str, str | float]:
        values: dict[str, str | float] = {name: getattr(self, name) for name in METADATA_FIELDS if getattr(self, name)}
        values.update({name: getattr(self, name) for name in SPEC_FIELDS if getattr(self, name) is not None})
        return values
