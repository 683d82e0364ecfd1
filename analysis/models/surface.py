"""The queue-depth x block-size surface (an nvmedb extension, not a PTS test): its cells and, per access pattern,
the peak bandwidth and the smallest cell reaching 90% of it, as the server re-derived them from the raw fio outputs
(the client's own figures are kept beside them as its claim)."""

from django.db import models

from analysis.models.hardware import DriveModel
from analysis.models.results import Measurement, TestRun
from nvmedb.json_field import JSONField


class SurfaceCell(models.Model):
    """One cell of the surface: an access pattern at one block size and one queue depth (one job)."""

    test_run = models.ForeignKey(TestRun, on_delete=models.CASCADE, related_name="surface_cells")
    drive_model = models.ForeignKey(DriveModel, on_delete=models.PROTECT, related_name="surface_cells")
    measurement = models.ForeignKey(
        Measurement, null=True, blank=True, on_delete=models.CASCADE, related_name="surface_cells"
    )
    pattern = models.CharField(max_length=16, help_text="fio rw=: read, randread, write or randwrite.")
    access = models.CharField(max_length=16, help_text="sequential or random.")
    direction = models.CharField(max_length=8, help_text="read or write.")
    block_size_bytes = models.PositiveIntegerField()
    iodepth = models.PositiveIntegerField(help_text="I/Os in flight (one job).")
    bytes_in_flight = models.BigIntegerField(help_text="block_size_bytes x iodepth.")
    bw_bytes_per_s = models.FloatField(help_text="Median bandwidth of the cell's repetitions, in its direction.")
    iops = models.FloatField(help_text="Median I/O operations per second of the repetitions, in its direction.")
    n_repetitions = models.PositiveIntegerField(default=1, help_text="Repetitions of the cell with a figure.")
    bw_min_bytes_per_s = models.FloatField(null=True, blank=True, help_text="Lowest repetition's bandwidth.")
    bw_max_bytes_per_s = models.FloatField(null=True, blank=True, help_text="Highest repetition's bandwidth.")
    bw_cv = models.FloatField(
        null=True, blank=True, help_text="Coefficient of variation of the bandwidth: sample standard deviation / mean."
    )
    noisy = models.BooleanField(null=True, blank=True, help_text="bw_cv above 10%; unknown without a spread.")
    spread_reason = models.CharField(max_length=200, blank=True, help_text="Why min, max and CV are missing.")
    repetitions = JSONField(
        default=list, blank=True, help_text="Each repetition: its number, run id, bandwidth and IOPS."
    )
    speedup = models.FloatField(null=True, blank=True, help_text="IOPS / IOPS of the QD 1 cell of its block size.")
    speedup_reason = models.CharField(max_length=100, blank=True, help_text="Why there is no speedup.")
    reaches_90pct_of_peak = models.BooleanField(default=False)
    knee = models.BooleanField(default=False, help_text="The smallest cell reaching 90% of the pattern's peak.")

    class Meta:
        ordering = ["test_run", "pattern", "block_size_bytes", "iodepth"]
        constraints = [
            models.UniqueConstraint(
                fields=["test_run", "pattern", "block_size_bytes", "iodepth"], name="one_surface_cell_per_run"
            )
        ]
        indexes = [models.Index(fields=["drive_model", "pattern"])]

    def __str__(self) -> str:
        return f"{self.pattern} {self.block_size_bytes} B QD {self.iodepth}"


class SurfacePattern(models.Model):
    """One access pattern of a surface run: its peak bandwidth and its 90%-of-peak knee, with the client's claim."""

    test_run = models.ForeignKey(TestRun, on_delete=models.CASCADE, related_name="surface_patterns")
    pattern = models.CharField(max_length=16)
    access = models.CharField(max_length=16)
    direction = models.CharField(max_length=8)
    cells_measured = models.PositiveIntegerField()
    cells_missing = JSONField(default=list, blank=True, help_text="Planned cells without a figure, and why.")
    peak_bw_bytes_per_s = models.FloatField(null=True, blank=True)
    peak_block_size_bytes = models.PositiveIntegerField(null=True, blank=True)
    peak_iodepth = models.PositiveIntegerField(null=True, blank=True)
    knee_block_size_bytes = models.PositiveIntegerField(null=True, blank=True)
    knee_iodepth = models.PositiveIntegerField(null=True, blank=True)
    knee_bytes_in_flight = models.BigIntegerField(null=True, blank=True)
    knee_bw_bytes_per_s = models.FloatField(null=True, blank=True)
    knee_reason = models.CharField(max_length=200, blank=True, help_text="Why there is no knee.")
    repetitions = models.PositiveIntegerField(default=1, help_text="Repetitions of the grid with a measured cell.")
    repeatable = models.BooleanField(default=False, help_text="The plan ran every cell at least 3 times.")
    knee_agreeing_repetitions = models.PositiveIntegerField(
        null=True, blank=True, help_text="Repetitions whose own 90% point is the knee of the medians."
    )
    knee_by_repetition = JSONField(default=list, blank=True, help_text="Each repetition's own 90% point.")
    knee_moves = models.BooleanField(default=False, help_text="The repetitions' own 90% points differ.")
    noisy_cells = models.PositiveIntegerField(default=0, help_text="Cells whose bandwidth CV is above 10%.")
    queue_depth_real = models.BooleanField(
        null=True, blank=True, help_text="The fio engine keeps the queue depth in flight (libaio, io_uring)."
    )
    target_note = models.CharField(max_length=300, blank=True)
    claimed = JSONField(null=True, blank=True, help_text="The client's own figures for this pattern, verbatim.")
    claim_differs = models.BooleanField(default=False)
    note = models.CharField(max_length=300, blank=True, help_text="How the claim differs, when it does.")

    class Meta:
        ordering = ["test_run", "pattern"]
        constraints = [models.UniqueConstraint(fields=["test_run", "pattern"], name="one_surface_pattern_per_run")]

    def __str__(self) -> str:
        return f"{self.pattern}: knee {self.knee_block_size_bytes} B QD {self.knee_iodepth}"
