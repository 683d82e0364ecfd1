"""Each cross-check passes real fio output and catches its own kind of tampering."""

import copy
import json
from datetime import datetime, timedelta, timezone

import pytest

from analysis import crosscheck

SSSPT_4K = "ssspt-hp-iops-1/wdpc_bs4KB_read65_round1.json"


@pytest.fixture
def doc(shared_samples):
    return json.loads((shared_samples / SSSPT_4K).read_text())


@pytest.fixture
def run():
    return {
        "id": "iops-r01-rw065-bs4096",
        "block_size_bytes": 4096,
        "read_pct": 65,
        "pattern": "randrw",
        "threads": 2,
        "iodepth": 16,
        "runtime_s": 60,
    }


def test_every_real_fio_sample_passes_the_arithmetic_checks(shared_samples):
    checked = 0
    for path in sorted((shared_samples / "ssspt-hp-iops-1").glob("*.json")):
        doc = json.loads(path.read_text())
        bs = crosscheck.parse_size(crosscheck.job_options(doc)["bs"])
        assert crosscheck.check_iops_bandwidth(doc, block_size_bytes=bs, raw_file=path.name) == []
        assert crosscheck.check_bytes_runtime(doc, raw_file=path.name) == []
        checked += 1
    assert checked > 300


def test_inflated_iops_are_caught_by_the_iops_bandwidth_check(doc):
    doc["jobs"][0]["read"]["iops"] *= 1.5
    failures = crosscheck.check_iops_bandwidth(doc, block_size_bytes=4096, raw_file="f.json")
    assert [f.check for f in failures] == ["iops_bandwidth"]
    assert "$.jobs[0].read" in failures[0].reason and failures[0].severity == crosscheck.REJECT
    assert crosscheck.check_bytes_runtime(doc, raw_file="f.json") == []


def test_inflated_bandwidth_is_caught_by_both_arithmetic_checks(doc):
    doc["jobs"][0]["write"]["bw_bytes"] *= 2
    doc["jobs"][0]["write"]["bw"] *= 2
    assert crosscheck.check_iops_bandwidth(doc, block_size_bytes=4096, raw_file="f")
    assert crosscheck.check_bytes_runtime(doc, raw_file="f")


def test_inflated_byte_counts_are_caught_by_the_bytes_runtime_check(doc):
    doc["jobs"][0]["write"]["io_bytes"] *= 1.3
    doc["jobs"][0]["write"]["io_kbytes"] *= 1.3
    failures = crosscheck.check_bytes_runtime(doc, raw_file="f")
    assert [f.check for f in failures] == ["bytes_runtime"] and "io_bytes" in failures[0].reason
    assert crosscheck.check_iops_bandwidth(doc, block_size_bytes=4096, raw_file="f") == []


def test_a_run_cut_short_of_its_declared_runtime_is_caught(doc):
    assert crosscheck.check_bytes_runtime(doc, raw_file="f", declared_runtime_s=60) == []
    failures = crosscheck.check_bytes_runtime(doc, raw_file="f", declared_runtime_s=120)
    assert failures and "of the 120 s" in failures[0].reason


def test_job_options_that_differ_from_the_plan_are_caught(doc, run):
    options = crosscheck.job_options(doc)
    assert crosscheck.check_job_options(run=run, options=options, raw_file="f") == []
    for key, value, words in (
        ("block_size_bytes", 8192, "block size"),
        ("read_pct", 70, "read share"),
        ("iodepth", 32, "iodepth"),
        ("threads", 4, "threads"),
        ("runtime_s", 30, "runtime"),
        ("pattern", "randread", "pattern"),
    ):
        failures = crosscheck.check_job_options(run=run | {key: value}, options=options, raw_file="f")
        assert failures and all(f.check == "job_options" for f in failures), key
        assert any(words in f.reason for f in failures), key


def test_fio_size_suffixes_follow_fio_kb_base_rules():
    assert crosscheck.parse_size("4k") == crosscheck.parse_size("4KB") == 4096
    assert crosscheck.parse_size("4KiB") == 4000  # fio's default kb_base=1024 "compatibility mode"
    assert crosscheck.parse_size("4KiB", kb_base=1000) == 4096
    assert crosscheck.parse_size("1024KB") == 1048576 and crosscheck.parse_size("512B") == 512
    assert crosscheck.parse_size("4k:8k") is None


def _t(minutes):
    return datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc) + timedelta(minutes=minutes)


def test_runs_in_order_pass_and_a_clock_going_backwards_is_caught():
    runs = [
        {"id": "a", "started_at": _t(0), "finished_at": _t(1)},
        {"id": "b", "started_at": _t(1), "finished_at": _t(2)},
    ]
    assert crosscheck.check_timestamps(started_at=_t(0), finished_at=_t(3), runs=runs) == []
    swapped = copy.deepcopy(runs)
    swapped[1]["started_at"] = _t(0.5)
    failures = crosscheck.check_timestamps(started_at=_t(0), finished_at=_t(3), runs=swapped)
    assert failures and "before run a ended" in failures[0].reason
    backwards = [{"id": "a", "started_at": _t(2), "finished_at": _t(1)}]
    assert (
        "before it started" in crosscheck.check_timestamps(started_at=None, finished_at=None, runs=backwards)[0].reason
    )


