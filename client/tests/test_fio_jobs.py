"""fio job files: the options every run needs, checked by the real fio, and a WIPC that writes every LBA twice."""

import json
import shutil
import subprocess
from collections import Counter

import pytest

from nvmedb_client import fio_jobs
from nvmedb_client.plan import WIPC_BLOCK_SIZE, Cell

KIB = 1024
UNIT = WIPC_BLOCK_SIZE


def job_lines(text):
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def render_random(tmp_path, **overrides):
    args = dict(
        name="iops-r01-rw065-bs4096",
        filename=str(tmp_path / "target.img"),
        cell=Cell("randrw", 4 * KIB, 65),
        threads=4,
        iodepth=32,
        runtime_s=60,
        range_bytes=64 * 1024 * KIB,
        split=False,
        ioengine="libaio",
    )
    args.update(overrides)
    return fio_jobs.render_cell(**args)


def test_a_random_cell_has_every_option_the_pts_needs(tmp_path):
    lines = job_lines(render_random(tmp_path))
    for option in (
        "direct=1",
        "ioengine=libaio",
        "randrepeat=0",
        "norandommap",
        "refill_buffers",
        "buffer_compress_percentage=0",
        "time_based",
        "runtime=60",
        "group_reporting",
        "percentile_list=99:99.9:99.99:99.999",
        "rw=randrw",
        "rwmixread=65",
        "bs=4096",
        "iodepth=32",
        "numjobs=4",
        "offset=0",
        f"size={64 * 1024 * KIB}",
        "thread",
        "allow_file_create=0",
    ):
        assert option in lines, option


def test_every_option_is_explained_by_a_comment_above_it(tmp_path):
    text = render_random(tmp_path)
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.split("=")[0] in {name for name, _, _ in fio_jobs.GLOBAL_OPTIONS} | {"ioengine", "time_based"}:
            assert lines[index - 1].startswith("# "), line


def test_direct_io_is_never_turned_off(tmp_path):
    for cell in (Cell("randrw", 512, 0), Cell("write", 1024 * KIB, 0), Cell("read", 128 * KIB, 100)):
        assert "direct=1" in job_lines(render_random(tmp_path, cell=cell, split=cell.pattern != "randrw"))


def test_sequential_cells_give_each_job_its_own_slice(tmp_path):
    text = render_random(
        tmp_path, cell=Cell("write", 1024 * KIB, 0), split=True, threads=3, range_bytes=10 * 1024 * KIB
    )
    lines = job_lines(text)
    assert "numjobs=3" not in lines
    assert [line for line in lines if line.startswith("offset=")] == [
        "offset=0",
        f"offset={4 * 1024 * KIB}",
        f"offset={7 * 1024 * KIB}",
    ]
    assert "rwmixread=0" not in lines


def test_fractional_cell_times_are_written_in_milliseconds():
    assert fio_jobs.format_runtime(60) == "60"
    assert fio_jobs.format_runtime(0.5) == "500ms"
    assert fio_jobs.format_runtime(2.25) == "2250ms"


