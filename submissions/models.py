"""Contributors' credentials (API tokens, signing keys) and the bundles they submit."""

import uuid

from django.conf import settings
from django.db import models

from nvmedb.json_field import JSONField
from submissions.faults import LAST_ERROR_CHARS


class ApiToken(models.Model):
    """A bearer token for the API. Only its SHA-256 is stored; the token itself is shown once, at creation."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, help_text="The first characters of the token, to recognise it.")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token, hex.")
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name or 'unnamed'})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class SigningKey(models.Model):
    """An Ed25519 public key a contributor signs bundles with."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="signing_keys")
    public_key = models.BinaryField(max_length=32)
    # Unique across accounts and kept when revoked: a public key stays bound to the first account that registered it,
    # so nobody can later claim the bundles it signed.
    fingerprint = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=100, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return self.fingerprint

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class SubmissionStatus(models.TextChoices):
    RECEIVED = "received"
    VALIDATING = "validating"
    INGESTING = "ingesting"
    PUBLISHED = "published"
    HELD = "held"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"


# Once here, a worker never touches the submission again.
FINAL_STATUSES = frozenset(
    {SubmissionStatus.PUBLISHED, SubmissionStatus.HELD, SubmissionStatus.REJECTED, SubmissionStatus.WITHDRAWN}
)


class Submission(models.Model):
    """One uploaded bundle. Rows are never deleted: a withdrawn submission stays as a tombstone that keeps its id."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    uploader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="submissions")
    sha256 = models.CharField(max_length=64, db_index=True)
    size = models.BigIntegerField(help_text="Bytes as uploaded (compressed).")
    storage_name = models.CharField(max_length=255, help_text="Name of the bundle in the default storage.")
    original_name = models.CharField(max_length=255, blank=True)
    status = models.CharField(max_length=16, choices=SubmissionStatus.choices, default=SubmissionStatus.RECEIVED)
    report = JSONField(default=dict, blank=True)
    signing_key = models.ForeignKey(SigningKey, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    attempts = models.PositiveIntegerField(default=0, help_text="How many times a worker started validating it.")
    created = models.DateTimeField(auto_now_add=True)
    status_changed = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    hidden = models.BooleanField(default=False, help_text="Hidden by staff: not shown to anyone but its owner.")
    moderation_reason = models.TextField(blank=True)
    last_error = models.CharField(
        max_length=LAST_ERROR_CHARS,
        blank=True,
        help_text="The machine fault (type and message, without the server's paths or hosts) that stopped its latest "
        "failed validation attempt; kept when it is held after too many attempts.",
    )

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["status", "status_changed"])]
        # Per uploader: a stranger who sends someone's bundle first must not block the owner's own upload.
        constraints = [models.UniqueConstraint(fields=["uploader", "sha256"], name="submission_once_per_uploader")]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES


class SubmissionEvent(models.Model):
    """Every status change of a submission, so its owner (and tests) can see exactly what happened and when."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(auto_now_add=True)
    from_status = models.CharField(max_length=16, blank=True)
    to_status = models.CharField(max_length=16)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.submission_id}: {self.from_status or '-'} -> {self.to_status}"


class FioOutputFingerprint(models.Model):
    """A digest of one fio output of a submission, so content published by one contributor cannot be published again
    under another account (submissions.content). `kind` is "bytes" (SHA-256 of the file) or "measurements" (SHA-256
    of its measured statistics, which survives re-formatting and scrubbing of the public copy)."""

    # its index is the unique constraint's, which starts with it
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="fio_fingerprints", db_index=False
    )
    kind = models.CharField(max_length=16)
    digest = models.CharField(max_length=64)
    path = models.CharField(max_length=1024, help_text="The fio output's path inside the bundle's files/.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "kind", "digest"], name="fingerprint_once_per_submission")
        ]
        # looked up by equality only: a plain index, not db_index's second (LIKE) one on PostgreSQL, which every
        # bundle's hundreds of inserted rows would also update
        indexes = [models.Index(fields=["digest"], name="fingerprint_digest")]

    def __str__(self) -> str:
        return f"{self.kind}:{self.digest[:12]} of {self.submission_id}"


class MeasurementSignature(models.Model):
    """What one fio output of a submission measured in one direction, rounded: IOPS, bandwidth, bytes, runtime and
    latency figures (submissions.content.signature_values). Two signatures match when every figure agrees within
    NEAR_TOLERANCE, which a re-signed copy with a few edits does and two real runs never do. `iops` and
    `max_latency_ns` (two of the figures) are indexed with the direction, so the candidates for a match are read by
    one index range per signature, the IOPS and largest latency within the tolerance of its own
    (content.agreeing_range), and then compared figure by figure."""

    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="measurement_signatures", db_index=False
    )  # as FioOutputFingerprint's
    path = models.CharField(max_length=1024, help_text="The fio output's path inside the bundle's files/.")
    direction = models.CharField(max_length=8)
    iops = models.FloatField(help_text="The direction's IOPS: the second of `values`, indexed for range lookups.")
    max_latency_ns = models.FloatField(
        null=True, help_text="The direction's largest total latency, the seventh of `values`; null where it has none."
    )
    values = JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "path", "direction"], name="signature_once_per_output")
        ]
        indexes = [models.Index(fields=["direction", "iops", "max_latency_ns"], name="signature_iops_latency")]

    def __str__(self) -> str:
        return f"{self.direction} {self.iops:g} IOPS of {self.submission_id}"


class DataLicenseAcceptance(models.Model):
    """A contributor accepted that the data they upload is published under the data licence (CC BY 4.0), when and
    where: the sign-up form or `nvmedb-client login`. One row per acceptance: the history is kept."""

    class Via(models.TextChoices):
        SIGNUP = "signup", "sign-up form"
        CLIENT = "client", "nvmedb-client login"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="license_acceptances")
    license = models.CharField(max_length=32, help_text="SPDX id of the accepted licence, e.g. CC-BY-4.0.")
    via = models.CharField(max_length=16, choices=Via.choices)
    accepted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-accepted_at"]

    def __str__(self) -> str:
        return f"{self.user_id} accepted {self.license} via {self.via} at {self.accepted_at:%Y-%m-%d %H:%M}"


class ModerationAction(models.TextChoices):
    APPROVE = "approve"
    REJECT = "reject"
    HIDE = "hide"
    WITHDRAW = "withdraw"


class ModerationDecision(models.Model):
    """The moderation log: who decided what about a submission, and why. Append-only: a decision is never changed or
    deleted, so what approval cleared from the dataset (held and outlier flags) stays on record here."""

    submission = models.ForeignKey(Submission, on_delete=models.PROTECT, related_name="moderation_decisions")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Staff (or the owner withdrawing); empty when the pipeline decided, or the account is gone.",
    )
    decided_by_name = models.CharField(max_length=150, blank=True, help_text="The account's name when it decided.")
    action = models.CharField(max_length=16, choices=ModerationAction.choices)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.submission_id}: {self.action} by {self.decided_by_name or 'the pipeline'}"

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise ValueError("The moderation log is append-only: a decision is never changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("The moderation log is append-only: a decision is never deleted.")
