"""Importing the real SSSPT run in ../shared/samples/ssspt-hp-iops-1 with per-series verdicts."""

import json

import pytest
from django.core.management import CommandError, call_command

from analysis.models import Flag, Measurement, SteadyStateWindow, TestRun
from importers.ssspt_readme import parse_readme
from importers.ssspt_roles import ssspt_rule

SAMPLE = "ssspt-hp-iops-1"


@pytest.fixture
def imported(db, shared_samples, capsys):
    call_command("import_results", str(shared_samples / SAMPLE), "--format", "ssspt", "--json")
    return json.loads(capsys.readouterr().out)


def test_the_sample_is_published_as_an_imported_unsigned_run(imported):
    assert imported["status"] == "published"
    run = TestRun.objects.get()
    assert (run.source, run.source_license, run.signed, run.profile, run.compliant) == (
        "ssspt",
        "MIT",
        False,
        "imported",
        False,
    )
    assert run.drive_model.name == "Toshiba HG6 THNSNJ256G8NU" and run.drive_model.interface == "sata"
    assert run.drive_model.capacity_bytes == 256 * 10**9 and run.firmware.revision == "JUGB0101"
    assert run.drive_model.nand_type == "MLC"
    assert run.unit is not None and "15NS100WT9JW" not in run.unit.serial_hash
    assert (run.edition, run.threads, run.iodepth, run.fio_version) == ("client", 2, 16, "fio-3.8")
    assert run.host.kernel == "4.4.0-133-generic"
    assert run.missing["pcie_link"] and run.missing["write_cache"]
    assert Flag.objects.filter(kind="imported").count() == 1


def test_no_purge_is_asserted_and_no_read_is_flagged_as_unwritten_without_a_purge_record(imported):
    run = TestRun.objects.get()
    assert run.purge_method == "" and "no purge" in run.missing["purge_method"]
    assert "2018-10-30" in run.missing["purge_method"] and "2018-08-16" in run.missing["purge_method"]
    assert "not judged for unwritten data" in run.missing["unwritten_data"]
    assert "no purge is recorded" in run.compliance_reasons
    assert not Flag.objects.filter(kind="unwritten_data").exists()


def test_every_fio_output_becomes_a_traceable_measurement(imported, shared_samples):
    outputs = sorted((shared_samples / SAMPLE).glob("w*pc_*.json"))
    assert Measurement.objects.count() == len(outputs) == 391  # 383 rounds and 8 preconditioning runs
    assert Measurement.objects.filter(round__phase="wipc", in_steady_window=False).count() == 8
    m = Measurement.objects.get(raw_file="wdpc_bs4KB_read65_round1.json")
    doc = json.loads((shared_samples / SAMPLE / m.raw_file).read_text())
    job = doc["jobs"][0]
    assert (m.block_size_bytes, m.read_pct, m.round.number, m.round.series) == (4096, 65, 1, "bs4096.rw065")
    assert m.read_bw_bytes_per_s == job["read"]["bw_bytes"] and m.write_iops == pytest.approx(job["write"]["iops"])
    assert m.read_bytes == job["read"]["io_bytes"] and m.runtime_s == pytest.approx(60.001)


def test_each_series_has_its_own_pts_verdict_and_ssspts_claim(imported, shared_samples):
    windows = {w.variable: w for w in SteadyStateWindow.objects.all()}
    assert len(windows) == 56  # 8 block sizes x 7 mixes
    for window in windows.values():
        last = window.claimed["last_round_run"]
        assert window.claimed["tool"] == "SSSPT"
        # SSSPT stopped each series when its own rule passed: recomputing that rule finds exactly its last round
        assert window.claimed_steady is True and window.claimed["steady_round"] == last
        measured = Measurement.objects.filter(
            round__phase="wdpc", block_size_bytes=window.block_size_bytes, read_pct=window.read_pct
        )
        assert measured.count() == last
        if window.steady:
            assert window.data_excursion <= window.data_excursion_limit
            assert window.slope_excursion <= window.slope_excursion_limit
            assert set(measured.filter(in_steady_window=True).values_list("round__number", flat=True)) == set(
                window.rounds
            )
        else:
            assert window.claim_differs and "by the PTS rule it is not steady" in window.note
            assert not measured.filter(in_steady_window=True).exists()

    w = windows["iops.total_iops.rw000.bs4096"]
    assert (w.steady, w.steady_round, w.first_round, w.last_round) == (True, 5, 1, 5)
    w = windows["iops.total_iops.rw035.bs1048576"]
    assert (w.steady, w.steady_round) == (True, 17)
    differing = [w for w in windows.values() if w.claim_differs]
    assert len(differing) == 13
    assert Flag.objects.filter(kind="steady_state_claim_differs").count() == 13


def test_headline_metrics_and_aggregates_come_from_the_measurement_windows(imported):
    run = TestRun.objects.get()
    window = Measurement.objects.filter(round__phase="wdpc", block_size_bytes=4096, read_pct=0, in_steady_window=True)
    expected = sum(m.total_iops for m in window) / window.count()
    assert run.headline["iops_4k_write"] == pytest.approx(expected)
    aggregate = run.drive_model.aggregates.get(metric="iops_4k_write", factor="all")
    assert (aggregate.median, aggregate.iqr, aggregate.n_runs, aggregate.n_units) == (pytest.approx(expected), 0, 1, 1)
    assert run.drive_model.aggregates.filter(metric="iops_4k_write", factor="firmware", level="JUGB0101").exists()


def test_importing_the_same_directory_again_replaces_its_rows(imported, shared_samples, capsys):
    first = sorted(Measurement.objects.values_list("raw_file", "total_iops"))
    call_command("import_results", str(shared_samples / SAMPLE), "--format", "ssspt", "--json")
    again = json.loads(capsys.readouterr().out)
    assert again["submission"] == imported["submission"]
    assert sorted(Measurement.objects.values_list("raw_file", "total_iops")) == first
    assert TestRun.objects.count() == 1


def test_the_readme_table_is_read_without_its_markup(shared_samples):
    facts = parse_readme((shared_samples / SAMPLE / "README.md").read_text())
    assert facts.table["Interface"] == "SATA Rev 3.0" and facts.table["Model No."] == "THNSNJ256G8NU"
    assert facts.kernel == "4.4.0-133-generic" and facts.evidence["kernel"].startswith("README.md line 1:")


def test_ssspts_rule_differs_from_the_pts_rule():
    # a spread of 19 % of the average passes the PTS data-excursion limit (20 %) but puts a value outside ±10 %
    values = [100, 100, 100, 100, 119]
    assert not ssspt_rule(values)
    assert ssspt_rule([100, 101, 99, 100, 100])


def test_a_missing_directory_is_a_clear_error(db, tmp_path):
    with pytest.raises(CommandError, match="is not a directory"):
        call_command("import_results", str(tmp_path / "nope"), "--format", "ssspt")


def test_a_symlink_inside_the_directory_is_refused(db, tmp_path, shared_samples):
    (tmp_path / "wdpc_bs4KB_read0_round1.json").symlink_to(shared_samples / SAMPLE / "wdpc_bs4KB_read0_round1.json")
    with pytest.raises(CommandError, match="symbolic link"):
        call_command("import_results", str(tmp_path), "--format", "ssspt")
