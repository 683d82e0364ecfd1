"""Runner pieces that need no fio run: device steps (from real captured nvme-cli output), checkpoints, runtimes."""

import json

import pytest

from nvmedb_client import device, runner
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
