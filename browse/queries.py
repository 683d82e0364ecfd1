"""Page data for the browse pages, each loaded in a fixed number of queries whatever the number of submissions.

A drive page leads with statistics over every public run (the aggregates, the per-run headline values) and draws the
PTS charts of one run per test: the run whose headline value is closest to the drive's median (or the runs of a
submission the reader picked). Measurements are read only for those runs, so the page costs the same for a drive
with one submission and for one with a thousand.

The parts: the rows read of runs and measurements (run_rows), what the pages need from every public run of a drive
(drive_summary), a drive page's data for a request (drive_data), the home page, drive list and picker (listing) and
a submission page's rows (submission_rows). Their names are all importable from here.
"""

from __future__ import annotations

from browse.drive_data import (
    DriveData,
    DriveNotPublic,
    SubmissionNotOfDrive,
    drive_by_slug,
    drive_data,
    drive_data_of,
)
from browse.drive_summary import (
    FRESH_SECONDS,
    NEWEST_FIELDS,
    NEWEST_SUBMISSIONS,
    SUMMARY_FORMAT,
    DriveSummary,
    cached_summaries,
    compute_summaries,
    dataset_version,
    drive_summaries,
    freshness,
    names_gone_runs,
    stored_row,
    stored_summaries,
    summary_of,
)
from browse.listing import (
    HOME_COUNTS_KEY,
    HOME_COUNTS_SECONDS,
    PICKER_LIMIT,
    compare_picker,
    drive_models_in_order,
    headline_cells,
    home_page,
    list_cells,
    ordered_ids,
    public_drive_models,
)
from browse.run_rows import (
    CHARTED_MEASUREMENT_FIELDS,
    CHARTED_METRICS,
    FACTOR_RUN_FIELDS,
    LIGHT_RUN_FIELDS,
    MEASUREMENT_FIELDS,
    PRIMARY_METRIC,
    RUN_FIELDS,
    STATISTICS_SECONDS,
    TEST_ORDER,
    factor_runs,
    light_runs,
    metric_column,
    public_runs_of,
    representative_run,
)
from browse.submission_rows import (
    RoundRows,
    submission_dataset,
)

__all__ = [
    "CHARTED_MEASUREMENT_FIELDS",
    "CHARTED_METRICS",
    "DriveData",
    "DriveNotPublic",
    "DriveSummary",
    "FACTOR_RUN_FIELDS",
    "FRESH_SECONDS",
    "HOME_COUNTS_KEY",
    "HOME_COUNTS_SECONDS",
    "LIGHT_RUN_FIELDS",
    "MEASUREMENT_FIELDS",
    "NEWEST_FIELDS",
    "NEWEST_SUBMISSIONS",
    "PICKER_LIMIT",
    "PRIMARY_METRIC",
    "RUN_FIELDS",
    "RoundRows",
    "STATISTICS_SECONDS",
    "SUMMARY_FORMAT",
    "SubmissionNotOfDrive",
    "TEST_ORDER",
    "cached_summaries",
    "compare_picker",
    "compute_summaries",
    "dataset_version",
    "drive_by_slug",
    "drive_data",
    "drive_data_of",
    "drive_models_in_order",
    "drive_summaries",
    "factor_runs",
    "freshness",
    "headline_cells",
    "home_page",
    "light_runs",
    "list_cells",
    "metric_column",
    "names_gone_runs",
    "ordered_ids",
    "public_drive_models",
    "public_runs_of",
    "representative_run",
    "stored_row",
    "stored_summaries",
    "submission_dataset",
    "summary_of",
]
