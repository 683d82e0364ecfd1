"""SSSPT imports assert a purge, a preconditioning or a host fact only where the folder shows it.

The run folders here are built from real SSSPT outputs in ../shared/samples/ssspt-more (copied file by file, with
README sentences added where a test needs a documented purge).
"""

import json
import shutil

import pytest
from django.core.management import call_command

from analysis.models import Flag, Measurement, TestRun
from importers.ssspt import read_ssspt
from importers.ssspt_readme import parse_readme

MORE = "ssspt-more"


def copy_run(shared_samples, tmp_path, run: str, patterns: list[str], *, readme_extra: str = "", name: str = "run"):
    source = shared_samples / MORE / run
    target = tmp_path / name
    target.mkdir(parents=True)
    for pattern in patterns:
        for path in sorted(source.glob(pattern)):
            shutil.copyfile(path, target / path.name)
    (target / "README.md").write_text((source / "README.md").read_text() + readme_extra)
    return target


def import_dir(path, capsys) -> dict:
    call_command("import_results", str(path), "--format", "ssspt", "--json")
    return json.loads(capsys.readouterr().out)


# rockpro64/throughput/3 read 4 KiB sequentially (rounds 1-5) before its first wipc_* file ran: on a purged drive
# those reads would meet unwritten blocks, on a used one (no purge recorded) nobody can tell.
EARLY_READS = ["wdpc_bs4KB_read100_round*.json", "wipc_bs8KB.json", "wdpc_bs8KB_read*_round*.json"]
PURGE_LINE = "\nBefore these profiles the drive was purged with `blkerasediscard.sh /dev/sda`.\n"


def test_an_iops_run_with_no_purge_record_raises_no_unwritten_data_flag(db, shared_samples, tmp_path, capsys):
    # rockpro64/iops/7 has no wipc_* file and no purge: the old importer flagged 259 of its reads as unwritten
    run_dir = copy_run(shared_samples, tmp_path, "rockpro64/iops/7", ["wdpc_bs4KB_read*_round*.json"])
    assert import_dir(run_dir, capsys)["status"] == "published"
    run = TestRun.objects.get()
    assert run.test == "iops" and Measurement.objects.filter(read_pct__gt=0).count() > 20
    assert not Flag.objects.filter(kind="unwritten_data").exists()
    assert run.purge_method == "" and "no purge" in run.missing["purge_method"]
    assert "no wipc_* output" in run.missing["wipc"] and "no preconditioning is recorded" in run.compliance_reasons
    assert run.missing["unwritten_data"]


def test_a_wipc_file_alone_is_no_purge_so_early_reads_are_not_flagged(db, shared_samples, tmp_path, capsys):
    run_dir = copy_run(shared_samples, tmp_path, "rockpro64/throughput/3", EARLY_READS)
    assert import_dir(run_dir, capsys)["status"] == "published"
    run = TestRun.objects.get()
    assert Measurement.objects.filter(round__phase="wipc").count() == 1 and "wipc" not in run.missing
    assert not Flag.objects.filter(kind="unwritten_data").exists()


def test_a_documented_purge_with_a_wipc_file_flags_the_reads_that_ran_before_any_write(
    db, shared_samples, tmp_path, capsys
):
    run_dir = copy_run(shared_samples, tmp_path, "rockpro64/throughput/3", EARLY_READS, readme_extra=PURGE_LINE)
    assert import_dir(run_dir, capsys)["status"] == "published"
    run = TestRun.objects.get()
    assert run.purge_method == "ATA secure erase + TRIM" and "purge_method" not in run.missing
    assert (
        run.evidence["purge_method"].startswith("README.md line ") and "blkerasediscard" in run.evidence["purge_method"]
    )
    flagged = Flag.objects.filter(kind="unwritten_data").select_related("measurement")
    # the five 4 KiB reads ran on the purged drive before anything was written; the 8 KiB ones followed the wipc
    assert sorted(f.measurement.raw_file for f in flagged) == [f"wdpc_bs4KB_read100_round{n}.json" for n in range(1, 6)]
    assert all("Only about 0%" in f.reason and "blkerasediscard" in f.reason for f in flagged)


def test_a_negated_purge_sentence_documents_nothing(shared_samples, tmp_path):
    text = "\nThe drive was not purged (no blkdiscard) before these runs.\n"
    run_dir = copy_run(shared_samples, tmp_path, "rockpro64/throughput/3", EARLY_READS, readme_extra=text)
    record, _ = read_ssspt(run_dir)
    assert record.purge_method == "" and not [f for f in record.flags if f.kind == "unwritten_data"]


