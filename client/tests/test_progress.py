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
    assert "iops.total_iops.rw065.bs65536 3 round(s): 3 of the 5 rounds a window needs" in text


def _live_text(reporter) -> str:
    console = Console(file=io.StringIO(), width=200, record=True)
    console.print(reporter.render())
    return console.export_text()


def test_a_profile_that_stops_after_2_rounds_says_steady_state_cannot_be_judged_not_needs_5_rounds():
    quick = status(max_rounds=2, round=2, tracking=[TrackingLine("iops.total_iops.rw000.bs4096", 2)])
    stream = io.StringIO()
    PlainReporter(stream).update(quick, "round-finished")
    assert "steady state cannot be judged in this profile (at most 2 rounds" in stream.getvalue()
    assert "needs 5" not in stream.getvalue()
    reporter = LiveReporter(io.StringIO())
    reporter.update(quick, "x")
    reporter.close()
    text = _live_text(reporter)
    assert "steady state cannot be judged in this profile" in text and "needs 5" not in text


def test_a_pts_series_short_of_a_window_says_how_many_rounds_it_has():
    reporter = LiveReporter(io.StringIO())
    reporter.update(status(tracking=[TrackingLine("lat.lat_mean_ns.rw000.bs4096", 3)]), "x")
    reporter.close()
    assert "3 of the 5 rounds a window needs" in _live_text(reporter)


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


def test_the_remaining_time_counts_the_timed_runs_still_to_come_hir_segments_and_dirth_captures(tmp_path):
    from nvmedb_client import runner
    from nvmedb_client.run_state import RunConfig, create_run_dir

    config = RunConfig(target_kind="file", target_path=str(tmp_path / "t.img"), size_bytes=256 * 1024**2,
                       tests=["hir", "dirth"], edition="enterprise", profile="quick", cell_runtime_s=1.0)  # fmt: skip
    run = runner.Runner(run_dir=create_run_dir(config=config, out_dir=tmp_path / "runs"))
    timed = [r for block in run.plan.blocks for r in (*block.segments, *block.captures)]
    assert {r.run_id.split("-")[0] for r in timed} == {"hir", "dirth"} and all(r.runtime_s > 0 for r in timed)
    timed_s = sum(r.runtime_s for r in timed)
    low, high = run._remaining()
    series_only = sum(
        min(5, s.max_rounds) * len(s.cells) * s.runtime_s for block in run.plan.blocks for s in block.series
    )
    assert low >= timed_s + series_only
    # once a timed run is done it no longer counts
    first = timed[0]
    run.completed[first.run_id] = {"id": first.run_id}
    assert run._remaining()[0] <= low - first.runtime_s + 1e-6
