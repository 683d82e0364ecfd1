"""Crashes the fuzz tests found, kept as plain cases so they stay fixed."""

import copy

import pytest

from analysis import crosscheck
from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize

PKB_FIO_2_17 = "fio/GoogleCloudPlatform__PerfKitBenchmarker__tests__data__fio__fio-parser-sample-result.json"


def test_an_old_fio_io_bytes_of_1e308_kib_is_no_measurement_not_an_overflow(shared_samples):
    """fio before 2.21 counts io_bytes in KiB: 1e308 KiB has no float form (OverflowError in the bounds check)."""
    doc = parse_fio_output((shared_samples / PKB_FIO_2_17).read_bytes())
    assert doc["fio version"] == "fio-2.1.4"
    broken = copy.deepcopy(doc)
    direction = next(d for d in ("read", "write") if broken["jobs"][0][d].get("io_bytes"))
    broken["jobs"][0][direction]["io_bytes"] = 1e308
    with pytest.raises(FioOutputError, match="digit number, beyond the limit"):
        summarize(broken)


@pytest.mark.parametrize(
    "run",
    [
        {"block_size_bytes": [4096], "read_pct": "abc", "threads": "\x00", "iodepth": "", "runtime_s": "4k"},
        {"block_size_bytes": "0x" + "f" * 40, "read_pct": [], "threads": {"a": 1}, "iodepth": None, "runtime_s": []},
    ],
)
def test_job_options_are_compared_with_run_entries_of_any_shape(run):
    options = {"bs": "4k", "rw": "randrw", "rwmixread": "1e400", "numjobs": "1", "iodepth": "x", "runtime": "60"}
    failures = crosscheck.check_job_options(run=run, options=options, raw_file="fio/r1.json")
    assert failures and all(failure.severity == crosscheck.REJECT for failure in failures)


@pytest.mark.parametrize(
    "plan", [5, "plan", [], {"blocks": {"test": "iops"}}, {"blocks": [{"test": "iops", "series": 7}]}]
)
def test_a_plan_of_any_shape_is_a_reason_not_a_crash(plan):
    run = {"id": "r1", "test": "iops", "phase": "wdpc", "pattern": "randrw", "block_size_bytes": 4096, "read_pct": 65}
    [failure] = crosscheck.check_run_against_plan(run=run, plan=plan)
    assert failure.check == "plan"


@pytest.mark.parametrize(
    "plan",
    [
        {
            "blocks": [
                {"test": "iops", "series": [{"phase": "wdpc", "cells": [{"pattern": {"a": 1}}], "runtime_s": 60}]}
            ]
        },
        {"blocks": 5},
        {"blocks": [{"test": "iops", "series": {"phase": "wdpc"}}]},
        {"blocks": [{"test": "iops", "series": [{"phase": "wdpc", "cells": 7}]}]},
    ],
)
def test_the_planned_cell_time_is_read_from_a_plan_of_any_shape(plan):
    """The plausibility gate looked cells up in a set: a cell value that is an object made read_bundle raise."""
    from analysis.plausibility.measurement import planned_runtime_s
    from analysis.records import MeasurementRecord

    m = MeasurementRecord(
        run_key="r1", test="iops", phase="wdpc", series="", round_number=1, block_size_bytes=4096, read_pct=65,
        summary=None, raw_file="fio/r1.json", json_path="$.jobs[*]", pattern="randrw",
    )  # fmt: skip
    assert planned_runtime_s(plan, m) is None
