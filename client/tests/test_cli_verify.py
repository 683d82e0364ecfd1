"""`nvmedb-client verify` on bundles built from real fio outputs."""

import json

import pytest
from click.testing import CliRunner

from bundle_factory import default_fio_samples, make_bundle, make_run_dir
from nvmedb_client.cli import main
from nvmedb_client.cli.exit_codes import VERIFY_FAILED


@pytest.fixture
def samples(shared_samples):
    return default_fio_samples(shared_samples)


def _verify(*args):
    return CliRunner().invoke(main, ["verify", *map(str, args)])


def test_verify_accepts_an_intact_bundle_and_shows_each_tracking_variable(tmp_path, samples):
    result = _verify(make_bundle(tmp_path, fio_samples=samples))
    assert result.exit_code == 0, result.output
    assert "signature valid" in result.output
    for variable in (
        "iops.total_iops.rw000.bs4096",
        "iops.total_iops.rw065.bs65536",
        "iops.total_iops.rw100.bs1048576",
    ):
        assert variable in result.output
    assert "rounds 1-5" in result.output
    assert "fail" in result.output and "pass" in result.output  # the 65/35 cell was not settled yet; others were
    assert "Series iops: steady state not reached in 5 rounds" in result.output
    assert "Not a compliant PTS result" in result.output


def test_verify_json_reports_the_windows(tmp_path, samples):
    result = _verify(make_bundle(tmp_path, fio_samples=samples), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] is True and report["differences"] == []
    windows = {entry["variable"]: entry["window"] for entry in report["steady_state"]}
    slow = windows["iops.total_iops.rw065.bs65536"]
    assert slow["data_excursion"] > slow["data_excursion_limit"]
    assert slow["steady"] is False


@pytest.mark.parametrize(
    "tamper, words",
    [
        ("changed_byte", "does not match its SHA-256"),
        ("missing_file", "listed in the manifest but not in the archive"),
        ("extra_file", "not listed in the manifest"),
        ("wrong_key", "signature does not match"),
    ],
)
def test_verify_rejects_a_tampered_bundle_with_one_sentence(tmp_path, samples, tamper, words):
    result = _verify(make_bundle(tmp_path, fio_samples=samples, tamper=tamper))
    assert result.exit_code == VERIFY_FAILED
    assert words in result.output
    assert result.output.count("\n") == 1


def test_verify_json_reports_the_error_code(tmp_path, samples):
    result = _verify(make_bundle(tmp_path, fio_samples=samples, tamper="changed_byte"), "--json")
    assert result.exit_code == VERIFY_FAILED
    report = json.loads(result.output[: result.output.rindex("}") + 1])
    assert report == {"ok": False, "error": {"code": "hash_mismatch", "message": report["error"]["message"]}}


def test_verify_fails_when_the_client_claims_a_steady_state_the_data_does_not_show(tmp_path, samples):
    _, manifest, _ = make_run_dir(tmp_path / "probe", samples)
    claims = [{**entry, "steady": True, "steady_round": 5} for entry in manifest["steady_state"]]
    result = _verify(make_bundle(tmp_path, fio_samples=samples, manifest_changes={"steady_state": claims}))
    assert result.exit_code == VERIFY_FAILED
    assert "steady-state claim differs from its raw data" in result.output
    assert "claims steady=True, the raw data gives False" in result.output


def test_verify_explains_a_file_that_is_not_a_bundle(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    result = _verify(path)
    assert result.exit_code == VERIFY_FAILED
    assert "not a gzip-compressed tar archive" in result.output
