"""Import every run under a directory tree in one go: SSSPT run folders and py-sss-pts result trees.

A run is found by its own files: a folder holding SSSPT's `wdpc_*` / `wipc_*` outputs, or a py-sss-pts result tree
(`round-N/` folders beside `device/` or `pre-conditioning/`). Each run becomes one submission, identified by the
digest of its files, so importing a tree again imports nothing new: a run already stored, whatever became of it
since (published, held, rejected, withdrawn), is skipped with that reason. One bad run never stops the others.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from importers.common import ImportError_, ImportMetadata, directory_digest, list_files, store_import
from importers.py_sss_pts import read_py_sss_pts
from importers.ssspt import WDPC, WIPC, read_ssspt
from submissions.models import Submission

READERS = {"ssspt": read_ssspt, "py-sss-pts": read_py_sss_pts}
REFERENCES = {"ssspt": "https://github.com/ljishen/SSSPT", "py-sss-pts": "https://github.com/ccrssaa/py-sss-pts"}
ROUND_DIR = re.compile(r"^round-\d+$")
PY_SSS_PTS_SIBLINGS = {"device", "pre-conditioning", "platform", "settings"}
# Files a folder of runs may hold without being a run itself.
DOCUMENTS = re.compile(r"^(readme|license|copying|notice|sources)(\.\w+)?$|^\.", re.I)


@dataclass
class RunOutcome:
    path: str  # relative to the tree's root
    status: str  # published, held, rejected or skipped
    reason: str = ""
    submission_id: str = ""
    test: str = ""


@dataclass
class TreeSummary:
    runs: list[RunOutcome] = field(default_factory=list)

    def count(self, *statuses: str) -> int:
        return sum(1 for run in self.runs if run.status in statuses)

    @property
    def imported(self) -> int:
        return self.count("published", "held", "rejected")

    def to_dict(self) -> dict:
        return {
            "imported": self.imported,
            "published": self.count("published"),
            "held": self.count("held"),
            "rejected": self.count("rejected"),
            "skipped": self.count("skipped"),
            "runs": [vars(run) for run in self.runs],
        }


def run_format(directory: Path, filenames: list[str], dirnames: list[str]) -> str:
    """Which tool wrote the run in `directory` ("" when it holds none)."""
    if any(WDPC.match(name) or WIPC.match(name) for name in filenames):
        return "ssspt"
    if any(ROUND_DIR.match(name) for name in dirnames) and PY_SSS_PTS_SIBLINGS & set(dirnames):
        return "py-sss-pts"
    return ""


def find_runs(root: Path) -> tuple[list[tuple[Path, str]], list[RunOutcome]]:
    """Every run under `root` (its folder and format, in path order) and the folders passed over, with the reason."""
    if not root.is_dir():
        raise ImportError_(f"{root} is not a directory")
    runs: list[tuple[Path, str]] = []
    passed: list[RunOutcome] = []
    for dirpath, dirnames, filenames in _walk(root):
        directory = Path(dirpath)
        relative = _relative(directory, root)
        for name in [d for d in dirnames if (directory / d).is_symlink()]:
            passed.append(RunOutcome(_relative(directory / name, root), "skipped", "a symbolic link; not followed"))
            dirnames.remove(name)
        fmt = run_format(directory, filenames, dirnames)
        if fmt:
            runs.append((directory, fmt))
            dirnames[:] = []  # a run's subfolders belong to it
            continue
        if [name for name in filenames if not DOCUMENTS.match(name)]:
            passed.append(RunOutcome(relative, "skipped", "holds no SSSPT or py-sss-pts run outputs"))
    return runs, passed


def import_tree(
    root: Path,
    *,
    uploader=None,
    license: str = "",
    source_base: str = "",
    on_run: Callable[[str], None] | None = None,
    on_found: Callable[[int], None] | None = None,
) -> TreeSummary:
    """Import every run under `root`; `on_found(n)` is told how many runs there are, `on_run(path)` each one done."""
    root = root.resolve()
    runs, passed = find_runs(root)
    if on_found:
        on_found(len(runs))
    summary = TreeSummary(runs=list(passed))
    for directory, fmt in runs:
        relative = _relative(directory, root)
        reference = f"{source_base.rstrip('/')}/{relative}" if source_base else REFERENCES[fmt]
        metadata = ImportMetadata(license=license, source_reference=reference)
        summary.runs.append(import_run(directory, fmt, name=relative, metadata=metadata, uploader=uploader))
        if on_run:
            on_run(relative)
    summary.runs.sort(key=lambda run: run.path)
    return summary


def import_run(directory: Path, fmt: str, *, name: str, metadata: ImportMetadata, uploader=None) -> RunOutcome:
    """One run: skipped when its files were imported before, else read and stored (published, held or rejected)."""
    try:
        files = list_files(directory)
        digest = directory_digest(directory, files)
        existing = Submission.objects.filter(sha256=digest[0]).values_list("id", "status").first()
        if existing:
            return RunOutcome(name, "skipped", f"already imported as submission {existing[0]} ({existing[1]})")
        record, files = READERS[fmt](directory, metadata)
        submission, result = store_import(
            record=record, root=directory, files=files, uploader=uploader, name=name, digest=digest
        )
    except (ImportError_, OSError) as exc:
        return RunOutcome(name, "skipped", f"cannot be read: {exc}")
    test = ",".join(run.test for run in record.test_runs)
    return RunOutcome(name, result.status, "; ".join(result.reasons)[:500], str(submission.id), test)


def _walk(root: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        yield dirpath, dirnames, sorted(filenames)


def _relative(path: Path, root: Path) -> str:
    relative = path.relative_to(root).as_posix()
    return root.name if relative == "." else relative
