"""What was measured: vendors, drive models, firmware, physical units, hosts and the PCIe link between them."""

from django.db import models

from nvmedb.json_field import JSONField


class Vendor(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    pci_vendor_id = models.PositiveIntegerField(null=True, blank=True, unique=True, help_text="PCI-SIG vendor id.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Interface(models.TextChoices):
    NVME = "nvme", "NVMe"
    SATA = "sata", "SATA"
    SAS = "sas", "SAS"
    UNKNOWN = "unknown", "Unknown"


class DriveModel(models.Model):
    """One product at one capacity: capacity variants are distinct models (a 500 GB and a 1 TB drive differ)."""

    vendor = models.ForeignKey(Vendor, on_delete=models.PROTECT, related_name="drive_models")
    name = models.CharField(max_length=200, help_text="Canonical model string, e.g. 'Samsung SSD 970 EVO Plus 500GB'.")
    model_number = models.CharField(max_length=100, blank=True, help_text="id-ctrl mn, padding trimmed.")
    slug = models.SlugField(max_length=220, unique=True)
    capacity_bytes = models.BigIntegerField(null=True, blank=True, help_text="Raw capacity (id-ctrl tnvmcap).")
    interface = models.CharField(max_length=16, choices=Interface.choices, default=Interface.UNKNOWN)
    form_factor = models.CharField(max_length=50, blank=True)
    controller = models.CharField(max_length=100, blank=True)
    nand_type = models.CharField(max_length=100, blank=True)
    dram = models.CharField(max_length=100, blank=True)
    # the vendor's spec-sheet figures, contributed with a source and approved by staff (browse.metadata)
    spec_seq_read_bytes_per_s = models.FloatField(null=True, blank=True, help_text="Spec sheet: sequential read.")
    spec_seq_write_bytes_per_s = models.FloatField(null=True, blank=True, help_text="Spec sheet: sequential write.")
    spec_rand_read_iops = models.FloatField(null=True, blank=True, help_text="Spec sheet: 4 KiB random read IOPS.")
    spec_rand_write_iops = models.FloatField(null=True, blank=True, help_text="Spec sheet: 4 KiB random write IOPS.")
    spec_source_url = models.URLField(max_length=500, blank=True, help_text="Where the spec-sheet figures come from.")
    created = models.DateTimeField(auto_now_add=True)
    # bumped in every transaction that changes the drive's public data (analysis.drive_changes): the page summary
    # records which version it was built from, so a page knows how far it lags behind
    data_version = models.PositiveBigIntegerField(default=0, editable=False)
    data_changed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # the data_version the stored factor fit read (analysis.factor_effects): a refit queued by a change an earlier
    # refit already read has nothing to do, so a burst of uploads of one drive costs one fit, not one each
    factors_version = models.PositiveBigIntegerField(null=True, blank=True, editable=False)  # None: never fitted

    class Meta:
        ordering = ["vendor__name", "name"]
        constraints = [
            models.UniqueConstraint(fields=["vendor", "model_number", "capacity_bytes"], name="drive_model_identity"),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        # data_version is only ever raised, by one UPDATE under the drive's row lock (analysis.drive_changes): saving
        # an instance loaded before a change (staff editing its metadata) must not write an older version back
        if not self._state.adding and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [
                f.name for f in self._meta.concrete_fields if not f.primary_key and f.name not in CHANGE_FIELDS
            ]
        super().save(*args, **kwargs)


CHANGE_FIELDS = ("data_version", "data_changed_at", "factors_version")


class Firmware(models.Model):
    drive_model = models.ForeignKey(DriveModel, on_delete=models.CASCADE, related_name="firmwares")
    revision = models.CharField(max_length=64)

    class Meta:
        ordering = ["drive_model", "revision"]
        constraints = [models.UniqueConstraint(fields=["drive_model", "revision"], name="firmware_once_per_model")]

    def __str__(self) -> str:
        return self.revision


class PhysicalUnit(models.Model):
    """One physical drive, recognised across submissions by a keyed hash of its serial; the serial is never stored."""

    drive_model = models.ForeignKey(DriveModel, on_delete=models.CASCADE, related_name="units")
    serial_hash = models.CharField(max_length=64, help_text="HMAC-SHA256 of the serial with the server's key, hex.")
    first_seen = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["drive_model", "serial_hash"], name="unit_once_per_model")]

    def __str__(self) -> str:
        return self.serial_hash[:12]


class Host(models.Model):
    """The machine a run was made on. Identical descriptions share one row (keyed by `fingerprint`)."""

    fingerprint = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the normalised description.")
    cpu_model = models.CharField(max_length=200, blank=True)
    cpu_count = models.PositiveIntegerField(null=True, blank=True)
    memory_bytes = models.BigIntegerField(null=True, blank=True)
    board_vendor = models.CharField(max_length=200, blank=True)
    board_name = models.CharField(max_length=200, blank=True)
    os_name = models.CharField(max_length=200, blank=True)
    kernel = models.CharField(max_length=200, blank=True)
    architecture = models.CharField(max_length=32, blank=True)
    missing = JSONField(default=dict, blank=True, help_text="Field name -> why it is unknown.")

    def __str__(self) -> str:
        return " / ".join(part for part in (self.cpu_model, self.kernel) if part) or self.fingerprint[:12]


class PcieLink(models.Model):
    """The drive's link as negotiated and as capable, and the narrowest link on its path to the root complex."""

    pci_address = models.CharField(max_length=32, blank=True)
    capable_speed_gts = models.FloatField(null=True, blank=True, help_text="LnkCap speed, GT/s.")
    capable_width = models.PositiveSmallIntegerField(null=True, blank=True)
    speed_gts = models.FloatField(null=True, blank=True, help_text="LnkSta (negotiated) speed, GT/s.")
    width = models.PositiveSmallIntegerField(null=True, blank=True)
    generation = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Of the negotiated speed.")
    status_note = models.CharField(max_length=32, blank=True, help_text="lspci's marker: downgraded, ok, overdriven.")
    max_payload_bytes = models.PositiveIntegerField(null=True, blank=True)
    max_read_request_bytes = models.PositiveIntegerField(null=True, blank=True)
    path_speed_gts = models.FloatField(null=True, blank=True, help_text="Narrowest link on the path: speed.")
    path_width = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Narrowest link on the path: width.")
    raw_bandwidth_bytes_per_s = models.FloatField(null=True, blank=True, help_text="After line encoding only.")
    usable_bandwidth_bytes_per_s = models.FloatField(
        null=True, blank=True, help_text="After line encoding and TLP overhead at the negotiated MaxPayload."
    )
    below_capability = models.BooleanField(null=True, blank=True)
    source_file = models.CharField(max_length=500, blank=True, help_text="Raw lspci output it was read from.")
    missing = JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        if self.speed_gts is None or self.width is None:
            return "PCIe link (unknown)"
        return f"PCIe Gen{self.generation} x{self.width}"
