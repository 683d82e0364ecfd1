"""The WSAT optional workloads as selectable tests: their stimulus and fio options."""

from nvmedb_client import fio_jobs
from nvmedb_client.plan import build_plan

KIB = 1024


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


def test_the_metadata_workload_is_skipped_on_a_4k_lba_namespace_with_the_reason():
    plan = build_plan(tests=["ws-meta"], capacity_bytes=10**12, lba_size_bytes=4096)
    assert plan.blocks[0].series == ()
    assert "ws-meta" in plan.skipped_cells[0].test
    assert not plan.compliant


def test_core_tests_stay_the_default_selection():
    plan = build_plan(capacity_bytes=10**12)
    assert plan.tests == ("iops", "tp", "lat", "wsat")
