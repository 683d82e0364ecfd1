"""Each plausibility gate passes real fio figures just inside its bound and fails them just outside."""

import dataclasses
import json
import math
from datetime import datetime, timedelta, timezone

import pytest

from analysis import crosscheck, pcie, plausibility
from analysis.identity import DriveIdentity
from analysis.plausibility import HOLD, NOT_COMPLIANT, REJECT
from analysis.records import MeasurementRecord, SubmissionRecord, TestRunRecord
from nvmedb_client.fio_output import parse_fio_output, summarize
from nvmedb_client.plan import build_plan, plan_to_dict
from nvmedb_client.pts.surface import SurfaceOptions

SSSPT_4K = "ssspt-hp-iops-1/wdpc_bs4KB_read65_round1.json"  # fio 3.8, 2 threads × QD 16, 60 s, randrw 65 % reads
SMART = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"
START = datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)
JUST = 1e-6  # a relative step across a bound
GEN3_X4 = pcie.LinkEnd(speed_gts=8.0, width=4, capable_speed_gts=16.0, capable_width=4, max_payload_bytes=256)


def _measurement(shared_samples, name=SSSPT_4K, **changes) -> MeasurementRecord:
    doc = parse_fio_output((shared_samples / name).read_bytes())
    options = crosscheck.job_options(doc)
    summary = summarize(doc)
    runtime = crosscheck.direction_runtime_s(doc)
    m = MeasurementRecord(
        run_key="iops-r01-rw065-bs4096",
        test="iops",
        phase="wdpc",
        series="",
        round_number=1,
        block_size_bytes=crosscheck.parse_size(options["bs"]),
        read_pct=65,
        summary=summary,
        raw_file="fio/x.json",
        json_path="$.jobs[*]",
        threads=int(options.get("numjobs", 1)),
        iodepth=int(options.get("iodepth", 1)),
        started_at=START,
        finished_at=START + timedelta(seconds=runtime + 1),
        pattern="randrw",
        declared_runtime_s=60,
        runtime_s=runtime,
    )
    return dataclasses.replace(m, **changes)


def _summary(m, **changes):
    return dataclasses.replace(m, summary=dataclasses.replace(m.summary, **changes))


def _record(*measurements, target_kind="device", link=None, **fields) -> SubmissionRecord:
    identity = DriveIdentity("Acme", None, "Acme 1", "A1", 10**12, "FW", "SN")
    record = SubmissionRecord(source="client", identity=identity, target_kind=target_kind, **fields)
    record.link = pcie.assess_link(link) if link else None
    record.test_runs = [TestRunRecord(test="iops", measurements=list(measurements))]
    return record


@pytest.fixture
def m(shared_samples):
    return _measurement(shared_samples)


def _severities(failures, rule):
    return [f.severity for f in failures if f.rule == rule]


# --- finite and non-negative ---------------------------------------------------------------------------------------


def test_every_figure_of_a_real_run_is_finite_and_not_negative(m):
    assert plausibility.check_finite_non_negative(m) == []
    assert plausibility.check_finite_non_negative(_summary(m, read_iops=0.0)) == []


@pytest.mark.parametrize(
    "field,value",
    [("read_iops", -1e-9), ("write_bw_bytes_per_s", -1.0), ("lat_mean_ns", math.nan), ("total_iops", math.inf)],
)
def test_a_negative_or_non_finite_figure_is_rejected(m, field, value):
    failures = plausibility.check_finite_non_negative(_summary(m, **{field: value}))
    assert _severities(failures, "finite_non_negative") == [REJECT] and field in failures[0].reason


def test_a_nan_declared_runtime_is_rejected(m):
    failures = plausibility.check_finite_non_negative(dataclasses.replace(m, declared_runtime_s=math.nan))
    assert _severities(failures, "finite_non_negative") == [REJECT]


# --- the link ------------------------------------------------------------------------------------------------------


