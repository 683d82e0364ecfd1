"""What every importer shares: reading a directory safely, checking its fio outputs, and storing it as a submission."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from django.db import transaction
from django.utils import timezone as dj_timezone

from analysis import crosscheck
from analysis.records import MeasurementRecord, SubmissionRecord
from analysis.services import store_submission
from analysis.values import optional_int
from nvmedb_client.fio_output import FioOutputError, FioSummary, parse_fio_output, summarize
from submissions.content import file_fingerprints, record_fingerprints
from submissions.models import Submission, SubmissionEvent

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_FILES = 20000
IMPORTER_USERNAME = "nvmedb-import"


class ImportError_(ValueError):
    """The directory cannot be imported; the message says why."""


@dataclass
class ImportMetadata:
    """What the command line adds to (or corrects in) what the directory says about the drive and the run."""

    vendor: str = ""
    model: str = ""
    serial: str = ""
    firmware: str = ""
    capacity_bytes: int | None = None
    interface: str = ""
    edition: str = ""
    license: str = ""
    source_reference: str = ""
    kernel: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class FioFile:
    path: str  # relative to the imported directory
    doc: dict
    summary: FioSummary


def list_files(root: Path) -> list[Path]:
    """Every regular file under `root`, refusing symlinks (an import must not read outside its directory)."""
    if not root.is_dir():
        raise ImportError_(f"{root} is not a directory")
    files = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            raise ImportError_(f"{path.relative_to(root)} is a symbolic link; imports read regular files only")
        if path.is_file():
            files.append(path)
            if len(files) > MAX_FILES:
                raise ImportError_(f"more than {MAX_FILES} files under {root}")
    return files


def read_limited(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ImportError_(f"{path.name} is {size} bytes, more than the {MAX_FILE_BYTES}-byte limit")
    return path.read_bytes()


def directory_digest(root: Path, files: Iterable[Path]) -> tuple[str, int]:
    """SHA-256 over every file's relative path and content hash, and the total size: the import's identity."""
    outer = hashlib.sha256()
    total = 0
    for path in sorted(files):
        data = read_limited(path)
        total += len(data)
        outer.update(str(path.relative_to(root)).encode() + b"\0" + hashlib.sha256(data).digest())
    return outer.hexdigest(), total


def read_fio(root: Path, path: Path, record: SubmissionRecord) -> FioFile | None:
    relative = str(path.relative_to(root))
    try:
        doc = parse_fio_output(read_limited(path))
        return FioFile(relative, doc, summarize(doc))
    except (FioOutputError, ImportError_, OSError) as exc:
        record.reject_reasons.append(f"{relative}: no usable fio result: {exc}"[:300])
        return None


def fio_times(doc: Mapping) -> tuple[datetime | None, datetime | None]:
    """(start, end) of a fio run from its own clock: `timestamp` is when it finished, `elapsed` how long it ran."""
    end = doc.get("timestamp")
    if not isinstance(end, (int, float)):
        return None, None
    jobs = doc.get("jobs") or [{}]
    elapsed = jobs[0].get("elapsed") if isinstance(jobs[0], Mapping) else None
    finished = datetime.fromtimestamp(end, tz=timezone.utc)
    started = datetime.fromtimestamp(end - elapsed, tz=timezone.utc) if isinstance(elapsed, (int, float)) else None
    return started, finished


def measurement_from_fio(
    fio: FioFile,
    *,
    phase: str,
    series: str,
    round_number: int,
    block_size_bytes: int,
    read_pct: int,
    pattern: str,
    missing: dict[str, str],
    test: str = "iops",
    **extra,
) -> MeasurementRecord:
    """An imported measurement: the figures, clock, threads and depth come from the fio output itself."""
    options = crosscheck.job_options(fio.doc)
    started, finished = fio_times(fio.doc)
    return MeasurementRecord(
        run_key=extra.pop("run_key", fio.path),
        test=test,
        phase=phase,
        series=series,
        round_number=round_number,
        block_size_bytes=block_size_bytes,
        read_pct=read_pct,
        summary=fio.summary,
        raw_file=fio.path,
        json_path="$.jobs[*]",
        threads=optional_int(options.get("numjobs")),
        iodepth=optional_int(options.get("iodepth")),
        started_at=started,
        finished_at=finished,
        pattern=pattern,
        runtime_s=crosscheck.direction_runtime_s(fio.doc),
        missing=missing,
        **extra,
    )


def check_fio_file(fio: FioFile, *, declared: Mapping, record: SubmissionRecord) -> None:
    """The arithmetic and job-option cross-checks, against what the file name or layout declares."""
    options = crosscheck.job_options(fio.doc)
    failures = crosscheck.check_iops_bandwidth(
        fio.doc, block_size_bytes=declared.get("block_size_bytes"), raw_file=fio.path
    )
    runtime = crosscheck.parse_seconds(options.get("runtime", "")) if options.get("runtime") else None
    failures += crosscheck.check_bytes_runtime(fio.doc, raw_file=fio.path, declared_runtime_s=runtime)
    failures += crosscheck.check_job_options(run=declared, options=options, raw_file=fio.path)
    for failure in failures:
        record.reject_reasons.append(failure.reason[:300])


def edition_from_options(options: Mapping[str, str]) -> str:
    """PTS-E runs TC 4 / QD 32 on 100 % of the drive, PTS-C TC 2 / QD 16 on 75 % (PTS 2.0.2, §3 and §4)."""
    pair = (options.get("numjobs"), options.get("iodepth"))
    if pair == ("4", "32"):
        return "enterprise"
    if pair == ("2", "16"):
        return "client"
    return ""


def importer_user():
    from django.contrib.auth import get_user_model

    user, created = get_user_model().objects.get_or_create(username=IMPORTER_USERNAME)
    if created:
        user.set_unusable_password()
        user.save()
    return user


def store_import(
    *,
    record: SubmissionRecord,
    root: Path,
    files: list[Path],
    uploader=None,
    name: str = "",
    digest: tuple[str, int] | None = None,
):
    """Create (or find, for a re-import of the same files) the submission and store the record in one transaction.

    `name` is what the submission is called (default: the folder's name); `digest` the folder's (sha256, size) when
    the caller has already computed it.
    """
    digest, size = digest or directory_digest(root, files)
    with transaction.atomic():
        submission, created = Submission.objects.select_for_update().get_or_create(
            sha256=digest,
            defaults={
                "uploader": uploader or importer_user(),
                "size": size,
                "storage_name": "",
                "original_name": (name or root.name)[:255],
                "status": "ingesting",
            },
        )
        result = store_submission(submission=submission, record=record)
        # published here, so nobody can publish these fio outputs again as their own run
        record_fingerprints(submission=submission, fingerprints=file_fingerprints(root, files))
        now = dj_timezone.now()
        SubmissionEvent.objects.create(
            submission=submission,
            from_status=submission.status,
            to_status=result.status,
            note=f"imported from {record.source} ({'new' if created else 're-import'})",
        )
        submission.status = result.status
        submission.status_changed = now
        submission.finished_at = now
        submission.report = {
            "outcome": result.status,
            "rule": "import" if result.status == "rejected" else "",
            "summary": f"Imported from {record.source}",
            "detail": "; ".join(result.reasons),
            "reasons": result.reasons,
        }
        if result.status == "published":
            submission.published_at = now
        submission.save()
    return submission, result
