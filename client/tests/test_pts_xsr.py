"""XSR: the plan against the spec's access groups, and the time-to-recover derivation at its boundaries."""

import pytest

from nvmedb_client import fio_jobs
from nvmedb_client.plan import build_plan, plan_to_dict, quick_profile
from nvmedb_client.pts import xsr
from nvmedb_client.pts.interval_log import IntervalLogError

KIB = 1024


def test_the_pts_plan_is_seq_1024k_then_rnd_8k_then_seq_1024k_at_tc1_qd32():
    plan = build_plan(tests=["xsr"], capacity_bytes=10**12)
    (block,) = plan.blocks
    assert block.purge and not block.wipc and block.series == ()
    groups = [(s.phase, s.pattern, s.block_size_bytes, s.runtime_s, s.threads, s.iodepth) for s in block.segments]
    assert groups == [
        ("xsr-g1", "write", 1024 * KIB, 8 * 3600, 1, 32),
        ("xsr-g2", "randwrite", 8 * KIB, 6 * 3600, 1, 32),
        ("xsr-g3", "write", 1024 * KIB, 8 * 3600, 1, 32),
    ]
    assert {s.logs for s in block.segments} == {("bw",)}
    assert plan_to_dict(plan)["estimate"]["duration_s"]["min"] >= 22 * 3600


def test_the_quick_plan_takes_seconds():
    plan = build_plan(tests=["xsr"], profile=quick_profile(1.0), capacity_bytes=256 * 2**20, target_kind="file")
    assert sum(s.runtime_s for s in plan.blocks[0].segments) <= 12


def test_the_job_logs_bandwidth_per_interval_without_idle():
    plan = build_plan(tests=["xsr"], capacity_bytes=10**12)
    text = fio_jobs.render_segment(
        name="xsr-g2", filename="/dev/nvme0n1", segment=plan.blocks[0].segments[1], range_bytes=2**30, ioengine="libaio"
    )
    assert "write_bw_log=${NVMEDB_LOG_PREFIX}" in text and "log_avg_msec=5000" in text
    assert "thinktime" not in text


def test_time_to_recover_starts_the_first_five_intervals_all_within_the_band_of_the_final_level():
    values = [10.0, 40.0, 60.0, 80.0, 100, 100, 130, 100, 100, 100, 100, 100, 100]
    result = xsr.recovery(values, 1000)
    assert result["final_bytes_per_s"] == 100.0
    # from interval 3 (80, 100, 100, 130 ...) one interval is outside 20 %; from interval 7 all five are within
    assert result["recover_s"] == 7.0 and result["recovered"]


def test_a_window_exactly_20_percent_off_counts_as_recovered():
    assert xsr.within_band(80.0, 100.0) and xsr.within_band(120.0, 100.0)
    assert not xsr.within_band(79.999, 100.0)
    assert xsr.recovery([80.0] * 5 + [100.0] * 20, 1000)["recover_s"] == 0.0


def test_a_group_that_never_settles_has_no_time_to_recover():
    values = [1.0, 1000.0] * 10
    result = xsr.recovery(values, 1000)
    assert result["recovered"] is False and result["recover_s"] is None


def _crafted(log_text: bytes):
    plan = plan_to_dict(build_plan(tests=["xsr"], profile=quick_profile(1.0), capacity_bytes=256 * 2**20))
    runs = [{"id": "xsr-g1", "test": "xsr", "phase": "xsr-g1", "round": 1, "log_files": ["logs/xsr-g1_bw.1.log"]}]

    class Summary:
        write_bw_bytes_per_s = 1.0

    return plan, runs, {"logs/xsr-g1_bw.1.log": log_text}, {"xsr-g1": Summary()}


def test_an_interval_log_with_a_gap_keeps_its_samples_and_names_the_gap():
    plan, runs, files, summaries = _crafted(b"100, 1000, 1, 0, 0\n200, 1000, 1, 0, 0\n900, 1000, 1, 0, 0\n")
    (group,) = xsr.derive(plan=plan, runs=runs, read=files.__getitem__, summaries=summaries)["groups"]
    assert group["log_gaps"] == [[200, 700]]
    assert [v for _, v in group["series"]] == [1000 * KIB] * 3  # fio logs KiB/s; stored as bytes/s


def test_a_malformed_log_line_stops_the_derivation_with_its_line():
    plan, runs, files, summaries = _crafted(b"100, 1000, 1, 0, 0\n200, 1e3, 1, 0, 0\n")
    with pytest.raises(IntervalLogError, match="line 2"):
        xsr.derive(plan=plan, runs=runs, read=files.__getitem__, summaries=summaries)


def test_an_empty_interval_log_leaves_the_group_without_a_series_and_says_why():
    plan, runs, files, summaries = _crafted(b"")
    (group,) = xsr.derive(plan=plan, runs=runs, read=files.__getitem__, summaries=summaries)["groups"]
    assert group["series"] == [] and group["final_bytes_per_s"] is None and group["recovered"] is False
    assert group["missing"].startswith("logs/xsr-g1_bw.1.log has no samples")
