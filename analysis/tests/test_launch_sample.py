"""manage.py seed_launch_sample: the SSSPT runs committed in importers/data/launch/ fill an empty site, and only that."""

import importlib.util
import io
import re
import tarfile
from collections import defaultdict
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from analysis.models import TestRun
from analysis.selectors import public_test_runs
from analysis.tests.factories import iops_run
from importers.launch import ARCHIVE, LAUNCH_DIR, RUNS_FOLDER, SOURCE_BASE
from submissions.models import Submission

IMPORTED = "Imported the launch sample: 2 drives, 6 runs (SSSPT, MIT) — see importers/data/launch/README.md"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build-launch-sample.py"
# a headline row with a figure, not "not measured"
HEADLINE_ROW = '<th scope="row">{label}</th>\\s*<td class="num">'


def seed(*extra) -> str:
    out = io.StringIO()
    call_command("seed_launch_sample", *extra, stdout=out)
    return out.getvalue()


def archive_files() -> dict[str, bytes]:
    with tarfile.open(ARCHIVE, "r:xz") as tar:
        return {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}


def build_script():
    spec = importlib.util.spec_from_file_location("build_launch_sample", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_empty_site_gets_two_drives_each_with_public_iops_throughput_and_latency_pages(db, client):
    assert seed() == IMPORTED + "\n"
    assert set(Submission.objects.values_list("status", flat=True)) == {"published"}
    tests_by_drive = defaultdict(set)
    for run in public_test_runs().select_related("drive_model", "submission"):
        tests_by_drive[run.drive_model].add(run.test)
        assert run.source_reference == f"{SOURCE_BASE}/{run.submission.original_name}"
        assert run.source_license == "MIT"
    assert len(tests_by_drive) == 2
    assert {drive.model_number for drive in tests_by_drive} == {"THNSNJ128G8NU", "THNSNJ256G8NU"}
    for drive, tests in tests_by_drive.items():
        assert tests == {"iops", "tp", "lat"}
        page = client.get(f"/drives/{drive.slug}/")
        assert page.status_code == 200
        html = page.content.decode()
        for label in (
            "4 KiB random read",
            "4 KiB random write",
            "1024 KiB sequential read",
            "4 KiB write latency, mean",
        ):
            assert re.search(HEADLINE_ROW.format(label=re.escape(label)), html), f"{drive.name}: no {label} figure"
        windows = " ".join(re.findall(r'<span class="window">([^:<]*):', html))
        for test in ("IOPS", "TP", "LAT"):  # each test's headlines say what their values are
            assert test in windows.replace(",", " ").split(), windows
    assert client.get("/").content.decode().count("Toshiba HG6") >= 2


def test_a_second_call_imports_nothing_and_says_why(db):
    seed()
    rows = (Submission.objects.count(), TestRun.objects.count())
    assert seed() == (
        "Skipped the launch sample: the database already has 6 published submissions; it seeds an empty site only.\n"
    )
    assert (Submission.objects.count(), TestRun.objects.count()) == rows


def test_runs_imported_before_are_not_imported_again_even_once_withdrawn(db):
    seed()
    Submission.objects.update(status="withdrawn")
    out = seed()
    assert out.startswith("Skipped the launch sample: nothing new to import (6 runs; already imported as submission ")
    assert Submission.objects.count() == 6 and not Submission.objects.filter(status="published").exists()


def test_a_database_with_published_results_is_left_alone(db):
    iops_run()
    before = set(Submission.objects.values_list("id", flat=True))
    assert seed() == (
        "Skipped the launch sample: the database already has 1 published submission; it seeds an empty site only.\n"
    )
    assert set(Submission.objects.values_list("id", flat=True)) == before and TestRun.objects.count() == 1


def test_the_archive_is_small_licensed_and_holds_only_plain_relative_files():
    assert ARCHIVE.stat().st_size <= 3 * 1024 * 1024
    with tarfile.open(ARCHIVE, "r:xz") as tar:
        members = tar.getmembers()
    for member in members:
        assert member.isfile(), f"{member.name} is not a regular file"
        assert not member.name.startswith("/") and ".." not in Path(member.name).parts
    files = archive_files()
    assert files["LICENSE-SSSPT"] == (LAUNCH_DIR / "LICENSE-SSSPT").read_bytes()
    assert b"MIT License" in files["LICENSE-SSSPT"] and b"Copyright (c) 2018 Jianshen Liu" in files["LICENSE-SSSPT"]
    assert files["README.md"] == (LAUNCH_DIR / "README.md").read_bytes()
    assert set(files) - {"LICENSE-SSSPT", "README.md"} == {name for name in files if name.startswith("platforms/")}


def test_the_attribution_is_what_the_build_script_writes_for_the_runs_in_the_archive():
    script = build_script()
    assert (LAUNCH_DIR / "README.md").read_text() == script.render_readme()
    assert f"{script.REPOSITORY}/tree/{script.COMMIT}/{script.PLATFORMS}" == SOURCE_BASE
    runs = {re.sub(r"/[^/]+$", "", name.removeprefix(f"{RUNS_FOLDER}/")) for name in archive_files() if "/" in name}
    assert runs == set(script.RUNS)


def test_the_archive_holds_the_shared_sample_runs_byte_for_byte(shared_samples):
    """hp/iops/1 is ../shared/samples/ssspt-hp-iops-1; every other run is under ../shared/samples/ssspt-more."""
    by_run = defaultdict(dict)
    for name, data in archive_files().items():
        if name.startswith(f"{RUNS_FOLDER}/"):
            run, file = name.removeprefix(f"{RUNS_FOLDER}/").rsplit("/", 1)
            by_run[run][file] = data
    for run, files in by_run.items():
        folder = shared_samples / "ssspt-hp-iops-1" if run == "hp/iops/1" else shared_samples / "ssspt-more" / run
        assert set(files) == {path.name for path in folder.iterdir()}, f"{run} is not the whole run folder"
        for file, data in files.items():
            assert data == (folder / file).read_bytes(), f"{run}/{file} differs from the shared sample"


def hostile_archive(path: Path, name: str, kind: bytes = tarfile.REGTYPE) -> Path:
    with tarfile.open(path, "w:xz") as tar:
        good = tarfile.TarInfo("platforms/README.md")
        tar.addfile(good, io.BytesIO(b""))
        bad = tarfile.TarInfo(name)
        bad.type = kind
        bad.linkname = "/etc/passwd" if kind != tarfile.REGTYPE else ""
        tar.addfile(bad, io.BytesIO(b""))
    return path


@pytest.mark.parametrize(
    ("name", "kind", "why"),
    [
        ("platforms/../../escaped.json", tarfile.REGTYPE, "is not a plain relative path"),
        ("/absolute.json", tarfile.REGTYPE, "is not a plain relative path"),
        ("platforms/hp/link.json", tarfile.SYMTYPE, "is not a regular file or folder"),
        ("platforms/hp/hard.json", tarfile.LNKTYPE, "is not a regular file or folder"),
    ],
)
def test_an_archive_with_a_link_or_a_path_outside_is_refused_before_anything_is_written(db, tmp_path, name, kind, why):
    archive = hostile_archive(tmp_path / "hostile.tar.xz", name, kind)
    with pytest.raises(CommandError, match=re.escape(why)):
        seed("--archive", str(archive))
    assert not Submission.objects.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile.tar.xz"]


def test_a_missing_or_broken_archive_is_a_clear_error(db, tmp_path):
    with pytest.raises(CommandError, match="cannot read the launch sample"):
        seed("--archive", str(tmp_path / "nope.tar.xz"))
    (tmp_path / "broken.tar.xz").write_bytes(b"not xz")
    with pytest.raises(CommandError, match="cannot read the launch sample"):
        seed("--archive", str(tmp_path / "broken.tar.xz"))
