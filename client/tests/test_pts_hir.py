"""HIR: the plan against the spec's parameters, fio's per-interval logs read strictly, and the derivation on crafted
logs at its boundaries."""

import pytest

from nvmedb_client.plan import build_plan, plan_to_dict, quick_profile
from nvmedb_client.pts import hir, interval_log
from nvmedb_client.pts.derive import claim, differences
from nvmedb_client.pts.interval_log import IntervalLogError, Sample, parse_log

TB = 10**12


def hir_block(profile="pts", **kwargs):
    plan = build_plan(tests=["hir"], profile=profile, capacity_bytes=TB if profile == "pts" else 256 * 2**20, **kwargs)
    (block,) = plan.blocks
    return plan, block


def test_the_pts_plan_has_the_spec_wait_states_bursts_and_baselines():
    _, block = hir_block()
    assert block.purge and not block.wipc
    (precondition,) = block.series
    assert (precondition.phase, precondition.cells[0].pattern, precondition.cells[0].block_size_bytes) == (
        "hir-pc",
        "randwrite",
        4096,
    )
    assert (precondition.threads, precondition.iodepth, precondition.runtime_s, precondition.max_rounds) == (
        4,
        32,
        60,
        25,
    )
    waits = [s for s in block.segments if s.phase == "hir-wait"]
    bases = [s for s in block.segments if s.phase == "hir-base"]
    assert [s.idle_s for s in waits] == [5, 10, 15, 25, 50]
    assert {(s.burst_s, s.bursts, s.block_size_bytes, s.pattern) for s in waits} == {(5, 360, 4096, "randwrite")}
    assert [s.runtime_s for s in waits] == [361 * (5 + idle) for idle in (5, 10, 15, 25, 50)]
    assert [s.runtime_s for s in bases] == [1800] * 5
    # each wait state is followed by its return to baseline
    assert [s.phase for s in block.segments] == ["hir-wait", "hir-base"] * 5
    assert {s.log_interval_ms for s in block.segments} == {1000}


def test_the_client_edition_runs_hir_at_its_tc_and_qd():
    _, block = hir_block(edition="client")
    assert {(s.threads, s.iodepth) for s in block.segments} == {(2, 16)}


def test_the_quick_plan_is_short_and_every_idle_is_seen_between_samples():
    plan, block = hir_block("quick")
    total = sum(s.runtime_s for s in block.segments)
    assert total < 40
    for segment in block.segments:
        if segment.idle_s is not None:
            assert segment.idle_s * 1000 > 1.5 * segment.log_interval_ms
            assert segment.burst_s * 1000 >= 2 * segment.log_interval_ms
    assert "profile quick" in plan.compliance_reasons[0]


def test_the_plan_dict_lists_the_segments_and_estimates_their_time_and_logs():
    plan, _ = hir_block()
    data = plan_to_dict(plan)
    segments = data["blocks"][0]["segments"]
    assert segments[0]["idle_s"] == 5 and segments[0]["logs"] == ["iops"]
    waits = sum(361 * (5 + i) for i in (5, 10, 15, 25, 50)) + 5 * 1800
    assert data["estimate"]["duration_s"]["min"] > waits
    assert data["estimate"]["bundle_bytes"]["min"] > waits * 4 * 8 * 0.5  # per-second iops logs of 4 jobs


def test_the_job_file_asks_fio_for_bursts_idle_and_an_iops_log():
    from nvmedb_client import fio_jobs

    _, block = hir_block()
    text = fio_jobs.render_segment(
        name="hir-w1", filename="/dev/nvme0n1", segment=block.segments[0], range_bytes=2**30, ioengine="libaio"
    )
    for line in ("thinktime=5000ms", "thinktime_iotime=5000ms", "log_avg_msec=1000", "rw=randwrite", "bs=4096"):
        assert line in text.splitlines()
    assert "write_iops_log=${NVMEDB_LOG_PREFIX}" in text
    assert "numjobs=4" in text


# --- interval logs -------------------------------------------------------------------------------------------


def test_a_fio_log_is_read_with_and_without_the_offset_and_priority_columns():
    assert parse_log(b"1000, 5, 1, 4096\n2000, 6, 1, 4096, 0\n3000, 7, 1, 4096, 0, 0\n") == [
        Sample(1000, 5),
        Sample(2000, 6),
        Sample(3000, 7),
    ]


