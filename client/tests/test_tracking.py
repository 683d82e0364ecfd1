"""Which runs form which steady-state series, and the manifest verdicts built from them."""

import dataclasses

import pytest

from nvmedb_client.fio_output import FioSummary
from nvmedb_client.tracking import evaluate_runs, tracking_variables

MIB = 1024 * 1024


def _summary(**values) -> FioSummary:
    fields = {f.name: None for f in dataclasses.fields(FioSummary) if f.default is dataclasses.MISSING}
    fields.update(fio_version="fio-3.33", jobs=1, runtime_s=60.0, total_iops=0.0, percentiles_ns={})
    fields.update(values)
    return FioSummary(**fields)


def _run(test, phase, round_number, block_size, read_pct):
    return {
        "id": f"{test}-{phase}-r{round_number:02d}-rw{read_pct:03d}-bs{block_size}",
        "test": test,
        "phase": phase,
        "round": round_number,
        "block_size_bytes": block_size,
        "read_pct": read_pct,
        "output_file": "fio/x.json",
    }


def test_the_iops_test_tracks_three_cells_together():
    variables = tracking_variables("iops")
    assert [(v.read_pct, v.block_size_bytes, v.metric) for v in variables] == [
        (0, 4096, "total_iops"),
        (65, 65536, "total_iops"),
        (100, 1048576, "total_iops"),
    ]
    assert {v.series for v in variables} == {"iops"}
    assert variables[0].id == "iops.total_iops.rw000.bs4096"


def test_throughput_tracks_write_then_read_per_block_size():
    variables = tracking_variables("tp", block_sizes=[MIB])
    assert [(v.phase, v.metric, v.read_pct) for v in variables] == [
        ("tp-write", "write_bw_bytes_per_s", 0),
        ("tp-read", "read_bw_bytes_per_s", 100),
    ]
    assert len({v.series for v in tracking_variables("tp")}) == 4  # 1024 and 128 KiB, write and read


def test_latency_tracks_the_mean_of_4k_writes_and_wsat_tracks_nothing():
    (variable,) = tracking_variables("lat")
    assert (variable.metric, variable.read_pct, variable.block_size_bytes) == ("lat_mean_ns", 0, 4096)
    assert tracking_variables("wsat") == []
    with pytest.raises(ValueError, match="unknown test"):
        tracking_variables("iopz")


def test_a_series_is_steady_at_the_first_round_where_all_its_variables_are():
    runs, summaries = [], {}
    # 4 KiB settles at round 5, 64 KiB only at round 7, 1 MiB is flat
    values = {(0, 4096): [100, 100, 100, 100, 100, 100, 100], (65, 65536): [10, 50, 100, 100, 100, 100, 100]}
    values[(100, MIB)] = [7] * 7
    for (read_pct, block_size), series in values.items():
        for round_number, value in enumerate(series, start=1):
            run = _run("iops", "wdpc", round_number, block_size, read_pct)
            runs.append(run)
            summaries[run["id"]] = _summary(total_iops=float(value))
    runs.append(_run("iops", "wipc", 1, 131072, 0))  # preconditioning is never part of a series
    entries = evaluate_runs(runs, summaries)
    assert [e["variable"] for e in entries] == [v.id for v in tracking_variables("iops")]
    assert {e["steady_round"] for e in entries} == {7}
    assert all(e["steady"] and e["window"]["rounds"] == [3, 4, 5, 6, 7] for e in entries)
    assert all(e["reason"] is None for e in entries)


def test_throughput_phases_are_judged_separately():
    runs, summaries = [], {}
    for round_number in range(1, 6):
        write = _run("tp", "tp-write", round_number, MIB, 0)
        read = _run("tp", "tp-read", round_number, MIB, 100)
        runs += [write, read]
        summaries[write["id"]] = _summary(write_bw_bytes_per_s=1e9)
        summaries[read["id"]] = _summary(read_bw_bytes_per_s=1e9 * round_number)  # still climbing
    entries = {e["phase"]: e for e in evaluate_runs(runs, summaries)}
    assert entries["tp-write"]["steady"] and entries["tp-write"]["steady_round"] == 5
    assert not entries["tp-read"]["steady"]
    assert entries["tp-read"]["reason"] == "steady state not reached in 5 rounds"


def test_too_few_rounds_are_reported_honestly():
    runs = [_run("lat", "wdpc", r, 4096, 0) for r in (1, 2, 3)]
    summaries = {run["id"]: _summary(lat_mean_ns=20000.0) for run in runs}
    (entry,) = evaluate_runs(runs, summaries)
    assert entry["steady"] is False and entry["window"] is None
    assert entry["reason"] == "steady state not reached: only 3 round(s), a window needs 5"


def test_a_missing_value_makes_the_series_unsteady_with_the_run_named():
    runs = [_run("lat", "wdpc", r, 4096, 0) for r in range(1, 7)]
    summaries = {run["id"]: _summary(lat_mean_ns=20000.0) for run in runs}
    del summaries[runs[2]["id"]]
    (entry,) = evaluate_runs(runs, summaries)
    assert entry["steady"] is False
    assert runs[2]["id"] in entry["reason"]


def test_a_round_measured_twice_is_not_silently_merged():
    runs = [_run("lat", "wdpc", r, 4096, 0) for r in (1, 2, 3, 4, 5, 5)]
    runs[-1]["id"] += "-again"
    summaries = {run["id"]: _summary(lat_mean_ns=20000.0) for run in runs}
    (entry,) = evaluate_runs(runs, summaries)
    assert entry["steady"] is False
    assert "more than once" in entry["reason"]
