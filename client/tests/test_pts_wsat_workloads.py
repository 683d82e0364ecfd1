"""The WSAT optional workloads as selectable tests: their stimulus and fio options, and a real quick run of the
sequential ws-vod (each job in its own slice, each sample continuing where the previous one stopped) with ws-comp."""

import configparser
import json
from pathlib import Path

import pytest

from nvmedb_client import fio_jobs, rounds
from nvmedb_client.fio_output import parse_fio_output, summarize
from nvmedb_client.plan import build_plan
from nvmedb_client.runner import Runner
from throttled_run import throttled_quick_run

KIB = 1024
MIB = 1024 * KIB


def cell_of(test, **kwargs):
    plan = build_plan(tests=[test], capacity_bytes=10**12, **kwargs)
    (block,) = plan.blocks
    (series,) = block.series
    return plan, block, series


def test_each_workload_has_its_access_block_size_and_mix():
    expected = {
        "ws-oltp": ("randrw", 8 * KIB, 65),
        "ws-vod": ("rw", 128 * KIB, 90),
        "ws-meta": ("rw", 512, 50),
        "ws-comp": ("randrw", 4 * KIB, 40),
    }
    for test, (pattern, block_size, read_pct) in expected.items():
        plan, block, series = cell_of(test)
        cell = series.cells[0]
        assert (cell.pattern, cell.block_size_bytes, cell.read_pct, cell.workload) == (
            pattern,
            block_size,
            read_pct,
            test,
        )
        assert series.phase == "wsat" and block.purge and not block.wipc
        assert series.max_rounds == 24 * 60 and series.runtime_s == 60
        assert series.run_id(7, cell) == f"{test}-r0007"


def test_the_composite_workload_asks_fio_for_the_block_size_mix_and_hot_zones():
    _, _, series = cell_of("ws-comp")
    text = fio_jobs.render_cell(
        name="c", filename="/dev/x", cell=series.cells[0], threads=4, iodepth=32, runtime_s=60,
        range_bytes=2**30, split=False, ioengine="libaio",
    )  # fmt: skip
    lines = text.splitlines()
    assert "rwmixread=40" in lines
    assert "bssplit=512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3" in lines
    assert "random_distribution=zoned:50/5:30/15:20/80" in lines
    shares = [int(part.split("/")[1]) for part in lines[lines.index("rwmixread=40") + 2].split("=")[1].split(":")]
    assert sum(shares) == 100
    assert "blockalign=512" in lines  # aligned to the mix's smallest block, as the ECW


def test_sequential_workloads_split_the_range_and_random_ones_roam_it():
    for test, split in (("ws-oltp", False), ("ws-vod", True), ("ws-meta", True), ("ws-comp", False)):
        assert cell_of(test)[2].split_range is split, test


def test_the_metadata_workload_is_skipped_on_a_4k_lba_namespace_with_the_reason():
    plan = build_plan(tests=["ws-meta"], capacity_bytes=10**12, lba_size_bytes=4096)
    assert plan.blocks[0].series == ()
    assert "ws-meta" in plan.skipped_cells[0].test
    assert not plan.compliant


def test_core_tests_stay_the_default_selection():
    plan = build_plan(capacity_bytes=10**12)
    assert plan.tests == ("iops", "tp", "lat", "wsat")


# fio as the client finds it on PATH, but throttled for ws-vod's samples (the job file the client recorded is left as it
# is; fio reads a copy with a rate cap), so a half-second sample covers a part of a job's slice, not all of it
@pytest.fixture(scope="module")
def sequential_run(tmp_path_factory):
    answer, rated = throttled_quick_run(tmp_path_factory.mktemp("ws-vod"), "ws-vod,ws-comp")
    assert len(list(rated.iterdir())) == 5  # every ws-vod sample ran throttled
    return Path(answer["run_dir"])


def job_sections(path: Path) -> list[tuple[int, int]]:
    """(offset, size) of each job section of a job file, in order."""
    parser = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None)
    parser.read_string(path.read_text())
    assert not parser.has_option("global", "numjobs")
    return [(parser.getint(s, "offset"), parser.getint(s, "size")) for s in parser.sections() if s != "global"]


