"""The launch sample: SSSPT runs committed in the repository, which a fresh site imports so its pages show results.

`importers/data/launch/ssspt-launch-sample.tar.xz` holds six SSSPT run folders (two drive models, an IOPS, a throughput
and a latency run each) under `platforms/`, laid out as in SSSPT's `analysis/data/platforms/`, with SSSPT's MIT licence
and an attribution (`scripts/build-launch-sample.py` builds it). Seeding extracts it into a temporary folder and
imports that folder through `import_tree`, like any tree of runs, and only into a database with no published
submission: a site with data of its own is left as it is.
"""

from __future__ import annotations

import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.db import transaction

from analysis.models import TestRun
from importers.common import MAX_FILE_BYTES, MAX_FILES, ImportError_
from importers.tree import TreeSummary, import_tree
from submissions.models import Submission, SubmissionStatus

LAUNCH_DIR = Path(__file__).resolve().parent / "data" / "launch"
ARCHIVE = LAUNCH_DIR / "ssspt-launch-sample.tar.xz"
README = "importers/data/launch/README.md"
RUNS_FOLDER = "platforms"  # SSSPT's analysis/data/platforms/, inside the archive
SSSPT_COMMIT = "0e9fe2e949a4e6024167e56631939f6614c7e805"
SOURCE_BASE = f"https://github.com/ljishen/SSSPT/tree/{SSSPT_COMMIT}/analysis/data/platforms"


@dataclass
class SeedOutcome:
    message: str  # one line for the operator
    summary: TreeSummary | None = None  # None when the database was left alone


def seed_launch_sample(*, archive: Path = ARCHIVE) -> SeedOutcome:
    """Import the launch sample when no submission is published yet; else leave the database alone.

    One transaction: an interrupted seed leaves the database empty, so the next call seeds it again.
    """
    published = Submission.objects.filter(status=SubmissionStatus.PUBLISHED).count()
    if published:
        return SeedOutcome(
            f"Skipped the launch sample: the database already has {published} published "
            f"submission{'s' if published != 1 else ''}; it seeds an empty site only."
        )
    with tempfile.TemporaryDirectory(prefix="nvmedb-launch-") as scratch, transaction.atomic():
        extract(archive, Path(scratch))
        summary = import_tree(Path(scratch) / RUNS_FOLDER, source_base=SOURCE_BASE)
    if not summary.imported:
        reason = next((run.reason for run in summary.runs if run.reason), "no runs in the archive")
        return SeedOutcome(
            f"Skipped the launch sample: nothing new to import ({len(summary.runs)} runs; {reason}).", summary
        )
    ids = [run.submission_id for run in summary.runs if run.status == "published"]
    drives = TestRun.objects.filter(submission_id__in=ids).values("drive_model").distinct().count()
    runs = f"{summary.imported} runs"
    not_published = [(status, summary.count(status)) for status in ("held", "rejected", "skipped")]
    if any(n for _, n in not_published):
        detail = ", ".join(f"{n} {status}" for status, n in not_published if n)
        runs += f" ({summary.count('published')} published, {detail}: the admin says why)"
    return SeedOutcome(f"Imported the launch sample: {drives} drives, {runs} (SSSPT, MIT) — see {README}", summary)


def extract(archive: Path, destination: Path) -> None:
    """Extract `archive` into `destination`: regular files and folders only, every path relative and inside it."""
    try:
        with tarfile.open(archive, "r:xz") as tar:
            members = tar.getmembers()
            check_members(members)
            tar.extractall(destination, members=members, filter="data")
    except (OSError, tarfile.TarError, EOFError) as exc:  # lzma.LZMAError is an OSError
        raise ImportError_(f"cannot read the launch sample {archive}: {exc}") from exc


def check_members(members: list[tarfile.TarInfo]) -> None:
    """Refuse links, devices, absolute or climbing paths and oversized contents before anything is written."""
    if len(members) > MAX_FILES:
        raise ImportError_(f"the archive holds {len(members)} members, more than {MAX_FILES}")
    for member in members:
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts or "\\" in member.name:
            raise ImportError_(f"the archive member {member.name!r} is not a plain relative path")
        if not (member.isfile() or member.isdir()):
            raise ImportError_(f"the archive member {member.name!r} is not a regular file or folder")
        if member.size > MAX_FILE_BYTES:
            raise ImportError_(f"the archive member {member.name!r} is {member.size} bytes, over {MAX_FILE_BYTES}")
