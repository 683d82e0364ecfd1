"""manage.py import_tree: a tree of real SSSPT runs in one go, idempotent, with a summary of what became of each."""

import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from analysis.models import Measurement, TestRun
from importers.tree import find_runs
from submissions.models import Submission

MORE = "ssspt-more"


@pytest.fixture
def tree(tmp_path, shared_samples):
    """A small launch tree: a latency run and part of a throughput run of two hosts, plus a folder of notes."""
    root = tmp_path / "platforms"
    shutil.copytree(shared_samples / MORE / "hp/lat/3", root / "hp/lat/3")
    tp = root / "rockpro64/throughput/7"
    tp.mkdir(parents=True)
    shutil.copyfile(shared_samples / MORE / "rockpro64/throughput/7/README.md", tp / "README.md")
    for path in (shared_samples / MORE / "rockpro64/throughput/7").glob("wdpc_bs1024KB_read*_round*.json"):
        shutil.copyfile(path, tp / path.name)
    (root / "notes").mkdir()
    (root / "notes/plan.txt").write_text("which drives to test next\n")
    (root / "README.md").write_text("SSSPT results\n")
    return root


def run_tree(path, capsys, *extra) -> dict:
    call_command("import_tree", str(path), "--json", *extra)
    return json.loads(capsys.readouterr().out)


def test_every_run_of_the_tree_is_imported_and_the_rest_is_skipped_with_a_reason(db, tree, capsys):
    summary = run_tree(tree, capsys, "--source-base", "https://github.com/ljishen/SSSPT/tree/0e9fe2e/platforms/")
    assert (summary["imported"], summary["published"], summary["skipped"]) == (2, 2, 1)
    by_path = {run["path"]: run for run in summary["runs"]}
    assert by_path["hp/lat/3"]["test"] == "lat" and by_path["rockpro64/throughput/7"]["test"] == "tp"
    assert by_path["notes"] == {
        "path": "notes",
        "status": "skipped",
        "reason": "holds no SSSPT or py-sss-pts run outputs",
        "submission_id": "",
        "test": "",
    }
    run = TestRun.objects.get(test="tp")
    assert run.source_reference == "https://github.com/ljishen/SSSPT/tree/0e9fe2e/platforms/rockpro64/throughput/7"
    assert run.submission.original_name == "rockpro64/throughput/7"
    assert run.host.board_name == "RockPro64" and run.host.cpu_count == 2
    assert set(TestRun.objects.values_list("test", flat=True)) == {"lat", "tp"}


def test_importing_the_tree_again_imports_nothing_new(db, tree, capsys):
    first = run_tree(tree, capsys)
    rows = (Submission.objects.count(), Measurement.objects.count())
    again = run_tree(tree, capsys)
    assert (again["imported"], again["skipped"]) == (0, 3)
    ids = {run["path"]: run["submission_id"] for run in first["runs"]}
    for run in again["runs"]:
        if run["path"] != "notes":
            assert run["reason"] == f"already imported as submission {ids[run['path']]} (published)"
    assert (Submission.objects.count(), Measurement.objects.count()) == rows


def test_a_run_that_cannot_be_read_is_reported_and_the_others_are_imported(db, tree, capsys):
    broken = tree / "hp/throughput/9"
    broken.mkdir(parents=True)
    (broken / "wdpc_bs4KB_read0_round1.json").write_text('{"fio version": "fio-3.8", "jobs": [')
    link_target = tree / "hp/lat/3"
    (tree / "elsewhere").symlink_to(link_target, target_is_directory=True)
    summary = run_tree(tree, capsys)
    by_path = {run["path"]: run for run in summary["runs"]}
    assert by_path["hp/throughput/9"]["status"] == "rejected"
    assert "wdpc_bs4KB_read0_round1.json: no usable fio result" in by_path["hp/throughput/9"]["reason"]
    assert by_path["elsewhere"] == {
        **by_path["elsewhere"],
        "status": "skipped",
        "reason": "a symbolic link; not followed",
    }
    assert summary["published"] == 2 and TestRun.objects.count() == 2


def test_the_summary_is_printed_as_tables(db, tree, capsys):
    call_command("import_tree", str(tree))
    out = capsys.readouterr().out
    assert "Import summary" in out and "hp/lat/3" in out and "published" in out
    assert "holds no SSSPT or py-sss-pts run outputs" in out


def test_a_missing_tree_is_a_clear_error(db, tmp_path):
    with pytest.raises(CommandError, match="is not a directory"):
        call_command("import_tree", str(tmp_path / "nope"))


def test_every_run_of_the_launch_dataset_is_found(shared_samples):
    runs, passed = find_runs(shared_samples / MORE)
    assert len(runs) == 30 and passed == []
    assert {fmt for _, fmt in runs} == {"ssspt"}
    assert sum(1 for path, _ in runs if path.parent.name == "lat") == 8


def test_an_imported_drive_page_shows_iops_throughput_and_latency(db, shared_samples, tmp_path, capsys, client):
    root = tmp_path / "one-drive"
    for run, pattern in (
        ("rockpro64/iops/8", "wdpc_bs4KB_read*_round*.json"),
        ("rockpro64/throughput/8", "wdpc_bs1024KB_read*_round*.json"),
        ("rockpro64/lat/3", "wdpc_bs4KB_read*_round*.json"),
    ):
        folder = root / run
        folder.mkdir(parents=True)
        shutil.copyfile(shared_samples / MORE / run / "README.md", folder / "README.md")
        for path in (shared_samples / MORE / run).glob(pattern):
            shutil.copyfile(path, folder / path.name)
    assert run_tree(root, capsys)["published"] == 3
    drive = TestRun.objects.first().drive_model
    assert TestRun.objects.filter(drive_model=drive).count() == 3
    page = client.get(f"/drives/{drive.slug}/")
    assert page.status_code == 200
    html = page.content.decode()
    for chart in ("IOPS by block size", "Throughput: sequential read and write", "Latency (mean"):
        assert chart in html


def test_a_py_sss_pts_tree_is_one_run_and_its_subfolders_are_not_walked(tmp_path):
    run = tmp_path / "lab/run-1"
    (run / "round-1/rr-0/bs-4k/wdpc").mkdir(parents=True)
    (run / "round-1/rr-0/bs-4k/wdpc/output.json").write_text("{}")
    (run / "device/nvme-id-ctrl").mkdir(parents=True)
    (tmp_path / "lab/round-7").mkdir()  # a round-N folder alone is not a py-sss-pts tree
    runs, passed = find_runs(tmp_path)
    assert runs == [(run, "py-sss-pts")] and passed == []


def test_a_tree_that_is_itself_a_run_is_imported_under_its_own_name(db, shared_samples, tmp_path, capsys):
    run = tmp_path / "hp-lat-4"
    shutil.copytree(shared_samples / MORE / "hp/lat/4", run)
    summary = run_tree(run, capsys)
    assert [(r["path"], r["status"], r["test"]) for r in summary["runs"]] == [("hp-lat-4", "published", "lat")]