@pytest.mark.parametrize(
    "data, words",
    [
        (b"1000, 5, 1, 0, 0\nhello\n", "line 2 is not a fio log line"),
        (b"1000, -5, 1, 0, 0\n", "line 1 is not a fio log line"),
        (b"1000, 5.5, 1, 0, 0\n", "line 1 is not a fio log line"),
        (b"1000, 5, 7, 0, 0\n", "line 1 is not a fio log line"),
        (b"2000, 5, 1, 0, 0\n1000, 5, 1, 0, 0\n", "goes back"),
        (b"1000, 5, 1, 0, 0" + b", 0" * 100 + b"\n", "bytes long"),
        (b"", "no samples"),
    ],
)
def test_a_malformed_or_huge_log_line_is_refused_with_its_line_number(data, words):
    with pytest.raises(IntervalLogError, match=words):
        parse_log(data, name="logs/x_iops.1.log")


def test_a_log_larger_than_its_limit_is_refused_before_it_is_read():
    with pytest.raises(IntervalLogError, match="more than the 10 bytes"):
        parse_log(b"1000, 5, 1, 0, 0\n", max_bytes=10)


def test_log_names_other_than_the_clients_are_refused():
    assert interval_log.log_name_parts("logs/hir-w1_iops.2.log") == ("hir-w1", "iops", 2)
    for bad in ("logs/../x_iops.1.log", "fio/x_iops.1.log", "logs/x_lat.1.log", "logs/x_iops.log"):
        with pytest.raises(IntervalLogError):
            interval_log.log_name_parts(bad)


# --- the derivation ------------------------------------------------------------------------------------------


def samples(*pairs):
    return [Sample(t, v) for t, v in pairs]


def test_bursts_split_at_idle_periods_and_the_sample_spanning_one_is_left_out():
    log = samples((1000, 10), (2000, 12), (7000, 1), (8000, 20), (9000, 22), (15000, 2), (16000, 30))
    assert [[s.value for s in b] for b in hir.bursts_of(log, 1000, 5000)] == [[10, 12], [20, 22], [30]]


def test_a_step_of_exactly_interval_plus_half_the_idle_time_is_not_an_idle_period():
    log = samples((1000, 10), (4500, 10), (8001, 1), (9001, 4))
    assert [[s.value for s in b] for b in hir.bursts_of(log, 1000, 5000)] == [[10, 10], [4]]


def test_burst_iops_add_the_jobs_and_recovery_survives_jobs_that_disagree():
    one = samples((1000, 10), (2000, 20), (8000, 1), (9000, 40))
    two = samples((1001, 5), (2001, 5), (8001, 1), (9001, 10))
    found = hir.burst_iops([one, two], 1000, 5000)
    assert found["bursts"] == [20.0, 50.0] and found["recovery_iops"] == 50.0 and found["measured"] == 1
    # a late sample splits one job's burst in two: no per-burst figures, the recovery still from each job's bursts
    late = samples((1001, 5), (2001, 5), (8001, 1), (9001, 10), (13000, 1), (14000, 20))
    found = hir.burst_iops([one, late], 1000, 2000)
    assert found["bursts"] == [] and found["burst_counts"] == [2, 3]
    assert found["recovery_iops"] == 40.0 + 15.0


def test_a_burst_with_no_whole_interval_has_no_figure():
    log = samples((1000, 10), (8000, 3), (15000, 3), (16000, 9))
    found = hir.burst_iops([log], 1000, 5000)
    assert found["bursts"] == [10.0, None, 9.0] and found["recovery_iops"] == 9.0


def test_recovery_is_called_only_strictly_above_the_margin():
    assert hir.recovered(1.2000001)
    assert not hir.recovered(1.2)
    assert not hir.recovered(0.9)


def _log(lines):
    return "".join(f"{t}, {v}, 1, 4096, 0\n" for t, v in lines).encode()


def crafted_hir(baseline_iops=(100.0,) * 5, burst_values=(150, 130, 125)):
    plan = build_plan(tests=["hir"], profile=quick_profile(1.0), capacity_bytes=256 * 2**20, target_kind="file")
    plan_dict = plan_to_dict(plan)
    segment = plan_dict["blocks"][0]["segments"][0]
    interval = segment["log_interval_ms"]
    lines, t = [], 0
    for value in burst_values:
        t += (
            interval + int(segment["idle_s"] * 1000) if t else interval
        )  # an idle period before every burst but the first
        lines += [(t, 1)] if len(lines) else []
        lines += [(t + interval, value), (t + 2 * interval, value)]
        t += 2 * interval
    files = {f"logs/{segment['run_id']}_iops.1.log": _log(lines)}
    runs = [
        {"id": f"pc{r}", "test": "hir", "phase": "hir-pc", "round": r} for r in range(1, len(baseline_iops) + 1)
    ] + [{"id": segment["run_id"], "test": "hir", "phase": "hir-wait", "round": 1, "log_files": list(files)}]

    class Summary:
        def __init__(self, iops):
            self.total_iops = iops

    summaries = {f"pc{r}": Summary(v) for r, v in enumerate(baseline_iops, start=1)}
    return plan_dict, runs, files, summaries