def test_an_unknown_link_is_bounded_by_the_fastest_link_that_exists(m):
    bounds = plausibility.link_bounds(_record(m, link=None))
    assert bounds.negotiated is None
    assert bounds.capability == pytest.approx(pcie.usable_bandwidth(64.0, 16, 4096))
    limit = bounds.capability * (1 + plausibility.LINK_MARGIN)
    inside = _summary(m, read_bw_bytes_per_s=limit * (1 - JUST))
    outside = _summary(m, read_bw_bytes_per_s=limit * (1 + JUST))
    assert plausibility.check_link_bandwidth(inside, bounds) == []
    assert _severities(plausibility.check_link_bandwidth(outside, bounds), "link_bandwidth") == [REJECT]


def test_bandwidth_over_the_negotiated_link_but_within_its_capability_is_held(m):
    bounds = plausibility.link_bounds(_record(m, link=GEN3_X4))
    negotiated = pcie.usable_bandwidth(8.0, 4, 256)
    assert bounds.negotiated == pytest.approx(negotiated)
    assert bounds.capability == pytest.approx(pcie.usable_bandwidth(16.0, 4, 4096))
    limit = negotiated * (1 + plausibility.LINK_MARGIN)
    assert plausibility.check_link_bandwidth(_summary(m, write_bw_bytes_per_s=limit * (1 - JUST)), bounds) == []
    held = plausibility.check_link_bandwidth(_summary(m, write_bw_bytes_per_s=limit * (1 + JUST)), bounds)
    assert _severities(held, "link_bandwidth") == [HOLD] and "Gen3 x4" in held[0].reason
    beyond = bounds.capability * (1 + plausibility.LINK_MARGIN) * (1 + JUST)
    rejected = plausibility.check_link_bandwidth(_summary(m, write_bw_bytes_per_s=beyond), bounds)
    assert _severities(rejected, "link_bandwidth") == [REJECT]


def test_a_file_targets_io_is_bounded_only_by_the_fastest_link(m):
    bounds = plausibility.link_bounds(_record(m, target_kind="file", link=GEN3_X4))
    assert bounds.negotiated is None and bounds.capability == plausibility.FASTEST_LINK_BYTES_PER_S


def test_a_unified_total_may_use_both_directions_of_the_link(m):
    bounds = plausibility.link_bounds(_record(m))
    limit = 2 * bounds.capability * (1 + plausibility.LINK_MARGIN)
    unified = _summary(m, read_bw_bytes_per_s=None, write_bw_bytes_per_s=None, read_iops=None, write_iops=None)
    assert plausibility.check_link_bandwidth(_summary(unified, total_bw_bytes_per_s=limit * (1 - JUST)), bounds) == []
    over = plausibility.check_link_bandwidth(_summary(unified, total_bw_bytes_per_s=limit * (1 + JUST)), bounds)
    assert _severities(over, "link_bandwidth") == [REJECT]


def test_iops_are_bounded_by_the_link_and_the_block_size(m):
    bounds = plausibility.link_bounds(_record(m, link=GEN3_X4))
    limit = bounds.negotiated * (1 + plausibility.LINK_MARGIN) / 4096
    assert plausibility.check_link_iops(_summary(m, read_iops=limit * (1 - JUST)), bounds) == []
    assert _severities(
        plausibility.check_link_iops(_summary(m, read_iops=limit * (1 + JUST)), bounds), "link_iops"
    ) == [HOLD]


def test_iops_of_a_mixed_block_size_are_bounded_at_one_512_byte_block(m):
    bounds = plausibility.link_bounds(_record(m))
    unknown = dataclasses.replace(m, block_size_bytes=0)
    limit = bounds.capability * (1 + plausibility.LINK_MARGIN) / 512
    assert plausibility.check_link_iops(_summary(unknown, write_iops=limit * (1 - JUST)), bounds) == []
    assert plausibility.check_link_iops(_summary(unknown, write_iops=limit * (1 + JUST)), bounds)


