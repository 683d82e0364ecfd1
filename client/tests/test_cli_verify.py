"""`nvmedb-client verify` on bundles built from real fio outputs."""

import io
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
    rows = {line.split()[1]: line for line in result.output.splitlines() if "iops.total_iops" in line}
    # the 65/35 cell was not settled yet; the others were, but a series is steady only when all its variables are
    assert "not steady" in rows["iops.total_iops.rw065.bs65536"].split("IOPS")[-1]
    window_verdicts = [line.rsplit("IOPS", 1)[-1].split("│")[1].strip() for line in rows.values()]
    assert sorted(window_verdicts) == ["not steady", "steady", "steady"]
    assert all(line.rstrip(" │").endswith("not steady") for line in rows.values())  # the series verdict
    for heading in ("measurement window", "window average", "window verdict", "series verdict"):
        assert heading in result.output
    assert "IOPS" in rows["iops.total_iops.rw000.bs4096"]  # every average and excursion carries its unit
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
    assert "claim differs from its raw data" in result.output
    assert "claims steady=True, the raw data gives False" in result.output


def test_verify_explains_a_file_that_is_not_a_bundle(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    result = _verify(path)
    assert result.exit_code == VERIFY_FAILED
    assert "not a gzip-compressed tar archive" in result.output


def test_a_variable_without_a_window_says_not_judged_and_how_many_rounds_it_has():
    from rich.console import Console

    from nvmedb_client.cli.verify import _verdict_table

    entry = {"variable": "lat.lat_mean_ns.rw000.bs4096", "metric": "lat_mean_ns", "steady": False,
             "steady_round": None, "window": None, "rounds_measured": 2, "series": "lat"}  # fmt: skip
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(_verdict_table([entry]))
    row = next(line for line in console.export_text().splitlines() if "lat.lat_mean_ns" in line)
    assert "none (2 of 5 rounds)" in row and "not judged" in row and row.rstrip(" │").endswith("not steady")


def test_verify_warns_of_a_system_file_the_manifest_does_not_declare(tmp_path, samples):
    from bundle_factory import new_signing_key
    from nvmedb_client.bundle import write_bundle

    run_dir, manifest, files = make_run_dir(tmp_path, samples)
    (run_dir / "system").mkdir()
    (run_dir / "system" / "id-ctrl.json").write_text("{}\n")
    (run_dir / "system" / "notes.txt").write_text("bench notes\n")
    files += ["system/id-ctrl.json", "system/notes.txt"]
    manifest["format_version"] = 2
    manifest["system"] = {"files": [{"path": "system/id-ctrl.json", "kind": "nvme-id-ctrl"}], "pci_path": None}
    bundle = write_bundle(
        run_dir=run_dir,
        manifest=manifest,
        files=files,
        signing_key=new_signing_key(),
        out_path=tmp_path / "b.nvmedb.tar.gz",
    )
    result = _verify(bundle)
    assert result.exit_code == 0, result.output
    assert "Undeclared system file: system/notes.txt" in " ".join(result.output.split())
    report = json.loads(_verify(bundle, "--json").output)
    assert report["undeclared_system_files"] == ["system/notes.txt"]