def test_the_derivation_counts_only_bursts_after_an_idle_period_against_the_baseline():
    plan, runs, files, summaries = crafted_hir(burst_values=(150, 130, 110))
    result = hir.derive(plan=plan, runs=runs, read=files.__getitem__, summaries=summaries)
    (state,) = result["wait_states"]
    assert result["baseline"]["iops"] == 100.0 and result["baseline"]["steady"]
    assert state["burst_iops"][0] == 150.0  # follows the preconditioning writes, not an idle period
    assert state["recovery_iops"] == 120.0 and state["bursts_measured"] == 2
    assert state["recovery_ratio"] == 1.2 and state["recovered"] is False


def test_a_claim_that_differs_from_the_logs_is_named():
    plan, runs, files, summaries = crafted_hir()
    derived = claim(hir.derive(plan=plan, runs=runs, read=files.__getitem__, summaries=summaries))
    forged = claim(hir.derive(plan=plan, runs=runs, read=files.__getitem__, summaries=summaries))
    forged["wait_states"][0]["recovery_iops"] = 999.0
    assert differences(derived, derived) == []
    (sentence,) = differences(forged, derived)
    assert sentence.startswith("wait_states[0].recovery_iops: the manifest claims 999.0")


def test_a_plan_segment_with_an_unusable_log_interval_is_refused():
    plan, runs, files, summaries = crafted_hir()
    plan["blocks"][0]["segments"][0]["log_interval_ms"] = 0
    with pytest.raises(ValueError, match="no usable log interval"):
        hir.derive(plan=plan, runs=runs, read=files.__getitem__, summaries=summaries)


def test_nvmedb_client_plan_shows_each_wait_state_and_its_time():
    from click.testing import CliRunner

    from nvmedb_client.cli import main

    result = CliRunner().invoke(main, ["plan", "--tests", "hir,xsr"])
    assert result.exit_code == 0, result.output
    assert "hir-w5-idle50000ms: randwrite 4 KiB, TC 4 / QD 32, 5:30:55: 360 bursts of 5 s after 50 s" in result.output
    assert "xsr-g2: randwrite 8 KiB, TC 1 / QD 32, 6:00:00" in result.output
    unknown = CliRunner().invoke(main, ["plan", "--tests", "hir,nope"])
    assert unknown.exit_code != 0 and "ws-comp" in unknown.output


def test_a_restarted_hir_test_sets_its_segments_and_their_logs_aside(tmp_path):
    from nvmedb_client import resume

    plan, block = hir_block("quick", target_kind="file")
    files = tmp_path / "files"
    (files / "fio").mkdir(parents=True)
    (files / "logs").mkdir()
    segment = block.segments[0]
    (files / "fio" / f"{segment.run_id}.json").write_text("{}")
    log = f"logs/{segment.run_id}_iops.1.log"
    (files / log).write_text("100, 5, 1, 0, 0\n")
    state = {
        "runs": [{"id": segment.run_id, "output_file": f"fio/{segment.run_id}.json", "log_files": [log]}],
        "purges": [{"block": "hir", "method": None}],
    }
    assert resume.supersede_block(state, block, files) == [segment.run_id]
    moved = state["superseded_runs"][0]["log_files"]
    assert moved == [f"superseded/hir-1/{log}"]
    assert (files / moved[0]).read_text() == "100, 5, 1, 0, 0\n" and not (files / log).exists()


def test_an_empty_job_log_leaves_that_wait_state_without_figures_and_says_why():
    # fio writes no line for a job that ran shorter than one logging interval (seen on a loaded CI host): the run
    # goes on, the wait state's figures are missing with the reason, and a complete state claims no such key.
    plan, runs, files, summaries = crafted_hir()
    complete = hir.derive(plan=plan, runs=runs, read=files.__getitem__, summaries=summaries)["wait_states"][0]
    empty = files.__class__(files)
    wait_run = runs[-1]
    empty_path = wait_run["log_files"][0].replace("_iops.1.", "_iops.2.")
    empty[empty_path] = b""
    wait_run["log_files"] = [*wait_run["log_files"], empty_path]
    (state,) = hir.derive(plan=plan, runs=runs, read=empty.__getitem__, summaries=summaries)["wait_states"]
    assert "missing" not in complete and complete["recovery_iops"] is not None
    assert state["recovery_iops"] is None and state["recovery_ratio"] is None and state["recovered"] is None
    assert (
        state["missing"] == f"{empty_path} has no samples: fio logged no interval for that job (it ran shorter "
        "than one logging interval)"
    )


def test_an_empty_log_is_refused_where_samples_are_required():
    with pytest.raises(IntervalLogError, match="no samples"):
        parse_log(b"", name="logs/x_iops.1.log")
    assert parse_log(b"", name="logs/x_iops.1.log", allow_empty=True) == []