def test_the_reported_25_billion_iops_on_a_gen3_x4_link_are_rejected(m):
    bounds = plausibility.link_bounds(_record(m, link=GEN3_X4))
    failures = plausibility.check_link_iops(_summary(m, read_iops=2.5e10), bounds)
    assert _severities(failures, "link_iops") == [REJECT]


# --- latency -------------------------------------------------------------------------------------------------------


def test_a_real_runs_latency_passes_and_zero_latency_is_rejected(m):
    bounds = plausibility.link_bounds(_record(m))
    assert plausibility.check_latency_floor(m, bounds, device=True) == []
    zero = _summary(m, lat_mean_ns=0.0)
    assert _severities(plausibility.check_latency_floor(zero, bounds, device=False), "latency_floor") == [REJECT]


def test_a_device_latency_below_one_microsecond_is_held(m):
    bounds = plausibility.link_bounds(_record(m))
    floor = plausibility.MIN_DEVICE_LATENCY_NS
    inside = _summary(m, read_lat_mean_ns=floor, write_lat_mean_ns=floor, lat_mean_ns=floor)
    assert plausibility.check_latency_floor(inside, bounds, device=True) == []
    below = _summary(m, lat_mean_ns=floor * (1 - JUST))
    assert _severities(plausibility.check_latency_floor(below, bounds, device=True), "latency_floor") == [HOLD]
    assert plausibility.check_latency_floor(below, bounds, device=False) == []  # a file may sit in the page cache


def test_a_latency_shorter_than_moving_the_block_over_the_link_is_rejected(shared_samples):
    m = _measurement(shared_samples, "ssspt-hp-iops-1/wdpc_bs1024KB_read100_round1.json")
    bounds = plausibility.link_bounds(_record(m))
    transfer = m.block_size_bytes / (bounds.capability * (1 + plausibility.LINK_MARGIN)) * 1e9
    inside = _summary(m, read_lat_mean_ns=transfer * (1 + JUST), lat_mean_ns=transfer * (1 + JUST))
    assert plausibility.check_latency_floor(inside, bounds, device=False) == []
    below = _summary(m, read_lat_mean_ns=transfer * (1 - JUST))
    assert _severities(plausibility.check_latency_floor(below, bounds, device=False), "latency_floor") == [REJECT]


def test_a_mean_latency_above_its_maximum_is_rejected(m):
    bounds = plausibility.link_bounds(_record(m))
    failures = plausibility.check_latency_floor(
        _summary(m, lat_max_ns=m.summary.lat_mean_ns * (1 - JUST)), bounds, device=True
    )
    assert _severities(failures, "latency_floor") == [REJECT]


# --- Little's law --------------------------------------------------------------------------------------------------


def test_every_real_sample_keeps_no_more_ios_in_flight_than_its_depth(shared_samples):
    """Including a psync run capped at depth 1 with iodepth=8 and a CPU-bound QD1 run: their latency is far *below*
    depth / IOPS, which is why Little's law bounds latency from above only."""
    names = [f"ssspt-hp-iops-1/{p.name}" for p in sorted((shared_samples / "ssspt-hp-iops-1").glob("wdpc_*.json"))]
    names += [
        "fio/local__fio-3.33__stdout_psync_iodepth_note_prefix.json",
        "fio/ljishen__SSSPT__analysis__data__platforms__rockpro64__lat__1__wdpc_bs4KB_read0_round1.json",
        "fio/local__fio-3.33__client_server_client_stats.json",
        "fio/local__fio-3.33__numjobs3_group_reporting.json",
    ]
    for name in names:
        assert plausibility.check_littles_law(_measurement(shared_samples, name)) == [], name
    assert len(names) > 300


