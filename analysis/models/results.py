"""How drives were measured (test runs and their rounds) and what came out (measurements, steady state, flags)."""

from django.db import models

from analysis.limits import PATTERN_CHARS, PURGE_METHOD_CHARS, RUN_KEY_CHARS, SCHEDULER_CHARS
from analysis.models.hardware import DriveModel, Firmware, Host, PcieLink, PhysicalUnit
from nvmedb.json_field import JSONField


class Test(models.TextChoices):
    IOPS = "iops", "IOPS"
    THROUGHPUT = "tp", "Throughput"
    LATENCY = "lat", "Latency"
    WSAT = "wsat", "Write saturation"
    HIR = "hir", "Host idle recovery"
    XSR = "xsr", "Cross stimulus recovery"
    ECW = "ecw", "Enterprise composite workload"
    DIRTH = "dirth", "Demand intensity / response time histogram"
    WSAT_OLTP = "ws-oltp", "Write saturation, OLTP"
    WSAT_VOD = "ws-vod", "Write saturation, video on demand"
    WSAT_META = "ws-meta", "Write saturation, metadata"
    WSAT_COMPOSITE = "ws-comp", "Write saturation, composite block size"
    SURFACE = "surface", "QD × block-size surface (nvmedb extension, not a PTS test)"


class Source(models.TextChoices):
    CLIENT = "client", "nvmedb client"
    SSSPT = "ssspt", "SSSPT (imported)"
    PY_SSS_PTS = "py-sss-pts", "py-sss-pts (imported)"


