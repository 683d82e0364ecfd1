"""The progress display: plain lines without a terminal, a live panel with the tracking excursions on one."""

import io

from rich.console import Console

from nvmedb_client.progress import LiveReporter, PlainReporter, Status, TrackingLine, make_reporter


def status(**changes):
    s = Status(test="iops", phase="wdpc", round=3, max_rounds=25, cell="iops-r03-rw065-bs4096", cell_index=7,
               cells_in_round=56, remaining_min_s=3600, remaining_max_s=7200)  # fmt: skip
    for key, value in changes.items():
        setattr(s, key, value)
    return s


def test_without_a_terminal_each_cell_is_one_plain_line_with_round_cell_and_remaining_time():
    stream = io.StringIO()
    assert isinstance(make_reporter(json_mode=False, stream=stream), PlainReporter)
    PlainReporter(stream).update(status(), "cell-started")
    line = stream.getvalue()
    assert "iops wdpc round 3/25 cell 7/56 iops-r03-rw065-bs4096" in line
    assert "remaining 1:00:00 to 2:00:00" in line


def test_a_finished_round_reports_each_tracking_variables_excursions_against_the_limits():
    stream = io.StringIO()
    lines = [
        TrackingLine("iops.total_iops.rw000.bs4096", 6, 0.12, 0.20, 0.031, 0.10, True),
        TrackingLine("iops.total_iops.rw065.bs65536", 3),
    ]
    PlainReporter(stream).update(status(tracking=lines), "round-finished")
    text = stream.getvalue()
    assert "iops.total_iops.rw000.bs4096 data 12.0% (limit 20%), slope 3.1% (limit 10%): steady" in text
    assert "iops.total_iops.rw065.bs65536 3 round(s), window needs 5" in text


def test_the_live_panel_shows_test_round_cell_eta_and_the_tracking_table():
    stream = io.StringIO()
    reporter = LiveReporter(stream)
    reporter.update(status(tracking=[TrackingLine("lat.lat_mean_ns.rw000.bs4096", 5, 0.25, 0.20, 0.05, 0.10)]), "x")
    reporter.close()
    console = Console(file=io.StringIO(), width=160, record=True)
    console.print(reporter.render())
    text = console.export_text()
    for needle in (
        "iops wdpc",
        "3 of at most 25",
        "7/56",
        "1:00:00 to 2:00:00",
        "25.0% (limit 20%)",
        "5.0% (limit 10%)",
    ):
        assert needle in text
