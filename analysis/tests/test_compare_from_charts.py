"""The summary rebuild takes the compare figures of a drive's representative runs from the measurements its charts
read (browse.compare.charted_compare_figures) rather than reading them again: the same figures as
computed_compare_figures' own read, whose order they are put in. Where that order leaves two rows of a run in either
order (the same round number, block size and mix in two series), the rebuild reads them as it does."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.models import DriveModelAggregate, Measurement, Round
from browse import compare, queries

pytestmark = pytest.mark.django_db


def default_page_data(drive):
    """The drive's default page data as the summary rebuild builds it."""
    aggregates = list(DriveModelAggregate.objects.filter(drive_model=drive).order_by("metric", "factor", "level"))
    computed, runs = queries.compute_summaries([drive.pk], {drive.pk: aggregates})
    return queries.drive_data_of(drive=drive, aggregates=aggregates, summary=computed[drive.pk],
                                 all_runs=runs[drive.pk], flagged=False)  # fmt: skip


def add_series(run_id: int, *, phase: str, series: str, block_size: int, mix: int, scale: float) -> None:
    """Five rounds of one more cell in the run, each value scaled from its first measurement's."""
    model = Measurement.objects.filter(test_run_id=run_id).order_by("id").first()
    for number in range(1, 6):
        round_row, _ = Round.objects.get_or_create(test_run_id=run_id, phase=phase, series=series, number=number)
        Measurement.objects.create(
            round=round_row, test_run_id=run_id, drive_model_id=model.drive_model_id, run_key=f"{phase}-{series}-{number}",
            block_size_bytes=block_size, read_pct=mix, threads=1, iodepth=1, total_iops=model.total_iops * scale * number,
            read_iops=0.0, write_iops=0.0, total_bw_bytes_per_s=0.0, read_bw_bytes_per_s=model.read_bw_bytes_per_s,
            write_bw_bytes_per_s=model.write_bw_bytes_per_s, write_bytes=0, cumulative_write_bytes=0,
            lat_mean_ns=model.lat_mean_ns * scale + number, lat_p9999_ns=model.lat_p9999_ns * scale,
            lat_max_ns=model.lat_max_ns, runtime_s=60.0, in_steady_window=number > 2, raw_file="fio/x.json",
            json_path="$.jobs[*]",
        )  # fmt: skip


def figures_both_ways(drive) -> tuple[dict, dict, int]:
    """The charted figures, the computed ones, and how many queries the charted ones made."""
    data = default_page_data(drive)
    data.measurements  # noqa: B018 -- read as the page's charts read them, before the compare figures
    with CaptureQueriesContext(connection) as queries_made:
        charted = compare.charted_compare_figures(data)
    computed = compare.computed_compare_figures({drive.pk: data.summary.representative})[drive.pk]
    return charted, computed, len(queries_made)


def test_the_charted_measurements_give_the_computed_figures_in_its_order(browse_drive):
    data = default_page_data(browse_drive)
    lat = data.summary.representative["lat"]
    # a phase the charts' order reads first and the compare's last at each round: the cells' order differs
    add_series(lat, phase="b-phase", series="", block_size=256, mix=100, scale=1.3)
    add_series(lat, phase="a-phase", series="", block_size=8192, mix=0, scale=0.7)
    charted, computed, n_queries = figures_both_ways(browse_drive)
    assert n_queries == 0 and charted == computed
    phases = [row[0] for row in charted["lat"]]
    assert phases.index("b-phase") < phases.index("wdpc") < phases.index("a-phase")
    assert charted["iops"]["100"] and charted["tp"]["read"] and charted["tp"]["write"]


def test_rows_that_share_a_place_in_the_compare_order_are_read_as_it_reads_them(browse_drive):
    iops = default_page_data(browse_drive).summary.representative["iops"]
    add_series(iops, phase="wdpc", series="second", block_size=4096, mix=100, scale=1.1)
    charted, computed, n_queries = figures_both_ways(browse_drive)
    assert n_queries == 1 and charted == computed


def test_a_chosen_submissions_runs_are_read_as_computed_figures_read_them(browse_drive):
    data = default_page_data(browse_drive)
    chosen = queries.drive_data_of(drive=browse_drive, aggregates=data.aggregates, summary=data.summary,
                                   all_runs=data.all_runs, submission_id=data.submissions[0], flagged=False)  # fmt: skip
    with CaptureQueriesContext(connection) as queries_made:
        figures = compare.charted_compare_figures(chosen)
    assert len(queries_made) == 1
    assert figures == compare.computed_compare_figures({browse_drive.pk: data.summary.representative})[browse_drive.pk]