def test_a_fio_timestamp_outside_its_run_is_caught():
    runs = [{"id": "a", "started_at": _t(0), "finished_at": _t(1)}]
    inside = _t(1).timestamp()
    assert crosscheck.check_timestamps(started_at=None, finished_at=None, runs=runs, fio_end_times={"a": inside}) == []
    failures = crosscheck.check_timestamps(
        started_at=None, finished_at=None, runs=runs, fio_end_times={"a": inside + 3600}
    )
    assert failures and "fio's own timestamp" in failures[0].reason


def _smart(read_units, written_units):
    return {"data_units_read": read_units, "data_units_written": written_units}


def test_smart_counters_that_moved_with_fio_pass():
    moved = 1000 * 512_000
    assert (
        crosscheck.check_smart_counters(
            before=_smart(10, 10), after=_smart(10 + 1000, 10 + 1001), read_bytes=moved, write_bytes=moved, label="r"
        )
        == []
    )


def test_a_drive_that_saw_less_io_than_fio_claims_holds_the_submission():
    failures = crosscheck.check_smart_counters(
        before=_smart(10, 10), after=_smart(10, 10 + 500), read_bytes=0, write_bytes=1000 * 512_000, label="run x"
    )
    assert [f.severity for f in failures] == [crosscheck.HOLD] and "only" in failures[0].reason


def test_a_drive_that_saw_far_more_io_than_fio_holds_the_submission():
    failures = crosscheck.check_smart_counters(
        before=_smart(0, 0), after=_smart(100_000, 0), read_bytes=1000 * 512_000, write_bytes=0, label="run x"
    )
    assert failures and "far more" in failures[0].reason


def test_a_run_outside_the_plan_is_caught():
    plan = {
        "blocks": [
            {
                "test": "iops",
                "wipc": {"run_id": "iops-wipc"},
                "series": [
                    {
                        "phase": "wdpc",
                        "threads": 4,
                        "iodepth": 32,
                        "runtime_s": 60,
                        "max_rounds": 25,
                        "cells": [{"pattern": "randrw", "block_size_bytes": 4096, "read_pct": 0}],
                    }
                ],
            }
        ]
    }
    run = {
        "id": "r",
        "test": "iops",
        "phase": "wdpc",
        "round": 3,
        "pattern": "randrw",
        "block_size_bytes": 4096,
        "read_pct": 0,
        "threads": 4,
        "iodepth": 32,
        "runtime_s": 60,
    }
    assert crosscheck.check_run_against_plan(run=run, plan=plan) == []
    assert "iodepth 8" in crosscheck.check_run_against_plan(run=run | {"iodepth": 8}, plan=plan)[0].reason
    assert "not in the plan" in crosscheck.check_run_against_plan(run=run | {"read_pct": 5}, plan=plan)[0].reason
    assert "no tp test" in crosscheck.check_run_against_plan(run=run | {"test": "tp"}, plan=plan)[0].reason
    assert "round 26" in crosscheck.check_run_against_plan(run=run | {"round": 26}, plan=plan)[0].reason


def test_every_fio_sample_with_a_result_passes_the_arithmetic_checks(shared_samples):
    from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize

    passed = 0
    for path in sorted((shared_samples / "fio").iterdir()):
        try:
            doc = parse_fio_output(path.read_bytes())
            summarize(doc)
        except FioOutputError:
            continue  # empty, error-only or failed-job outputs hold no measurement (ingest rejects them with why)
        options = crosscheck.job_options(doc)
        bs = crosscheck.parse_size(options["bs"]) if "bs" in options else None
        assert crosscheck.check_iops_bandwidth(doc, block_size_bytes=bs, raw_file=path.name) == [], path.name
        assert crosscheck.check_bytes_runtime(doc, raw_file=path.name) == [], path.name
        passed += 1
    assert passed >= 24


def test_job_file_options_keep_nothing_of_the_file_read_before():
    """The parser is reused between job files: what one file set (its sections, its DEFAULT section, a file cut
    short by a parse error) never shows in the next file's options."""
    first = "[DEFAULT]\nverify=md5\n[global]\nioengine=libaio\nbs=128k\n[seq]\nrw=read\ntime_based\n"
    assert crosscheck.job_file_options(first) == {
        "verify": "md5", "ioengine": "libaio", "bs": "128k", "rw": "read", "time_based": "1",
    }  # fmt: skip
    assert crosscheck.job_file_options("iodepth=32\n[cell]\nrw=randread\n") == {}  # an option before any section
    assert crosscheck.job_file_options("[cell]\nbs=4k\nrw=randwrite\n") == {"bs": "4k", "rw": "randwrite"}
    assert crosscheck.job_file_options("") == {} and crosscheck.job_file_options(None) == {}
