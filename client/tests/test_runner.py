"""Runner pieces that need no fio run: device steps (from real captured nvme-cli output), checkpoints, runtimes."""

import json

import pytest

from nvmedb_client import device, resume, runner
from nvmedb_client.plan import build_plan, quick_profile
from nvmedb_client.system import nvme

ID_CTRL_SAMPLE = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
ID_NS = nvme.parse_id_ns(
    json.dumps(
        {
            "nsze": 1000,
            "ncap": 1000,
            "nuse": 0,
            "flbas": 1,
            "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 0, "ds": 12, "rp": 0}],
        }
    )
)


@pytest.fixture
def id_ctrl(shared_samples):
    return nvme.parse_id_ctrl((shared_samples / ID_CTRL_SAMPLE).read_text())


def test_the_write_cache_value_is_read_from_get_feature_output():
    text = "get-feature:0x06 (Volatile Write Cache), Current value:0x00000001\n\tVolatile Write Cache Enable (WCE): Enabled\n"
    assert device.write_cache_value(text) == 1
    assert device.write_cache_value("NVMe status: Invalid Field in Command") is None


def test_the_checkpoint_is_replaced_whole(tmp_path):
    path = tmp_path / "state.json"
    runner.write_json_atomic(path, {"runs": [1]})
    runner.write_json_atomic(path, {"runs": [1, 2]})
    assert json.loads(path.read_text()) == {"runs": [1, 2]}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_checkpoint_from_another_version_is_refused(tmp_path):
    (tmp_path / "state.json").write_text(json.dumps({"state_version": 99}))
    with pytest.raises(runner.RunError, match="state version 99"):
        runner.load_state(tmp_path)


def test_fio_wall_runtime_is_the_groups_runtime_not_the_sum_over_its_jobs(shared_samples):
    text = (shared_samples / "fio" / "local__fio-3.33__numjobs3_group_reporting.json").read_text()
    doc = json.loads(text)
    assert doc["jobs"][0]["job_runtime"] == 6000  # three 2-second jobs, summed by fio
    assert runner.fio_wall_runtime_s(doc) == pytest.approx(2.001)


def _state(position, saved_at="2026-11-23T10:00:00.000000Z"):
    return {"position": position, "saved_at": saved_at, "sessions": [{"started_at": "2026-11-23T09:00:00Z"}, {}]}


@pytest.mark.parametrize(
    ("position", "resumed_at", "action"),
    [
        ({"block": "iops", "stage": "done"}, "2026-11-23T12:00:00Z", "none"),
        ({"block": "iops", "stage": "purge"}, "2026-11-23T12:00:00Z", "none"),
        ({"block": "iops", "stage": "wipc"}, "2026-11-23T10:00:05Z", "restart"),
        ({"block": "iops", "stage": "rounds", "round": 3, "round_complete": False}, "2026-11-23T10:00:01Z", "restart"),
        ({"block": "iops", "stage": "rounds", "round": 3, "round_complete": True}, "2026-11-23T10:00:30Z", "continued"),
        ({"block": "iops", "stage": "rounds", "round": 3, "round_complete": True}, "2026-11-23T10:01:01Z", "restart"),
    ],
)
def test_an_interruption_is_measured_and_restarts_the_test_unless_it_fell_between_tests_or_briefly_between_rounds(
    position, resumed_at, action
):
    gap = resume.interruption(_state(position), now=resumed_at)
    assert gap["action"] == action
    assert gap["started_at"] == "2026-11-23T10:00:00.000000Z"
    assert gap["length_s"] > 0
    assert gap["block"] == "iops"


def test_a_restarted_test_keeps_its_earlier_runs_as_superseded_files(tmp_path):
    plan = build_plan(tests=["lat"], profile=quick_profile(0.5), capacity_bytes=64 * 1024**2, target_kind="file")
    block = plan.blocks[0]
    files = tmp_path / "files"
    run_id = block.series[0].run_id(1, block.series[0].cells[0])
    (files / "fio").mkdir(parents=True)
    (files / "fio" / f"{run_id}.json").write_text("{}")
    state = {
        "runs": [
            {"id": "iops-wipc", "output_file": "fio/iops-wipc.json"},
            {"id": run_id, "output_file": f"fio/{run_id}.json"},
        ],
        "purges": [{"block": block.label, "method": None}],
        "blocks_done": ["iops", block.label],
    }
    assert resume.supersede_block(state, block, files) == [run_id]
    assert [run["id"] for run in state["runs"]] == ["iops-wipc"]
    assert state["superseded_runs"][0]["output_file"] == f"superseded/{block.label}-1/fio/{run_id}.json"
    assert (files / state["superseded_runs"][0]["output_file"]).read_text() == "{}"
    assert not (files / "fio" / f"{run_id}.json").exists()
    assert state["purges"][0]["superseded"] is True
    assert state["blocks_done"] == ["iops"]


def test_wipc_writes_twice_the_user_capacity_not_twice_the_active_range():
    from nvmedb_client import fio_jobs
    from nvmedb_client.plan import plan_to_dict, wipc_range_bytes

    capacity = 1_000_204_886_016  # a 1 TB drive
    plan = build_plan(tests=["iops"], edition="client", capacity_bytes=capacity)
    assert plan.active_range_bytes < 0.76 * capacity  # the client edition tests 75% of the LBAs
    assert wipc_range_bytes(plan) == capacity // 2**20 * 2**20
    assert plan_to_dict(plan)["wipc"]["bytes"] == 2 * wipc_range_bytes(plan)
    job = fio_jobs.render_wipc(
        name="iops-wipc", filename="/dev/nvme0n1", range_bytes=wipc_range_bytes(plan), threads=2, ioengine="libaio"
    )
    sizes = [int(line.split("=")[1]) for line in job.splitlines() if line.startswith("size=")]
    assert sum(sizes) == wipc_range_bytes(plan) and "loops=2" in job


def test_a_checkpoint_of_an_earlier_client_restarts_the_test_of_its_last_run(tmp_path):
    config = runner.RunConfig(
        target_kind="file", target_path=str(tmp_path / "t.img"), size_bytes=64 * 1024**2, tests=["tp", "lat"],
        edition="client", profile="quick", cell_runtime_s=0.5,
    )  # fmt: skip
    run_dir = runner.create_run_dir(config=config, out_dir=tmp_path)
    state = runner.load_state(run_dir)
    files = {"job_file": "jobs/lat-wipc.fio", "output_file": "fio/lat-wipc.json", "smart_before": None}
    state["runs"] = [{"id": "lat-wipc", **files, "smart_after": None}]
    state["sessions"] = [{"started_at": "2026-11-23T10:00:00Z", "resumed": False, "ended_at": None, "outcome": None}]
    runner.write_json_atomic(run_dir / "state.json", state)  # no "position": written by a client before it existed

    resumed = runner.Runner(run_dir=run_dir)
    resumed.state["sessions"].append({"started_at": "2026-11-23T11:00:00Z"})
    resumed._account_for_interruption("2026-11-23T11:00:00Z")
    (gap,) = resumed.state["interruptions"]
    assert (gap["block"], gap["action"], gap["length_s"]) == ("lat", "restart", 3600.0)
    assert resumed.completed == {} and resumed.state["superseded_runs"][0]["id"] == "lat-wipc"
