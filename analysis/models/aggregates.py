"""Per drive model and factor level, the spread of each headline metric across physical units (recomputed after
ingest): each unit's runs count once, as their median, and a run with no unit id is its own unit."""

from django.db import models

from analysis.models.hardware import DriveModel


class HeadlineMetric(models.TextChoices):
    RANDOM_READ_4K_IOPS = "iops_4k_read", "4 KiB random read IOPS"
    RANDOM_WRITE_4K_IOPS = "iops_4k_write", "4 KiB random write IOPS"
    MIXED_64K_IOPS = "iops_64k_65_35", "64 KiB random 65/35 IOPS"
    SEQ_READ_1M_BW = "bw_1m_read", "1024 KiB sequential read, bytes/s"
    SEQ_WRITE_1M_BW = "bw_1m_write", "1024 KiB sequential write, bytes/s"
    LAT_4K_MEAN = "lat_4k_mean", "4 KiB write latency mean, ns"
    LAT_4K_P9999 = "lat_4k_p9999", "4 KiB write latency 99.99%, ns"


class Factor(models.TextChoices):
    ALL = "all", "All runs"
    FIRMWARE = "firmware", "Firmware"
    PCIE_GENERATION = "pcie_generation", "PCIe generation"
    PCIE_WIDTH = "pcie_width", "PCIe width"
    EDITION = "edition", "Edition"


class DriveModelAggregate(models.Model):
    drive_model = models.ForeignKey(DriveModel, on_delete=models.CASCADE, related_name="aggregates")
    metric = models.CharField(max_length=32, choices=HeadlineMetric.choices)
    factor = models.CharField(max_length=32, choices=Factor.choices, default=Factor.ALL)
    level = models.CharField(max_length=64, blank=True, help_text="The factor's value, e.g. 'Gen4' or a firmware.")
    median = models.FloatField()
    q1 = models.FloatField()
    q3 = models.FloatField()
    iqr = models.FloatField()
    n_runs = models.PositiveIntegerField()
    n_units = models.PositiveIntegerField()
    n_contributors = models.PositiveIntegerField(
        default=0, help_text="Distinct uploader accounts behind the runs; one alone leaves the figure unconfirmed."
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["drive_model", "metric", "factor", "level"]
        constraints = [
            models.UniqueConstraint(
                fields=["drive_model", "metric", "factor", "level"], name="aggregate_once_per_level"
            )
        ]

    def __str__(self) -> str:
        return f"{self.drive_model_id} {self.metric} {self.factor}={self.level}: {self.median}"

    @property
    def unconfirmed(self) -> bool:
        """Backed by a single contributor: one account's bundles cannot prove their hardware to anyone else."""
        return self.n_contributors <= 1