def test_more_ios_in_flight_than_threads_times_depth_are_rejected(m):
    depth = m.threads * m.iodepth
    limit_ns = depth * (1 + plausibility.LITTLE_MARGIN) / m.summary.total_iops * 1e9
    assert plausibility.check_littles_law(_summary(m, lat_mean_ns=limit_ns * (1 - JUST))) == []
    failures = plausibility.check_littles_law(_summary(m, lat_mean_ns=limit_ns * (1 + JUST)))
    assert _severities(failures, "littles_law") == [REJECT] and f"= {depth} allow" in failures[0].reason


def test_a_run_without_a_declared_depth_is_not_compliant(m):
    failures = plausibility.check_littles_law(dataclasses.replace(m, iodepth=None))
    assert _severities(failures, "littles_law") == [NOT_COMPLIANT]


# --- runtime -------------------------------------------------------------------------------------------------------


def _plan(runtime_s):
    series = {
        "phase": "wdpc",
        "runtime_s": runtime_s,
        "cells": [{"pattern": "randrw", "block_size_bytes": 4096, "read_pct": 65}],
    }
    return {"blocks": [{"test": "iops", "series": [series]}]}


def test_a_cell_as_long_as_the_plan_passes_and_a_shorter_one_is_rejected(m):
    planned = m.runtime_s / (1 - plausibility.RUNTIME_TOLERANCE)
    assert plausibility.check_cell_runtime(m, _plan(planned * (1 - JUST))) == []
    failures = plausibility.check_cell_runtime(m, _plan(planned * (1 + JUST)))
    assert _severities(failures, "cell_runtime") == [REJECT] and "shorter than the planned" in failures[0].reason


def test_the_plan_not_the_run_sets_the_cell_time(m):
    undeclared = dataclasses.replace(m, declared_runtime_s=None)
    assert _severities(plausibility.check_cell_runtime(undeclared, _plan(120)), "cell_runtime") == [REJECT]


def test_a_cell_with_no_planned_time_is_not_a_pass(m):
    failures = plausibility.check_cell_runtime(dataclasses.replace(m, declared_runtime_s=None), {})
    assert _severities(failures, "cell_runtime") == [NOT_COMPLIANT]


@pytest.mark.parametrize("changes", [{"runtime_s": None}, {"runtime_s": math.nan}, {"declared_runtime_s": math.nan}])
def test_a_missing_or_non_finite_runtime_is_rejected(m, changes):
    failures = plausibility.check_cell_runtime(dataclasses.replace(m, **changes), _plan(60))
    assert _severities(failures, "cell_runtime") == [REJECT]


def test_fios_runtime_must_fit_between_the_runs_start_and_finish(m):
    window = m.runtime_s - 2 * plausibility.CLOCK_SLACK_S
    fits = dataclasses.replace(m, finished_at=START + timedelta(seconds=window))
    assert plausibility.check_run_window(fits) == []
    short = dataclasses.replace(m, finished_at=START + timedelta(seconds=window - 0.01))
    assert _severities(plausibility.check_run_window(short), "run_window") == [REJECT]


# --- smart-logs ----------------------------------------------------------------------------------------------------


@pytest.fixture
def smart(shared_samples):
    from nvmedb_client.system.nvme import parse_smart_log

    return parse_smart_log((shared_samples / SMART).read_bytes())


def test_a_real_smart_log_is_plausible(smart):
    assert plausibility.check_smart_values(smart, "s") == []


def test_a_negative_counter_or_an_impossible_byte_field_is_rejected(smart):
    assert _severities(plausibility.check_smart_values(smart | {"data_units_written": -1}, "s"), "smart_values") == [
        REJECT
    ]
    assert plausibility.check_smart_values(smart | {"percent_used": 255}, "s") == []
    assert _severities(plausibility.check_smart_values(smart | {"percent_used": 256}, "s"), "smart_values") == [REJECT]


def test_a_temperature_no_working_drive_reports_is_held(smart):
    top = plausibility.MAX_TEMPERATURE_K
    assert plausibility.check_smart_values(smart | {"temperature_k": top}, "s") == []
    assert _severities(plausibility.check_smart_values(smart | {"temperature_k": top + 0.01}, "s"), "smart_values") == [
        HOLD
    ]
    low = plausibility.MIN_TEMPERATURE_K
    assert _severities(plausibility.check_smart_values(smart | {"temperature_k": low - 0.01}, "s"), "smart_values") == [
        HOLD
    ]


