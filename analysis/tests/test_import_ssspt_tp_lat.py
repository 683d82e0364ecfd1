"""SSSPT's throughput and latency runs, imported whole from ../shared/samples/ssspt-more with re-derived windows."""

import json

import pytest
from django.core.management import call_command

from analysis.models import Flag, Measurement, SteadyStateWindow, TestRun
from importers.ssspt_roles import TESTS

MORE = "ssspt-more"


def import_run(shared_samples, capsys, run: str) -> dict:
    call_command("import_results", str(shared_samples / MORE / run), "--format", "ssspt", "--json")
    return json.loads(capsys.readouterr().out)


def test_a_throughput_run_imports_each_block_size_and_direction_as_its_own_series(db, shared_samples, capsys):
    # hp/throughput/1: 128 KiB and 1 MiB, reads and writes, a wipc_bs<BS>_read<MIX>.json before each (SSSPT's
    # August 2018 naming), the kernel named in a sentence
    assert import_run(shared_samples, capsys, "hp/throughput/1")["status"] == "published"
    run = TestRun.objects.get()
    assert (run.test, run.threads, run.iodepth, run.source, run.profile) == ("tp", 1, 32, "ssspt", "imported")
    assert run.host.kernel == "4.4.0-133-generic" and run.edition == "client"
    assert Measurement.objects.filter(round__phase="wipc").count() == 4 and "wipc" not in run.missing
    assert run.evidence["wipc"].startswith("wipc_bs1024KB_read0.json, wipc_bs1024KB_read100.json")
    assert run.evidence["edition"] == "fio size=75%: PTS-C's active range"
    windows = {w.variable: w for w in SteadyStateWindow.objects.all()}
    assert set(windows) == {
        "tp.read_bw_bytes_per_s.rw100.bs1048576",
        "tp.write_bw_bytes_per_s.rw000.bs1048576",
        "tp.read_bw_bytes_per_s.rw100.bs131072",
        "tp.write_bw_bytes_per_s.rw000.bs131072",
    }
    for window in windows.values():
        rounds = Measurement.objects.filter(
            round__phase=window.phase, block_size_bytes=window.block_size_bytes, read_pct=window.read_pct
        )
        assert window.phase == ("tp-read" if window.read_pct == 100 else "tp-write")
        assert rounds.count() == window.claimed["last_round_run"] == 5
        # SSSPT stopped each series when its own rule passed: recomputing it finds exactly its last round
        assert window.claimed["steady_round"] == 5 and window.claimed["tool"] == "SSSPT"
        assert window.claim_differs == (window.steady is False)
        values = [getattr(m, window.metric) for m in rounds.order_by("round__number")]
        assert window.values == pytest.approx(values)
        if window.steady:
            assert set(rounds.filter(in_steady_window=True).values_list("round__number", flat=True)) == {1, 2, 3, 4, 5}

    read = Measurement.objects.get(raw_file="wdpc_bs1024KB_read100_round3.json")
    doc = json.loads((shared_samples / MORE / "hp/throughput/1" / read.raw_file).read_text())
    assert read.read_bw_bytes_per_s == doc["jobs"][0]["read"]["bw_bytes"] and read.round.series == "bs1048576"
    expected = (
        sum(
            m.read_bw_bytes_per_s
            for m in Measurement.objects.filter(round__phase="tp-read", block_size_bytes=1048576)
            if m.in_steady_window or not windows["tp.read_bw_bytes_per_s.rw100.bs1048576"].steady
        )
        / 5
    )
    assert run.headline["bw_1m_read"] == pytest.approx(expected)


def test_a_latency_run_imports_nine_cells_with_their_windows_and_says_it_is_sequential(db, shared_samples, capsys):
    assert import_run(shared_samples, capsys, "hp/lat/3")["status"] == "published"
    run = TestRun.objects.get()
    assert (run.test, run.threads, run.iodepth) == ("lat", 1, 1)
    assert (run.host.kernel, run.host.architecture) == ("4.4.132-0404132-generic", "x86_64")
    windows = {w.variable: w for w in SteadyStateWindow.objects.all()}
    assert len(windows) == 9 and "lat.lat_mean_ns.rw000.bs4096" in windows
    for window in windows.values():
        assert window.metric == "lat_mean_ns" and window.phase == "wdpc"
        assert window.claimed["steady_round"] == window.claimed["last_round_run"]
    cell = Measurement.objects.filter(block_size_bytes=4096, read_pct=0).order_by("round__number")
    assert windows["lat.lat_mean_ns.rw000.bs4096"].values == pytest.approx([m.lat_mean_ns for m in cell])
    assert run.headline["lat_4k_mean"] > 0
    # SSSPT's fio 3.8 outputs hold percentiles of completion latency only: no total-latency 99.99 % is made up
    assert "lat_4k_p9999" not in run.headline
    assert all(m.lat_p9999_ns is None and "lat_percentiles" in m.missing["lat_p9999_ns"] for m in cell)
    assert all(m.clat_p9999_ns > 0 and m.lat_mean_ns > m.clat_mean_ns for m in cell)
    sequential = Flag.objects.get(kind="non_compliant")
    assert "rw=readwrite" in sequential.reason and sequential.test_run == run
    assert any("sequential I/O" in reason for reason in run.compliance_reasons)
    assert "cpu_util.log" in run.missing["skipped_files"]


def test_ssspts_latency_tracking_value_is_the_io_weighted_mean_of_both_directions(shared_samples):
    path = shared_samples / MORE / "hp/lat/3/wdpc_bs4KB_read65_round2.json"
    doc = json.loads(path.read_text())
    read, write = doc["jobs"][0]["read"], doc["jobs"][0]["write"]
    weighted = (read["lat_ns"]["mean"] * read["total_ios"] + write["lat_ns"]["mean"] * write["total_ios"]) / (
        read["total_ios"] + write["total_ios"]
    )
    assert TESTS["lat"].tool_value(doc, 65) == pytest.approx(weighted)


def test_a_folder_named_for_one_test_holding_anothers_outputs_is_rejected(db, shared_samples, tmp_path, capsys):
    folder = tmp_path / "lat" / "1"
    folder.mkdir(parents=True)
    for n in range(1, 6):
        source = shared_samples / MORE / f"hp/throughput/6/wdpc_bs4KB_read0_round{n}.json"
        (folder / source.name).write_bytes(source.read_bytes())
    call_command("import_results", str(folder), "--format", "ssspt", "--json")
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["status"] == "rejected"
    assert "named for SSSPT's lat test but its fio jobs are those of its tp test" in outcome["reasons"][0]


def test_a_throughput_folder_with_only_mixed_cells_is_rejected_with_the_reason(db, shared_samples, tmp_path, capsys):
    folder = tmp_path / "throughput" / "1"
    folder.mkdir(parents=True)
    for n in range(1, 6):  # a sequential QD 32 job at 65 % reads: no cell of SSSPT's throughput test
        source = shared_samples / MORE / f"hp/throughput/6/wdpc_bs4KB_read0_round{n}.json"
        doc = json.loads(source.read_text())
        doc["jobs"][0]["job options"]["rwmixread"] = "65"
        (folder / f"wdpc_bs4KB_read65_round{n}.json").write_text(json.dumps(doc))
    call_command("import_results", str(folder), "--format", "ssspt", "--json")
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["status"] == "rejected" and "no cell of SSSPT's throughput test" in outcome["reasons"][0]
