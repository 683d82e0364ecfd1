"""The measurements export's rows, written when a submission's data or place in the dataset changes, so a CSV export
reads one table with a filter (on PostgreSQL a `COPY` of it) instead of joining nine tables per download.

Written by datasets.export_rows; one row per measurement of a PTS run, whatever its submission's status:
whether a row is public is decided at export time from its submission's status and `trial`, exactly as
analysis.selectors.public_runs_q decides it, so hiding or withdrawing a submission needs no rewrite."""

from django.db import models

from analysis.models.hardware import DriveModel, Firmware
from analysis.models.results import Measurement, TestRun


def _text():
    return models.TextField(null=True)


def _float():
    return models.FloatField(null=True)


def _integer():
    return models.BigIntegerField(null=True)


def _reference(to):
    # no database constraint: the row goes with its measurement (CASCADE below); these only filter
    return models.ForeignKey(to, null=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")


class ExportMeasurementRow(models.Model):
    """A row of the `measurements` table (datasets.tables.MEASUREMENT_COLUMNS, same names, same order) as
    its CSV spells it: text already spreadsheet-safe (datasets.spreadsheet), `started_at` as ISO 8601 UTC
    text; numbers and booleans as themselves. Then the columns the live filters read."""

    measurement = models.OneToOneField(
        Measurement, primary_key=True, on_delete=models.CASCADE, related_name="export_row"
    )
    submission = models.ForeignKey(
        "submissions.Submission", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    run = models.ForeignKey(TestRun, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+")
    drive_slug = _text()
    drive_name = _text()
    vendor = _text()
    unit_serial_hash = _text()
    firmware = _text()
    test = _text()
    edition = _text()
    profile = _text()
    compliant = models.BooleanField(null=True)
    source = _text()
    host_cpu_model = _text()
    host_cpu_count = _integer()
    host_memory_bytes = _integer()
    host_os = _text()
    host_kernel = _text()
    pcie_generation = _integer()
    pcie_width = _integer()
    pcie_speed_gt_per_s = _float()
    pcie_usable_bw_bytes_per_s = _float()
    phase = _text()
    series = _text()
    round = _integer()
    block_size_bytes = _integer()
    read_pct = _integer()
    threads = _integer()
    iodepth = _integer()
    read_iops = _float()
    write_iops = _float()
    total_iops = _float()
    read_bw_bytes_per_s = _float()
    write_bw_bytes_per_s = _float()
    total_bw_bytes_per_s = _float()
    read_bytes = _integer()
    write_bytes = _integer()
    lat_mean_ns = _float()
    read_lat_mean_ns = _float()
    write_lat_mean_ns = _float()
    lat_max_ns = _float()
    lat_p99_ns = _float()
    lat_p9999_ns = _float()
    clat_mean_ns = _float()
    clat_max_ns = _float()
    clat_p99_ns = _float()
    clat_p9999_ns = _float()
    slat_mean_ns = _float()
    slat_max_ns = _float()
    runtime_s = _float()
    temperature_before_k = _float()
    temperature_after_k = _float()
    link_utilization = _float()
    in_steady_window = models.BooleanField(null=True)
    flag_kinds = _text()
    started_at = _text()
    raw_file = _text()
    json_path = _text()
    # what the run filters read besides the columns above (datasets.export_rows), and who may see the row
    drive_model = _reference(DriveModel)
    firmware_ref = _reference(Firmware)
    target_kind = _text()
    trial = models.BooleanField(help_text="A run made to try the tool (analysis.selectors.trial_q): its owner's only.")
    csv_line = models.TextField(
        help_text="The exported columns as this row's CSV record, without its line end (datasets.csv_lines)."
    )

    def __str__(self) -> str:
        return f"export row of measurement {self.measurement_id}"
