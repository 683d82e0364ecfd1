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


def test_a_drive_whose_fna_allows_crypto_erase_is_formatted_with_ses_2_keeping_its_lba_format(id_ctrl):
    assert id_ctrl["crypto_erase_supported"] is True
    attempts = device.purge_attempts("/dev/nvme0n1", id_ctrl, ID_NS)
    method, argv = attempts[0]
    assert argv == ["nvme", "format", "/dev/nvme0n1", "--ses=2", "--lbaf=1", "--force"]
    assert "crypto erase" in method and "LBA format 1 kept" in method


def test_without_crypto_erase_the_format_erases_user_data_and_blkdiscard_is_the_last_resort(id_ctrl):
    attempts = device.purge_attempts("/dev/nvme0n1", {**id_ctrl, "crypto_erase_supported": False}, ID_NS)
    assert attempts[0][1][3] == "--ses=1"
    # this drive reports no sanitize support, so the fallback goes straight to a full-range deallocate
    assert [argv[0] for _, argv in attempts] == ["nvme", "blkdiscard"]


def test_sanitize_comes_before_blkdiscard_when_the_controller_supports_it(id_ctrl):
    attempts = device.purge_attempts("/dev/nvme0n1", {**id_ctrl, "sanitize_block_erase_supported": True}, ID_NS)
    assert [argv[1] for _, argv in attempts] == ["format", "sanitize", "/dev/nvme0n1"]
    assert attempts[1][1][-1] == "--sanact=2"


def test_a_namespace_whose_lba_format_is_unknown_is_never_formatted(id_ctrl):
    unknown = {**ID_NS, "lba_format_index": None}
    assert all(argv[1] != "format" for _, argv in device.purge_attempts("/dev/nvme0n1", id_ctrl, unknown))


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


@pytest.mark.parametrize(
    ("log", "done"),
    [
        ({"nvme0": {"sprog": 65535, "sstat": {"status": 1}}}, True),
        ({"nvme0": {"sprog": 1200, "sstat": {"status": 2}}}, False),
        ({"sprog": 65535, "sstat": 257}, True),
    ],
)
def test_the_sanitize_log_tells_when_the_sanitize_finished(log, done):
    # shapes of nvme-cli 1.x (flat) and 2.x (per device); SSTAT bits 2:0 are 1 = done, 2 = in progress
    assert device.sanitize_done(json.dumps(log)) is done


def test_an_unreadable_sanitize_log_is_not_taken_for_done():
    assert device.sanitize_done("Error: sanitize-log: Invalid argument") is None


def test_fio_wall_runtime_is_the_groups_runtime_not_the_sum_over_its_jobs(shared_samples):
    text = (shared_samples / "fio" / "local__fio-3.33__numjobs3_group_reporting.json").read_text()
    doc = json.loads(text)
    assert doc["jobs"][0]["job_runtime"] == 6000  # three 2-second jobs, summed by fio
    assert runner.fio_wall_runtime_s(doc) == pytest.approx(2.001)