def test_the_kernel_and_architecture_are_read_from_a_uname_block(shared_samples):
    facts = parse_readme((shared_samples / MORE / "hp/lat/3/README.md").read_text())
    assert (facts.kernel, facts.architecture) == ("4.4.132-0404132-generic", "x86_64")
    assert "uname" not in facts.evidence["kernel"] and "#201805211041" in facts.evidence["kernel"]
    assert facts.cpu_count is None and not facts.purge_method


def test_two_different_kernel_releases_leave_the_kernel_unknown():
    facts = parse_readme(
        "Generated on kernel release 4.4.0-133-generic.\n```\n$ uname -a\nLinux h 5.4.0 #1 x86_64\n```"
    )
    assert facts.kernel == "" and "2 kernel releases" in facts.conflicts["kernel"]


def test_the_board_and_the_enabled_cpus_are_read_where_the_readme_states_them(shared_samples):
    facts = parse_readme((shared_samples / MORE / "rockpro64/iops/7/README.md").read_text())
    assert (facts.board_name, facts.cpu_count, facts.cpu_model) == ("RockPro64", 2, "Cortex-A72")
    assert facts.kernel == "" and facts.architecture == ""
    plain = parse_readme((shared_samples / MORE / "rockpro64/iops/5/README.md").read_text())
    assert plain.board_name == "RockPro64" and plain.cpu_count is None


def test_an_imported_host_records_what_the_readme_states_and_why_the_rest_is_unknown(
    db, shared_samples, tmp_path, capsys
):
    run_dir = copy_run(shared_samples, tmp_path, "hp/lat/3", ["wdpc_bs4KB_read0_round*.json"])
    import_dir(run_dir, capsys)
    host = TestRun.objects.get().host
    assert (host.kernel, host.architecture) == ("4.4.132-0404132-generic", "x86_64")
    assert "states no CPU model" in host.missing["cpu_model"] and host.missing["os_name"]
    evidence = TestRun.objects.get().evidence
    assert "Linux pl2 4.4.132-0404132-generic" in evidence["host.kernel"] and "purge_method" not in evidence
    assert evidence["target_kind"] == "fio filename=/dev/sda" and evidence["test"] == "fio rw=readwrite, iodepth=1"


def test_rounds_left_over_from_an_abandoned_attempt_are_not_imported(db, shared_samples, tmp_path, capsys):
    # rockpro64/throughput/2: rounds 6-10 of 4 KiB reads finished hours before the series' round 1 (a rerun stopped
    # at round 5 and left the earlier attempt's later rounds in the folder)
    run_dir = copy_run(shared_samples, tmp_path, "rockpro64/throughput/2", ["wdpc_bs4KB_read100_round*.json"])
    assert len(list(run_dir.glob("wdpc_*"))) == 10
    assert import_dir(run_dir, capsys)["status"] == "published"
    rounds = sorted(Measurement.objects.values_list("round__number", flat=True))
    assert rounds == [1, 2, 3, 4, 5]
    skipped = TestRun.objects.get().missing["skipped_files"]
    assert "wdpc_bs4KB_read100_round6..10.json (5 file(s) finished before round 1" in skipped


def test_rounds_out_of_order_within_an_attempt_reject_the_folder(db, shared_samples, tmp_path, capsys):
    source = shared_samples / MORE / "hp/throughput/6"
    run_dir = tmp_path / "swapped"
    run_dir.mkdir()
    shutil.copyfile(source / "README.md", run_dir / "README.md")
    for n, source_round in ((1, 1), (2, 3), (3, 2), (4, 4), (5, 5)):
        shutil.copyfile(
            source / f"wdpc_bs4KB_read0_round{source_round}.json", run_dir / f"wdpc_bs4KB_read0_round{n}.json"
        )
    outcome = import_dir(run_dir, capsys)
    assert outcome["status"] == "rejected"
    assert any("round 3 finished" in r and "not monotonic" in r for r in outcome["reasons"])


@pytest.mark.parametrize(
    ("line", "method"),
    [
        ("sudo blkdiscard /dev/nvme0n1", "TRIM (discard)"),
        ("hdparm --user-master u --security-erase NULL /dev/sda", "ATA secure erase"),
        ("purged with nvme format /dev/nvme0n1 -s 1", "format"),
        ("nvme sanitize /dev/nvme0 -a 2", "sanitize"),
        ("the drive was written before these runs", ""),
        ("these runs skipped the secure erase", ""),
    ],
)
def test_a_purge_is_documented_only_by_a_line_naming_how(line, method):
    assert parse_readme(f"Profiles.\n{line}\n").purge_method == method