@pytest.mark.parametrize("jobs", [1, 2, 3, 4])
@pytest.mark.parametrize("units", [4, 7, 37])
def test_the_range_split_covers_every_block_once_without_overlap(jobs, units):
    slices = fio_jobs.split_range(units * UNIT, jobs)
    assert len(slices) == jobs
    covered = Counter()
    for offset, size in slices:
        assert offset % UNIT == 0 and size % UNIT == 0 and size > 0
        covered.update(range(offset // UNIT, (offset + size) // UNIT))
    assert covered == Counter(range(units))


def test_a_range_that_is_not_whole_blocks_or_too_small_is_refused():
    with pytest.raises(ValueError, match="multiple"):
        fio_jobs.split_range(UNIT * 3 + 512, 2)
    with pytest.raises(ValueError, match="fewer than"):
        fio_jobs.split_range(UNIT * 3, 4)


def test_libaio_is_chosen_when_fio_lists_it():
    listing = "Available IO engines:\n\tcpuio\n\tmmap\n\tsync\n\tpsync\n\tlibaio\n"
    assert fio_jobs.choose_ioengine(listing, platform="linux") == fio_jobs.EngineChoice("libaio", None)


def test_the_psync_fallback_always_says_why():
    no_libaio = fio_jobs.choose_ioengine("Available IO engines:\n\tpsync\n", platform="linux")
    assert no_libaio.engine == "psync" and "no libaio" in no_libaio.note
    assert "Only on Linux".lower() in fio_jobs.choose_ioengine("libaio", platform="darwin").note.lower()
    assert fio_jobs.choose_ioengine(None, platform="linux").note


@pytest.mark.fio
def test_the_installed_fio_offers_libaio_here():
    listing = subprocess.run(["fio", "--enghelp"], capture_output=True, text=True, check=True).stdout
    assert fio_jobs.choose_ioengine(listing, platform="linux").engine == "libaio"


@pytest.mark.fio
def test_fio_accepts_every_kind_of_job_file(tmp_path):
    target = tmp_path / "target.img"
    target.write_bytes(b"\0" * (8 * 1024 * KIB))
    jobs = {
        "random.fio": render_random(tmp_path, range_bytes=8 * 1024 * KIB),
        "seq.fio": render_random(tmp_path, cell=Cell("read", 128 * KIB, 100), split=True, range_bytes=8 * 1024 * KIB),
        "wipc.fio": fio_jobs.render_wipc(
            name="iops-wipc", filename=str(target), range_bytes=8 * 1024 * KIB, threads=3, ioengine="libaio"
        ),
    }
    for name, text in jobs.items():
        (tmp_path / name).write_text(text)
        result = subprocess.run(["fio", "--parse-only", str(tmp_path / name)], capture_output=True, text=True)
        assert result.returncode == 0, (name, result.stderr)


@pytest.mark.fio
def test_a_half_second_cell_really_runs_for_half_a_second_of_fio_time(tmp_path):
    target = tmp_path / "target.img"
    target.write_bytes(b"\0" * (8 * 1024 * KIB))
    job = tmp_path / "cell.fio"
    job.write_text(render_random(tmp_path, runtime_s=0.5, threads=1, iodepth=4, range_bytes=8 * 1024 * KIB))
    out = tmp_path / "out.json"
    subprocess.run(["fio", "--output-format=json+", f"--output={out}", str(job)], check=True, capture_output=True)
    runtime_ms = json.loads(out.read_text())["jobs"][0]["job_runtime"]
    assert 450 <= runtime_ms < 1000
    assert "99.990000" in json.loads(out.read_text())["jobs"][0]["read"]["clat_ns"]["percentile"]


@pytest.mark.fio
@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_wipc_writes_every_lba_of_an_odd_sized_range_exactly_twice(tmp_path, threads):
    units = 37  # not a multiple of any thread count above 1
    target = tmp_path / "target.img"
    target.write_bytes(b"\0" * (units * UNIT + 5 * UNIT))  # a tail beyond the range that must stay untouched
    job = tmp_path / "wipc.fio"
    job.write_text(
        fio_jobs.render_wipc(
            name="wipc", filename=str(target), range_bytes=units * UNIT, threads=threads, ioengine="libaio", iodepth=4
        )
    )
    log = tmp_path / "io.log"
    subprocess.run(
        ["fio", "--output-format=json", f"--output={tmp_path / 'out.json'}", f"--write_iolog={log}", str(job)],
        check=True,
        capture_output=True,
    )
    writes = Counter()
    for line in log.read_text().splitlines():
        fields = line.split()  # version 3 iolog: [timestamp] filename action offset length
        if len(fields) >= 4 and fields[-3] == "write":
            offset, length = int(fields[-2]), int(fields[-1])
            assert length == UNIT and offset % UNIT == 0
            writes[offset // UNIT] += 1
    assert writes == Counter({unit: 2 for unit in range(units)})


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_the_version_of_fio_is_the_one_the_samples_were_made_with():
    assert subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.startswith("fio-3")


def _regions(text):
    lines = job_lines(text)
    offsets = [int(line.split("=")[1]) for line in lines if line.startswith("offset=")]
    sizes = [int(line.split("=")[1]) for line in lines if line.startswith("size=")]
    return list(zip(offsets, sizes, strict=True))


def test_sequential_rounds_continue_where_the_previous_round_stopped_and_cover_the_range(tmp_path):
    mib = 1024 * KIB
    range_bytes, moved = 64 * mib, 10 * mib
    written = set()
    starts_seen = []
    history: list[int] = []
    for _round in range(8):
        start = fio_jobs.sequential_starts(slice_bytes=range_bytes, block_size=mib, moved=history)[-1]
        text = render_random(
            tmp_path, cell=Cell("write", mib, 0), split=True, threads=1, range_bytes=range_bytes, starts=[start]
        )
        ((offset, size),) = _regions(text)
        assert offset + size == range_bytes  # the region runs from the carried position to the end of the range
        starts_seen.append(offset)
        written |= set(range(offset // mib, min(offset + moved, range_bytes) // mib))
        history.append(moved)
    # 0, 10, ... 50 MiB, then 54 MiB (one round's worth before the end, never a sliver), then the range again from 0
    assert starts_seen == [0, 10 * mib, 20 * mib, 30 * mib, 40 * mib, 50 * mib, 54 * mib, 0]
    assert written == set(range(64))  # one pass of rounds touched every block of the range


def test_each_sequential_job_carries_its_own_position_inside_its_slice(tmp_path):
    mib = 1024 * KIB
    text = render_random(
        tmp_path, cell=Cell("read", mib, 100), split=True, threads=2, range_bytes=10 * mib, starts=[2 * mib, 1 * mib]
    )
    assert _regions(text) == [(2 * mib, 3 * mib), (5 * mib + 1 * mib, 4 * mib)]
    with pytest.raises(ValueError, match="inside its slice"):
        render_random(
            tmp_path, cell=Cell("read", mib, 100), split=True, threads=2, range_bytes=10 * mib, starts=[5 * mib, 0]
        )


def test_a_round_that_reached_the_end_of_the_range_is_followed_by_one_from_the_start():
    assert fio_jobs.sequential_starts(slice_bytes=100, block_size=1, moved=[30, 80]) == [0, 30, 0]
    assert fio_jobs.sequential_starts(slice_bytes=100, block_size=1, moved=[300]) == [0, 0]


def test_carried_starts_divide_what_a_round_moved_between_the_jobs_and_agree_round_by_round():
    # 2 jobs, 100-block slices: each round's bytes are shared by the jobs, in whole blocks
    moved = [60, 90, 120, 40]
    by_round = fio_jobs.carried_starts_by_round(range_bytes=200, threads=2, block_size=1, moved=moved)
    # round 3 would start at 75, but a start stays one round (45) before the slice end: 55
    assert by_round == [[0, 0], [30, 30], [55, 55], [0, 0], [20, 20]]
    for number in range(len(moved) + 1):
        assert (
            fio_jobs.carried_starts(range_bytes=200, threads=2, block_size=1, moved=moved[:number]) == by_round[number]
        )
    assert fio_jobs.carried_starts(range_bytes=8192, threads=2, block_size=512, moved=[3000]) == [1024, 1024]


@pytest.mark.fio
def test_real_fio_rounds_start_where_the_previous_round_stopped_and_cover_the_range(tmp_path):
    """Throttled half-second rounds of the throughput write segment, each job file made from the bytes the previous
    rounds really moved; fio's own I/O log shows where each round wrote."""
    from nvmedb_client.fio_output import parse_fio_output, summarize

    units = 192
    target = tmp_path / "target.img"
    target.write_bytes(b"\0" * (units * UNIT))
    history: list[int] = []
    written = set()
    first_offsets = []
    expected = []
    for index in range(6):
        start = fio_jobs.sequential_starts(slice_bytes=units * UNIT, block_size=UNIT, moved=history)[-1]
        expected.append(start)
        text = render_random(
            tmp_path, cell=Cell("write", UNIT, 0), split=True, threads=1, range_bytes=units * UNIT, starts=[start],
            runtime_s=0.5, iodepth=4,
        )  # fmt: skip
        job = tmp_path / f"round{index}.fio"
        job.write_text(text + "rate=12m\n")  # slow enough that a round covers a part of the range, not all of it
        log, out = tmp_path / f"round{index}.log", tmp_path / f"round{index}.json"
        subprocess.run(
            ["fio", "--output-format=json+", f"--output={out}", f"--write_iolog={log}", str(job)],
            check=True,
            capture_output=True,
        )
        offsets = [
            int(f[-2])
            for f in (line.split() for line in log.read_text().splitlines())
            if len(f) >= 4 and f[-3] == "write"
        ]
        first_offsets.append(offsets[0])
        written |= {offset // UNIT for offset in offsets}
        history.append(summarize(parse_fio_output(out.read_bytes())).write_bytes)
    assert first_offsets == expected
    assert len(set(expected)) >= 3  # the position really moved on from round to round
    assert written == set(range(units))