def test_a_counter_that_goes_backwards_is_rejected(smart):
    bounds = plausibility.link_bounds(_record())
    after = smart | {"host_write_commands": smart["host_write_commands"] - 1}
    failures = plausibility.check_smart_progress(smart, after, window_s=60, bounds=bounds, label="r")
    assert _severities(failures, "smart_progress") == [REJECT] and "went backwards" in failures[0].reason


def test_data_units_cannot_grow_faster_than_the_link_over_the_wall_clock(smart):
    """Scaling fio's bytes and the counters together does not scale the clock: 60 s bound what the drive could do."""
    bounds = plausibility.link_bounds(_record(link=GEN3_X4))
    seconds = 60 + 2 * plausibility.CLOCK_SLACK_S
    units = bounds.negotiated * (1 + plausibility.LINK_MARGIN) * seconds / 512_000
    inside = smart | {"data_units_written": smart["data_units_written"] + math.floor(units) + 2}
    outside = smart | {"data_units_written": smart["data_units_written"] + math.ceil(units) + 3}
    assert plausibility.check_smart_progress(smart, inside, window_s=60, bounds=bounds, label="r") == []
    failures = plausibility.check_smart_progress(smart, outside, window_s=60, bounds=bounds, label="r")
    assert _severities(failures, "smart_progress") == [HOLD]  # beyond Gen3 x4, within its Gen4 capability
    far = smart | {"data_units_written": smart["data_units_written"] + 1000 * math.ceil(units)}
    assert _severities(
        plausibility.check_smart_progress(smart, far, window_s=60, bounds=bounds, label="r"), "smart_progress"
    ) == [REJECT]


def test_power_on_hours_advance_no_faster_than_the_wall_clock(smart):
    bounds = plausibility.link_bounds(_record())
    hours = smart["power_on_hours"]
    ok = smart | {"power_on_hours": hours + 2}  # 60 s: one started hour and one of granularity
    assert plausibility.check_smart_progress(smart, ok, window_s=60, bounds=bounds, label="r") == []
    fast = smart | {"power_on_hours": hours + 3}
    assert _severities(
        plausibility.check_smart_progress(smart, fast, window_s=60, bounds=bounds, label="r"), "smart_progress"
    ) == [HOLD]


def test_power_on_hours_follow_the_clock_over_the_whole_bundle(smart):
    hours, later, busy = smart["power_on_hours"], START + timedelta(hours=10), 10 * 3600

    def check(advanced, busy_s=busy):
        snapshots = [(START, smart), (later, smart | {"power_on_hours": hours + advanced})]
        return plausibility.check_power_on_clock(snapshots, busy_s=busy_s)

    assert check(8) == [] and check(12) == []  # one hour of granularity at each end
    assert _severities(check(7), "power_on_clock") == [HOLD]  # a smart-log copied from an earlier session
    assert _severities(check(13), "power_on_clock") == [HOLD]  # faster than the clock
    assert check(0, busy_s=2 * 3600) == []  # a resumed run: the host was off between its sessions


# --- evidence ------------------------------------------------------------------------------------------------------


def test_a_device_run_without_smart_logs_is_held_and_a_file_run_is_not(m, smart):
    assert _severities(plausibility.check_smart_logs_present(_record(m)), "smart_logs_missing") == [HOLD]
    assert plausibility.check_smart_logs_present(_record(m, target_kind="file")) == []
    logged = dataclasses.replace(m, smart_before=smart, smart_after=smart)
    assert plausibility.check_smart_logs_present(_record(logged)) == []