class TestRun(models.Model):
    """One PTS test (IOPS, throughput, latency or WSAT) of one drive within one submission."""

    __test__ = False  # not a pytest test class

    submission = models.ForeignKey("submissions.Submission", on_delete=models.CASCADE, related_name="test_runs")
    drive_model = models.ForeignKey(DriveModel, on_delete=models.PROTECT, related_name="test_runs")
    firmware = models.ForeignKey(Firmware, null=True, blank=True, on_delete=models.PROTECT, related_name="test_runs")
    unit = models.ForeignKey(PhysicalUnit, null=True, blank=True, on_delete=models.PROTECT, related_name="test_runs")
    host = models.ForeignKey(Host, null=True, blank=True, on_delete=models.PROTECT, related_name="test_runs")
    pcie_link = models.ForeignKey(PcieLink, null=True, blank=True, on_delete=models.PROTECT, related_name="test_runs")

    test = models.CharField(max_length=8, choices=Test.choices)
    edition = models.CharField(max_length=16, help_text="enterprise or client (PTS-E / PTS-C).")
    profile = models.CharField(max_length=16, help_text="pts, quick, or imported.")
    compliant = models.BooleanField(
        default=False,
        help_text="A PTS result: derived_compliant, while the submission is neither held nor rejected.",
    )
    compliance_reasons = JSONField(default=list, blank=True)
    # The server's own verdict on the run (analysis.compliance: the PTS plan ran to its stop rule, and every check
    # passed), kept apart from `compliant`: a held or rejected submission's runs are not compliant, with a "held: ..."
    # or "rejected: ..." reason first, and staff approval gives them this verdict back (analysis.services).
    derived_compliant = models.BooleanField(default=False)
    threads = models.PositiveIntegerField(null=True, blank=True, help_text="Thread count (TC).")
    iodepth = models.PositiveIntegerField(null=True, blank=True, help_text="Outstanding I/O per thread (QD).")
    target_kind = models.CharField(max_length=8, blank=True, help_text="device or file.")
    target_size_bytes = models.BigIntegerField(null=True, blank=True)
    active_range_bytes = models.BigIntegerField(null=True, blank=True)
    namespace_size_bytes = models.BigIntegerField(null=True, blank=True)
    overprovisioning = models.FloatField(null=True, blank=True, help_text="Share of raw capacity not exposed, 0..1.")
    write_cache = models.CharField(max_length=16, blank=True, help_text="enabled, disabled, or blank if unknown.")
    purge_method = models.CharField(max_length=PURGE_METHOD_CHARS, blank=True)
    fio_version = models.CharField(max_length=64, blank=True)
    ioengine = models.CharField(max_length=32, blank=True)
    scheduler = models.CharField(max_length=SCHEDULER_CHARS, blank=True)
    tool_versions = JSONField(default=dict, blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CLIENT)
    source_license = models.CharField(max_length=64, blank=True, help_text="License of imported results.")
    source_reference = models.CharField(max_length=500, blank=True, help_text="Where imported results came from.")
    signed = models.BooleanField(default=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    steady = models.BooleanField(null=True, blank=True, help_text="Server's verdict over every tracking variable.")
    steady_round = models.PositiveIntegerField(null=True, blank=True)
    headline = JSONField(
        default=dict,
        blank=True,
        help_text="Headline metric key -> value over the measurement window (analysis.headline).",
    )
    # Drive state before the test (wear and history) and its thermal limits, from smart-log / id-ctrl.
    percentage_used = models.PositiveSmallIntegerField(null=True, blank=True)
    power_on_hours = models.BigIntegerField(null=True, blank=True)
    data_written_before_bytes = models.BigIntegerField(null=True, blank=True)
    warning_temperature_k = models.FloatField(null=True, blank=True)
    critical_temperature_k = models.FloatField(null=True, blank=True)
    max_temperature_k = models.FloatField(null=True, blank=True)
    missing = JSONField(default=dict, blank=True, help_text="Field name -> why it is unknown.")
    evidence = JSONField(
        default=dict, blank=True, help_text="Imports: field name -> where the imported files state it."
    )

    class Meta:
        ordering = ["submission", "test"]
        constraints = [models.UniqueConstraint(fields=["submission", "test"], name="one_run_per_test_per_submission")]
        indexes = [models.Index(fields=["drive_model", "test"])]

    def __str__(self) -> str:
        return f"{self.get_test_display()} of {self.drive_model_id} in {self.submission_id}"


class Round(models.Model):
    """One pass over a test's cells; `series` separates rounds that count independently (a tp block size)."""

    test_run = models.ForeignKey(TestRun, on_delete=models.CASCADE, related_name="rounds")
    phase = models.CharField(max_length=16, help_text="wipc, wdpc, tp-write, tp-read or wsat.")
    series = models.CharField(max_length=64, blank=True)
    number = models.PositiveIntegerField()

    class Meta:
        ordering = ["test_run", "phase", "series", "number"]
        constraints = [
            models.UniqueConstraint(fields=["test_run", "phase", "series", "number"], name="round_once_per_series")
        ]

    def __str__(self) -> str:
        return f"{self.phase} {self.series} round {self.number}".replace("  ", " ")


class Measurement(models.Model):
    """One fio run (one cell of one round). Every value traces back to `raw_file` and the JSON path in it."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="measurements")
    test_run = models.ForeignKey(TestRun, on_delete=models.CASCADE, related_name="measurements")
    drive_model = models.ForeignKey(DriveModel, on_delete=models.PROTECT, related_name="measurements")
    run_key = models.CharField(
        max_length=RUN_KEY_CHARS, help_text="The run's id in the bundle (or imported file name)."
    )
    block_size_bytes = models.PositiveIntegerField()
    read_pct = models.PositiveSmallIntegerField(help_text="Read share of the R/W mix, 0..100.")
    pattern = models.CharField(
        max_length=PATTERN_CHARS,
        blank=True,
        help_text="fio rw= of the run (randrw, read, randread, write...); empty if unknown.",
    )
    threads = models.PositiveIntegerField(null=True, blank=True)
    iodepth = models.PositiveIntegerField(null=True, blank=True)
    read_iops = models.FloatField(null=True, blank=True)
    write_iops = models.FloatField(null=True, blank=True)
    total_iops = models.FloatField(null=True, blank=True)
    read_bw_bytes_per_s = models.FloatField(null=True, blank=True)
    write_bw_bytes_per_s = models.FloatField(null=True, blank=True)
    total_bw_bytes_per_s = models.FloatField(null=True, blank=True)
    read_bytes = models.BigIntegerField(null=True, blank=True)
    write_bytes = models.BigIntegerField(null=True, blank=True)
    cumulative_write_bytes = models.BigIntegerField(
        null=True, blank=True, help_text="Bytes written by this test run up to the end of this measurement (WSAT)."
    )
    # lat_*: total latency (submission + completion, fio lat_ns), the PTS response time; clat_* and slat_* its parts
    lat_mean_ns = models.FloatField(null=True, blank=True, help_text="Mean total latency (slat + clat), all I/O.")
    read_lat_mean_ns = models.FloatField(null=True, blank=True)
    write_lat_mean_ns = models.FloatField(null=True, blank=True)
    lat_max_ns = models.FloatField(null=True, blank=True, help_text="Maximum total latency.")
    read_lat_max_ns = models.FloatField(null=True, blank=True)
    write_lat_max_ns = models.FloatField(null=True, blank=True)
    lat_p99_ns = models.FloatField(null=True, blank=True, help_text="99th percentile total latency, worst direction.")
    lat_p9999_ns = models.FloatField(
        null=True, blank=True, help_text="99.99th percentile total latency, worst direction."
    )
    percentiles_ns = JSONField(default=dict, blank=True, help_text="Total-latency percentiles per direction.")
    clat_mean_ns = models.FloatField(null=True, blank=True, help_text="Mean completion latency (fio clat), all I/O.")
    read_clat_mean_ns = models.FloatField(null=True, blank=True)
    write_clat_mean_ns = models.FloatField(null=True, blank=True)
    clat_max_ns = models.FloatField(null=True, blank=True, help_text="Maximum completion latency.")
    clat_p99_ns = models.FloatField(
        null=True, blank=True, help_text="99th percentile completion latency, worst direction."
    )
    clat_p9999_ns = models.FloatField(
        null=True, blank=True, help_text="99.99th percentile completion latency, worst direction."
    )
    clat_percentiles_ns = JSONField(default=dict, blank=True, help_text="Completion-latency percentiles.")
    slat_mean_ns = models.FloatField(null=True, blank=True, help_text="Mean submission latency (fio slat), all I/O.")
    read_slat_mean_ns = models.FloatField(null=True, blank=True)
    write_slat_mean_ns = models.FloatField(null=True, blank=True)
    slat_max_ns = models.FloatField(null=True, blank=True, help_text="Maximum submission latency.")
    runtime_s = models.FloatField(null=True, blank=True)
    temperature_before_k = models.FloatField(null=True, blank=True)
    temperature_after_k = models.FloatField(null=True, blank=True)
    link_utilization = models.FloatField(null=True, blank=True, help_text="Measured ÷ usable link bandwidth.")
    in_steady_window = models.BooleanField(default=False)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    raw_file = models.CharField(max_length=500, help_text="Path of the fio output inside the bundle's files/.")
    json_path = models.CharField(max_length=200, help_text="Where in that file the values were read, e.g. $.jobs[*].")
    missing = JSONField(default=dict, blank=True, help_text="Field name -> why it is unknown.")

    class Meta:
        ordering = ["test_run", "round__number", "block_size_bytes", "read_pct"]
        indexes = [
            models.Index(fields=["drive_model", "block_size_bytes", "read_pct"]),
            models.Index(fields=["test_run", "block_size_bytes", "read_pct"]),
        ]

    def __str__(self) -> str:
        return self.run_key


class SteadyStateWindow(models.Model):
    """The PTS steady-state test of one tracking variable, as the server re-derived it from the raw data."""

    test_run = models.ForeignKey(TestRun, on_delete=models.CASCADE, related_name="steady_state_windows")
    variable = models.CharField(max_length=100)
    phase = models.CharField(max_length=16)
    metric = models.CharField(max_length=40, help_text="A measurement column, e.g. total_iops.")
    block_size_bytes = models.PositiveIntegerField()
    read_pct = models.PositiveSmallIntegerField()
    first_round = models.PositiveIntegerField(null=True, blank=True)
    last_round = models.PositiveIntegerField(null=True, blank=True)
    rounds = JSONField(default=list, blank=True)
    values = JSONField(default=list, blank=True)
    average = models.FloatField(null=True, blank=True)
    data_excursion = models.FloatField(null=True, blank=True)
    data_excursion_limit = models.FloatField(null=True, blank=True)
    slope = models.FloatField(null=True, blank=True)
    intercept = models.FloatField(null=True, blank=True)
    slope_excursion = models.FloatField(null=True, blank=True)
    slope_excursion_limit = models.FloatField(null=True, blank=True)
    steady = models.BooleanField(default=False)
    steady_round = models.PositiveIntegerField(null=True, blank=True, help_text="First round the window was steady.")
    claimed = JSONField(null=True, blank=True, help_text="The client's or source tool's own verdict, verbatim.")
    claimed_steady = models.BooleanField(null=True, blank=True)
    claim_differs = models.BooleanField(default=False)
    note = models.CharField(max_length=300, blank=True, help_text="Why the verdict is what it is, or how it differs.")

    class Meta:
        ordering = ["test_run", "variable"]
        constraints = [models.UniqueConstraint(fields=["test_run", "variable"], name="one_window_per_variable_per_run")]

    def __str__(self) -> str:
        return f"{self.variable}: {'steady' if self.steady else 'not steady'}"


class FlagKind(models.TextChoices):
    BUS_BOUND = "bus_bound", "Bus-bound"
    LINK_BELOW_CAPABILITY = "link_below_capability", "Link below capability"
    THERMAL_THROTTLE = "thermal_throttle", "Thermal throttling"
    UNWRITTEN_DATA = "unwritten_data", "Read of unwritten data"
    NON_COMPLIANT = "non_compliant", "Not PTS-compliant"
    IMPORTED = "imported", "Imported"
    HELD_FOR_REVIEW = "held_for_review", "Held for review"
    STEADY_STATE_NOT_REACHED = "steady_state_not_reached", "Steady state not reached"
    STEADY_STATE_CLAIM_DIFFERS = "steady_state_claim_differs", "Steady-state claim differs"
    CROSSCHECK = "crosscheck", "Cross-check failed"
    OUTLIER = "outlier", "Outlier among its model's peers"
    SURFACE_CLAIM_DIFFERS = "surface_claim_differs", "Surface figures claim differs"
    RECOVERY_CLAIM_DIFFERS = "recovery_claim_differs", "HIR/XSR claim differs"
    DEMAND_INTENSITY_CLAIM_DIFFERS = "demand_claim_differs", "Demand-intensity claim differs"
    DIRTH_CAPTURE_MISMATCH = "dirth_capture_mismatch", "DIRTH capture at another operating point"
    DIRTH_CAPTURE_MISSING = "dirth_capture_missing", "DIRTH capture missing"


class Flag(models.Model):
    """Something a reader must know about a result, with a one-line reason."""

    submission = models.ForeignKey("submissions.Submission", on_delete=models.CASCADE, related_name="flags")
    test_run = models.ForeignKey(TestRun, null=True, blank=True, on_delete=models.CASCADE, related_name="flags")
    measurement = models.ForeignKey(Measurement, null=True, blank=True, on_delete=models.CASCADE, related_name="flags")
    kind = models.CharField(max_length=32, choices=FlagKind.choices)
    reason = models.CharField(max_length=300)

    class Meta:
        ordering = ["submission", "kind", "id"]
        indexes = [models.Index(fields=["kind"])]

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}"


class MeasurementFlagKinds(models.Model):
    """The kinds of flags on each flagged measurement, ';'-separated and sorted: a database view (migration
    0006_exports_flag_kinds), so an export joins the flags aggregated once instead of running a subquery per row."""

    measurement = models.OneToOneField(
        Measurement,
        primary_key=True,
        on_delete=models.DO_NOTHING,
        related_name="flag_kinds",
        db_column="measurement_id",
    )
    kinds = models.TextField()

    class Meta:
        managed = False
        db_table = "analysis_measurement_flag_kinds"

    def __str__(self) -> str:
        return f"{self.measurement_id}: {self.kinds}"


class TestRunFlagKinds(models.Model):
    """The kinds of flags on each flagged run as a whole or on its submission (not those on single measurements),
    ';'-separated and sorted: a database view (migration 0006_exports_flag_kinds), like MeasurementFlagKinds."""

    test_run = models.OneToOneField(
        TestRun, primary_key=True, on_delete=models.DO_NOTHING, related_name="flag_kinds", db_column="test_run_id"
    )
    kinds = models.TextField()

    class Meta:
        managed = False
        db_table = "analysis_testrun_flag_kinds"

    def __str__(self) -> str:
        return f"{self.test_run_id}: {self.kinds}"
