"""HIR and XSR results: one row per HIR wait state, one per XSR access group, and their time series (one row per
burst or logged interval, at most MAX_POINTS_PER_SEGMENT per fio run). All re-derived by the server from the
bundle's fio outputs and per-interval logs; the client's own figures are kept as `claimed`."""

from django.db import models

from nvmedb.json_field import JSONField

MAX_POINTS_PER_SEGMENT = 2000


class HirWaitState(models.Model):
    """One HIR wait state: write bursts separated by host idle periods of one length, against the baseline."""

    test_run = models.ForeignKey("analysis.TestRun", on_delete=models.CASCADE, related_name="hir_wait_states")
    index = models.PositiveSmallIntegerField(help_text="1..5: the wait state, in the order run.")
    idle_s = models.FloatField(help_text="Host idle time between bursts (s).")
    burst_s = models.FloatField(help_text="Length of one write burst (s).")
    bursts_planned = models.PositiveIntegerField()
    bursts_measured = models.PositiveIntegerField(help_text="Bursts after an idle period with a whole logged interval.")
    baseline_iops = models.FloatField(null=True, blank=True, help_text="Steady RND 4 KiB write IOPS before HIR.")
    baseline_steady = models.BooleanField(default=False)
    recovery_iops = models.FloatField(null=True, blank=True, help_text="Mean IOPS of the bursts after an idle period.")
    recovery_ratio = models.FloatField(null=True, blank=True, help_text="recovery_iops / baseline_iops.")
    recovered = models.BooleanField(null=True, blank=True, help_text="recovery_ratio > 1 + the recovery margin.")
    return_iops = models.FloatField(null=True, blank=True, help_text="IOPS of the return-to-baseline writes after it.")
    missing = models.TextField(blank=True, default="", help_text="Why figures of this wait state are missing, if any.")
    claimed = JSONField(null=True, blank=True, help_text="The client's own figures for this wait state.")
    claim_differs = models.BooleanField(default=False)

    class Meta:
        ordering = ["test_run", "index"]
        constraints = [models.UniqueConstraint(fields=["test_run", "index"], name="hir_wait_state_unique")]

    def __str__(self) -> str:
        return f"HIR wait state {self.index} ({self.idle_s:g} s idle) of run {self.test_run_id}"


class XsrGroup(models.Model):
    """One XSR access group: its mean and final throughput and the time it took to settle after the switch."""

    test_run = models.ForeignKey("analysis.TestRun", on_delete=models.CASCADE, related_name="xsr_groups")
    index = models.PositiveSmallIntegerField(help_text="1..3: SEQ 1024 KiB, RND 8 KiB, SEQ 1024 KiB writes.")
    pattern = models.CharField(max_length=16)
    block_size_bytes = models.PositiveIntegerField()
    runtime_s = models.FloatField()
    interval_s = models.FloatField(help_text="Length of one logged interval (s).")
    mean_bytes_per_s = models.FloatField(null=True, blank=True)
    final_bytes_per_s = models.FloatField(null=True, blank=True, help_text="Mean of the group's last fifth.")
    recover_s = models.FloatField(null=True, blank=True, help_text="Time from the switch until it settled.")
    recovered = models.BooleanField(default=False)
    log_gaps = models.PositiveIntegerField(default=0, help_text="Stretches of the log longer than 1.5 intervals.")
    missing = models.TextField(blank=True, default="", help_text="Why figures of this group are missing, if any.")
    claimed = JSONField(null=True, blank=True)
    claim_differs = models.BooleanField(default=False)

    class Meta:
        ordering = ["test_run", "index"]
        constraints = [models.UniqueConstraint(fields=["test_run", "index"], name="xsr_group_unique")]

    def __str__(self) -> str:
        return f"XSR group {self.index} of run {self.test_run_id}"


class RecoveryPoint(models.Model):
    """One point of a HIR or XSR time series: a burst's IOPS, a return-to-baseline interval's IOPS, or an XSR
    interval's throughput. `t_s` counts from the start of the test's first segment along the plan's timeline."""

    class Kind(models.TextChoices):
        BURST = "burst", "HIR burst after idle"
        FIRST_BURST = "first", "HIR first burst (after writes)"
        BASELINE = "baseline", "HIR return to baseline"
        THROUGHPUT = "tp", "XSR interval throughput"

    test_run = models.ForeignKey("analysis.TestRun", on_delete=models.CASCADE, related_name="recovery_points")
    stage = models.PositiveSmallIntegerField(help_text="The HIR wait state or XSR group.")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    t_s = models.FloatField()
    value = models.FloatField(help_text="IOPS (HIR) or bytes/s (XSR).")

    class Meta:
        ordering = ["test_run", "t_s", "id"]
        indexes = [models.Index(fields=["test_run", "kind"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.t_s:g} s = {self.value:g}"