def _pts_record(m, **fields):
    plan = plan_to_dict(build_plan(tests=["iops"], edition="enterprise", profile="pts", capacity_bytes=10**12))
    values = {"profile": "pts", "edition": "enterprise", "compliant": True, "purge_method": "format-ses1", "plan": plan}
    return _record(m, **(values | fields))


def test_a_compliance_claim_with_the_pts_plan_on_a_device_passes(m):
    assert plausibility.check_compliance_claim(_pts_record(m)) == []


@pytest.mark.parametrize(
    "fields,words",
    [
        ({"profile": "quick"}, "quick profile"),
        ({"target_kind": "file"}, "file target"),
        ({"plan": {}}, "no plan"),
        ({"purge_method": ""}, "no purge"),
        ({"purge_method": "blkdiscard"}, "blkdiscard"),
    ],
)
def test_a_compliance_claim_without_its_evidence_is_held(m, fields, words):
    failures = plausibility.check_compliance_claim(_pts_record(m, **fields))
    assert _severities(failures, "compliance_evidence") == [HOLD] and words in failures[0].reason


def test_a_compliance_claim_with_five_second_cells_in_its_plan_is_held(m):
    record = _pts_record(m)
    record.plan = json.loads(json.dumps(record.plan))
    record.plan["blocks"][0]["series"][0]["runtime_s"] = 5
    assert "not the PTS plan" in plausibility.check_compliance_claim(record)[0].reason


def test_a_compliance_claim_beside_a_surface_with_a_custom_grid_is_not_held(m):
    """The surface is an nvmedb extension, never part of the PTS plan: its grid, any grid, is not compared."""
    grid = SurfaceOptions(min_bs=8192, max_bs=1 << 20, bs_step=4, max_qd=64, qd_step=4, cell_s=3.0)
    built = build_plan(tests=["iops", "surface"], edition="enterprise", profile="pts", capacity_bytes=10**12,
                       surface=grid)  # fmt: skip
    assert any(block.test == "surface" for block in built.blocks)
    record = _pts_record(m, plan=plan_to_dict(built))
    assert plausibility.check_compliance_claim(record) == []
    record.plan["blocks"][0]["series"][0]["runtime_s"] = 5  # the PTS blocks still are
    assert "not the PTS plan" in plausibility.check_compliance_claim(record)[0].reason


# --- the whole record ----------------------------------------------------------------------------------------------


def test_bus_bound_is_informational_only_up_to_the_link_margin():
    assert plausibility.bus_bound_is_plausible(pcie.BUS_BOUND_UTILIZATION)
    assert plausibility.bus_bound_is_plausible(1 + plausibility.LINK_MARGIN)
    assert not plausibility.bus_bound_is_plausible((1 + plausibility.LINK_MARGIN) * (1 + JUST))
    assert not plausibility.bus_bound_is_plausible(None)


def test_apply_records_each_failure_once_and_any_failure_makes_the_run_non_compliant(m, smart):
    logged = dataclasses.replace(m, smart_before=smart, smart_after=smart)
    record = _pts_record(_summary(logged, read_iops=-5.0))
    failures = plausibility.apply(record)
    assert plausibility.rule_names(failures) == {"finite_non_negative"}
    assert record.reject_reasons and record.reject_reasons[0].startswith("finite_non_negative: ")
    assert record.compliant is False and record.compliance_reasons == record.reject_reasons
    assert plausibility.apply(record) == [] and len(record.reject_reasons) == 1


def test_every_rule_is_listed_for_the_methodology_page():
    import inspect

    checks = {name for name, _ in inspect.getmembers(plausibility, inspect.isfunction) if name.startswith("check_")}
    assert len(plausibility.RULES) >= len(checks) - 1  # check_power_on_clock and check_smart_progress share a rule


# --- transfer size and sizes ---------------------------------------------------------------------------------------


