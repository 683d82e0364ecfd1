"""ECW and DIRTH results beyond the per-cell measurements: the demand-intensity curve of the round it was read
from, DIRTH's operating points and the response-time histogram at each, as the server derived them from the raw
fio outputs (the client's own derivation is kept verbatim as its claim)."""

from django.db import models

from analysis.limits import RUN_KEY_CHARS
from analysis.models.results import TestRun
from nvmedb.json_field import JSONField


class DemandIntensityCurve(models.Model):
    """One ECW or DIRTH test run's demand-intensity result: which round it was read from, and the claim."""

    test_run = models.OneToOneField(TestRun, on_delete=models.CASCADE, related_name="demand_intensity")
    round_number = models.PositiveIntegerField(help_text="The steady round, or the last round when not steady.")
    round_basis = models.CharField(max_length=64)
    claimed = JSONField(null=True, blank=True, help_text="The client's own derivation, verbatim.")
    claim_differs = models.BooleanField(default=False)
    note = models.CharField(max_length=300, blank=True)

    def __str__(self) -> str:
        return f"demand intensity of {self.test_run_id} (round {self.round_number})"


class DemandIntensityPoint(models.Model):
    """One TC x QD cell of the curve: IOPS against mean and 99.999th-percentile response time."""

    curve = models.ForeignKey(DemandIntensityCurve, on_delete=models.CASCADE, related_name="points")
    threads = models.PositiveIntegerField()
    iodepth = models.PositiveIntegerField()
    outstanding_ios = models.PositiveIntegerField(help_text="TC x QD.")
    run_key = models.CharField(max_length=RUN_KEY_CHARS, blank=True)
    total_iops = models.FloatField(null=True, blank=True)
    lat_mean_ns = models.FloatField(null=True, blank=True, help_text="Mean total latency (response time).")
    lat_p99999_ns = models.FloatField(null=True, blank=True, help_text="99.999th percentile total latency.")
    missing = JSONField(default=dict, blank=True, help_text="Field name -> why it is unknown.")

    class Meta:
        ordering = ["curve", "-threads", "-iodepth"]
        constraints = [models.UniqueConstraint(fields=["curve", "threads", "iodepth"], name="one_point_per_cell")]

    def __str__(self) -> str:
        return f"TC {self.threads}/QD {self.iodepth}"


class OperatingPointName(models.TextChoices):
    MAX = "max", "MaxIOPS"
    MID = "mid", "MidIOPS"
    MIN = "min", "MinIOPS"


class OperatingPoint(models.Model):
    """A DIRTH operating point (MaxIOPS, MidIOPS, MinIOPS) of the curve."""

    curve = models.ForeignKey(DemandIntensityCurve, on_delete=models.CASCADE, related_name="operating_points")
    name = models.CharField(max_length=8, choices=OperatingPointName.choices)
    threads = models.PositiveIntegerField(null=True, blank=True)
    iodepth = models.PositiveIntegerField(null=True, blank=True)
    total_iops = models.FloatField(null=True, blank=True)
    run_key = models.CharField(max_length=RUN_KEY_CHARS, blank=True)
    latency_kind = models.CharField(max_length=8, blank=True, help_text="lat (total) or clat (completion).")
    total_ios = models.BigIntegerField(null=True, blank=True, help_text="I/Os in the histogram.")
    histogram_source = models.CharField(
        max_length=16, blank=True, help_text="capture (the point's own capture run) or sweep cell (older bundles)."
    )
    histogram_run_key = models.CharField(max_length=128, blank=True, help_text="The fio run the histogram is from.")
    missing = JSONField(default=dict, blank=True, help_text="Field name -> why it is unknown.")

    class Meta:
        ordering = ["curve", "name"]
        constraints = [models.UniqueConstraint(fields=["curve", "name"], name="one_operating_point_per_name")]

    def __str__(self) -> str:
        return f"{self.name}: TC {self.threads}/QD {self.iodepth}"


class HistogramBucket(models.Model):
    """One bucket of the response-time histogram at an operating point: the fixed buckets of
    nvmedb_client.pts.dirth.HISTOGRAM_EDGES_NS that hold an I/O (at most 91 per point), [lower_ns, upper_ns)."""

    operating_point = models.ForeignKey(OperatingPoint, on_delete=models.CASCADE, related_name="buckets")
    lower_ns = models.BigIntegerField()
    upper_ns = models.BigIntegerField(null=True, blank=True, help_text="Empty for the open last bucket.")
    io_count = models.BigIntegerField()

    class Meta:
        ordering = ["operating_point", "lower_ns"]

    def __str__(self) -> str:
        return f"[{self.lower_ns}, {self.upper_ns}) ns: {self.io_count}"