def ws_vod_samples(run_dir: Path) -> list[dict]:
    runs = json.loads((run_dir / "state.json").read_text())["runs"]
    samples = sorted((r for r in runs if r["test"] == "ws-vod"), key=lambda r: r["round"])
    assert [r["round"] for r in samples] == [1, 2, 3, 4, 5]  # the quick profile's samples (the writes are few)
    return samples


def test_a_real_ws_vod_run_gives_each_job_its_own_slice_of_the_range(sequential_run):
    plan = Runner(run_dir=sequential_run).plan
    range_bytes, block = plan.active_range_bytes, 128 * KIB
    slices = fio_jobs.split_range(range_bytes, plan.threads, unit=block)
    assert plan.threads == 4 and range_bytes == 64 * MIB
    # the slices are distinct, do not overlap and cover the range
    assert [offset for offset, _ in slices] == [i * 16 * MIB for i in range(4)]
    assert all(size == 16 * MIB for _, size in slices)
    for sample in ws_vod_samples(sequential_run):
        sections = job_sections(sequential_run / "files" / sample["job_file"])
        assert len(sections) == 4, sample["id"]
        for (offset, size), (slice_offset, slice_size) in zip(sections, slices, strict=True):
            # each job stays inside its own slice, from its position to the slice's end
            assert slice_offset <= offset < slice_offset + slice_size and offset + size == slice_offset + slice_size
            assert (offset - slice_offset) % block == 0
    first = job_sections(sequential_run / "files" / "jobs" / "ws-vod-r0001.fio")
    assert first == slices  # the first sample starts every job at its slice's start


def test_a_real_ws_vod_sample_starts_where_the_previous_one_stopped_as_its_outputs_say(sequential_run):
    samples = ws_vod_samples(sequential_run)
    files = sequential_run / "files"
    slices = fio_jobs.split_range(64 * MIB, 4, unit=128 * KIB)
    starts = [
        [
            offset - slice_offset
            for (offset, _), (slice_offset, _) in zip(job_sections(files / s["job_file"]), slices, strict=True)
        ]
        for s in samples
    ]
    summaries = [summarize(parse_fio_output((files / s["output_file"]).read_bytes())) for s in samples]
    # a job streams its reads and its writes each from its start: it stopped where its reads (90 %) got to
    moved = [max(s.read_bytes, s.write_bytes) for s in summaries]
    assert all(s.read_bytes > s.write_bytes > 0 for s in summaries)
    per_job = moved[0] // 4 // (128 * KIB) * (128 * KIB)
    assert 0 < per_job < 8 * MIB  # the throttled first sample covered less than half of a slice
    assert starts[1] == [per_job] * 4  # the second sample continued where the first stopped
    for index, sample_starts in enumerate(starts):
        assert sample_starts == fio_jobs.carried_starts(
            range_bytes=64 * MIB, threads=4, block_size=128 * KIB, moved=moved[:index]
        )
    assert len({s[0] for s in starts}) >= 3  # the position really moved on from sample to sample

    # a resumed run derives the same positions from the recorded outputs alone
    runner = Runner(run_dir=sequential_run)
    (series,) = next(b for b in runner.plan.blocks if b.test == "ws-vod").series
    for number, sample_starts in enumerate(starts, start=1):
        assert rounds.sequential_starts(runner, series, series.cells[0], number) == sample_starts


def test_a_real_ws_comp_job_aligns_its_blocks_like_the_ecw(sequential_run):
    from nvmedb_client.pts import ecw

    job = (sequential_run / "files" / "jobs" / "ws-comp-r0001.fio").read_text().splitlines()
    assert f"blockalign={ecw.SMALLEST_BLOCK_SIZE}" in job
    assert [line for line in job if line.startswith("blockalign=")] == [
        line for line in "\n".join(ecw.fio_options()).splitlines() if line.startswith("blockalign=")
    ]
    assert "numjobs=4" in job  # a random workload: every job roams the whole range