def test_bandwidth_over_iops_is_the_block_size_within_fios_rounding(m):
    iops = m.summary.read_iops
    assert plausibility.check_transfer_size(m, device=True) == []
    off = _summary(m, read_iops=iops * 1.02, read_bw_bytes_per_s=m.summary.read_bw_bytes_per_s)
    assert _severities(plausibility.check_transfer_size(off, device=True), "transfer_size") == [REJECT]
    near = _summary(m, read_iops=iops * 1.009)
    assert plausibility.check_transfer_size(near, device=True) == []


def test_a_mix_of_block_sizes_moves_at_least_512_bytes_per_io_on_a_device(m):
    mixed = dataclasses.replace(m, block_size_bytes=0)
    bw = m.summary.read_bw_bytes_per_s
    at_floor = _summary(mixed, read_iops=bw / (512 * (1 - crosscheck.ARITHMETIC_TOLERANCE)) * (1 - JUST))
    assert plausibility.check_transfer_size(at_floor, device=True) == []
    below = _summary(mixed, read_iops=bw / (512 * (1 - crosscheck.ARITHMETIC_TOLERANCE)) * (1 + JUST))
    assert _severities(plausibility.check_transfer_size(below, device=True), "transfer_size") == [REJECT]
    assert plausibility.check_transfer_size(below, device=False) == []


def test_the_active_range_lies_inside_the_target(m):
    assert plausibility.check_sizes(_record(m, target_size_bytes=2**30, active_range_bytes=2**30)) == []
    over = plausibility.check_sizes(_record(m, target_size_bytes=2**30, active_range_bytes=2**30 + 1))
    assert _severities(over, "sizes") == [REJECT]
    assert _severities(plausibility.check_sizes(_record(m, target_size_bytes=-1)), "sizes") == [REJECT]


def test_every_real_smart_log_sample_is_plausible(shared_samples):
    from nvmedb_client.system.nvme import parse_smart_log

    paths = sorted((shared_samples / "nvme-cli").glob("*smart*"))
    for path in paths:
        assert plausibility.check_smart_values(parse_smart_log(path.read_bytes()), path.name) == [], path.name
    assert len(paths) >= 4


@pytest.mark.parametrize(
    "huge", [10**400, -(10**5000), math.inf, -math.inf, math.nan], ids=["1e400", "-1e5000", "inf", "-inf", "nan"]
)
def test_values_beyond_any_float_fail_a_gate_and_crash_nothing(m, smart, huge):
    big_int = isinstance(huge, int)
    hostile = dataclasses.replace(
        _summary(m, read_iops=huge, lat_mean_ns=huge),
        block_size_bytes=huge if big_int else m.block_size_bytes,
        iodepth=huge if big_int else m.iodepth,
    )
    hostile_smart = dataclasses.replace(
        m,
        smart_before=smart | {"data_units_written": huge, "temperature_k": huge, "power_on_hours": huge},
        smart_after=smart,
        started_at=datetime(2026, 11, 22, 9, 0),  # naive, beside an aware finish
    )
    record = _record(hostile, hostile_smart, target_size_bytes=huge, active_range_bytes=1)
    failures = plausibility.apply(record)
    assert record.reject_reasons and all(len(reason) <= 300 for reason in record.reject_reasons)
    assert {"finite_non_negative", "smart_values", "sizes"} <= plausibility.rule_names(failures)


def test_a_rule_failed_by_many_runs_is_reported_five_times_and_counted(m):
    negative = _summary(m, read_iops=-1.0)
    runs = [dataclasses.replace(negative, run_key=f"r{i}", raw_file=f"fio/r{i}.json") for i in range(7)]
    record = _record(*runs, target_kind="file")
    failures = plausibility.apply(record)
    assert len(failures) == 7 and plausibility.rule_names(failures) == {"finite_non_negative"}
    assert len(record.reject_reasons) == plausibility.REASONS_PER_RULE + 1
    assert record.reject_reasons[-1] == "finite_non_negative: and 2 more like the above"


def test_the_methodology_page_lists_every_gate(client, db):
    html = client.get("/methodology/").content.decode()
    for rule in plausibility.RULES:
        assert f"<code>{rule}</code>" in html
