"""Who published a measurement first: digests of every fio output of a bundle, and the published submission of
another account that already holds one of them.

Two digests per fio output. "bytes" is the file's SHA-256 as the signed manifest lists it. "measurements" is the
SHA-256 of the statistics fio measured (per job: read/write/trim/sync sections, runtimes, CPU use, latency and depth
histograms) in canonical JSON, leaving out what names or places the run (job options, file names, host, device
names, timestamps, fio version). The public copy of a raw file is scrubbed and re-formatted, so its bytes differ
from the original; its measured statistics do not, and no two real runs ever produce the same ones.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from django.db.models import QuerySet

try:
    import orjson
except ImportError:  # the server has it; the standard library writes the same bytes, slower
    orjson = None

from nvmedb_client.fio_output import parse_fio_output
from submissions.models import FioOutputFingerprint, Submission

if TYPE_CHECKING:
    from nvmedb_client.bundle import VerifiedBundle

BYTES = "bytes"
MEASUREMENTS = "measurements"

# Keys of one fio job entry that hold what was measured; everything else describes or names the run.
MEASURED_KEYS = (
    "read",
    "write",
    "trim",
    "sync",
    "job_runtime",
    "usr_cpu",
    "sys_cpu",
    "ctx",
    "majf",
    "minf",
    "iodepth_level",
    "iodepth_submit",
    "iodepth_complete",
    "latency_ns",
    "latency_us",
    "latency_ms",
)
DIRECTIONS = ("read", "write", "trim")


@dataclass(frozen=True)
class Fingerprint:
    kind: str
    digest: str
    path: str


def measurement_digest(data: bytes) -> str | None:
    """The digest of what fio measured in `data`; None when it is no fio result or records no I/O at all (a run
    that failed at once looks the same for everyone, so it identifies nobody)."""
    try:
        doc = parse_fio_output(data)
    except Exception:  # noqa: BLE001 - best effort: the ingest judges the output and names what is wrong with it
        return None
    return result_digest(doc)


def result_digest(doc: dict) -> str | None:
    """measurement_digest of an already parsed fio result."""
    entries = doc.get("jobs") if isinstance(doc.get("jobs"), list) else doc.get("client_stats")
    if not isinstance(entries, list):
        return None
    measured = [{k: e[k] for k in MEASURED_KEYS if k in e} for e in entries if isinstance(e, dict)]
    if not any(_did_io(entry) for entry in measured):
        return None
    canonical = canonical_json(measured)
    return hashlib.sha256(canonical).hexdigest() if canonical is not None else None


# Where orjson's compact, key-sorted output could differ from the standard library's: a number the standard library
# writes with an exponent (orjson writes 1e-05 as 0.00001 and 1e+16 as 1e16: a value that starts 0.0000, or any
# exponent), DEL (escaped only by the standard library), or any non-ASCII character. Keys start with a quote, so
# fio's percentile keys ("10.000000") are no small value; a match inside a string only sends it down the slow path.
# Each test is a C-speed substring search (a regular expression over every byte costs more than the dump itself).
_ALL_DIGITS_ZERO = bytes.maketrans(b"0123456789", b"0000000000")
_SMALL_VALUES = tuple(start + sign + b"0.0000" for start in (b":", b",", b"[") for sign in (b"", b"-"))


def _spelled_as_the_standard_library(fast: bytes) -> bool:
    if not fast.isascii() or b"\x7f" in fast:
        return False
    digits = fast.translate(_ALL_DIGITS_ZERO)
    if b"0e" in digits or b"0E" in digits:
        return False
    if fast.startswith((b"0.0000", b"-0.0000")):
        return False
    return not any(small in fast for small in _SMALL_VALUES)


def canonical_json(value) -> bytes | None:
    """The bytes the digests are taken of: `json.dumps(value, sort_keys=True, separators=(",", ":"),
    ensure_ascii=True)`, UTF-8. Stored digests were taken of exactly these bytes, so they must never change; orjson
    writes the same bytes ~10 times faster for the usual fio result, and is used only where it provably does
    (submissions/tests/test_content_digest.py holds the two to the same bytes). None when it is not JSON."""
    if orjson is not None:
        try:
            fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError):
            fast = None  # an integer beyond 64 bits, say: the standard library decides
        if fast is not None and _spelled_as_the_standard_library(fast):
            return fast
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    except (TypeError, ValueError, RecursionError):
        return None


def _did_io(entry: dict) -> bool:
    for direction in DIRECTIONS:
        stats = entry.get(direction)
        if not isinstance(stats, dict):
            continue
        for key in ("io_bytes", "io_kbytes", "total_ios"):
            value = stats.get(key)
            if isinstance(value, (int, float)) and value > 0:
                return True
    return False


def bundle_fingerprints(bundle: VerifiedBundle) -> list[Fingerprint]:
    """Digests of every fio output the manifest's runs name (each output once)."""
    hashes = {entry["path"]: entry["sha256"] for entry in bundle.manifest.get("files", [])}
    outputs = dict.fromkeys(run.get("output_file") for run in bundle.manifest.get("runs", []) if isinstance(run, dict))
    found: list[Fingerprint] = []
    for path in outputs:
        if not isinstance(path, str) or path not in hashes:
            continue
        try:
            doc = bundle.parsed(path, parse_fio_output)  # parsed once: the ingest reads the same result
        except OSError:
            continue
        except Exception:  # noqa: BLE001 - best effort: the ingest judges the output and names what is wrong with it
            doc = None
        digest = result_digest(doc) if doc is not None else None
        if digest is None:
            continue  # not a fio result: its bytes identify nobody either (an error message is the same for all)
        found.append(Fingerprint(BYTES, hashes[path], path))
        found.append(Fingerprint(MEASUREMENTS, digest, path))
    return found


def file_fingerprints(root: Path, files: Iterable[Path]) -> list[Fingerprint]:
    """Digests of the fio results among `files` (results imported from other tools, which have no manifest)."""
    found: list[Fingerprint] = []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        digest = measurement_digest(data)
        if digest is not None:
            relative = str(path.relative_to(root))
            found.append(Fingerprint(BYTES, hashlib.sha256(data).hexdigest(), relative))
            found.append(Fingerprint(MEASUREMENTS, digest, relative))
    return found


def record_fingerprints(*, submission: Submission, fingerprints: list[Fingerprint]) -> None:
    """Stores the digests of `submission` (again: running twice adds nothing)."""
    FioOutputFingerprint.objects.bulk_create(
        [
            FioOutputFingerprint(submission=submission, kind=f.kind, digest=f.digest, path=f.path[:1024])
            for f in fingerprints
        ],
        ignore_conflicts=True,
    )


@dataclass(frozen=True)
class Conflict:
    submission_id: object
    paths: list[str]

    def sentence(self) -> str:
        shown = ", ".join(self.paths[:3]) + (f" and {len(self.paths) - 3} more" if len(self.paths) > 3 else "")
        return (
            f"These fio outputs were first published by another contributor in submission {self.submission_id} "
            f"({shown}); a measurement is published once, under the account that ran it."
        )


def _published_elsewhere(submission: Submission) -> QuerySet[FioOutputFingerprint]:
    """Rows of other accounts' submissions that were published at some point (a later withdrawal or moderation does
    not hand the measurement to someone else) sharing a digest with `submission`."""
    own = FioOutputFingerprint.objects.filter(submission=submission)
    return (
        FioOutputFingerprint.objects.filter(
            digest__in=own.values("digest"),
            submission__published_at__isnull=False,
        )
        .exclude(submission__uploader_id=submission.uploader_id)
        .select_related("submission")
    )


def lock_fingerprints(submission: Submission) -> None:
    """Locks every fingerprint row sharing a digest with `submission`, in id order, until the transaction ends: two
    accounts' copies of one measurement are then judged one after the other, and only the first publishes."""
    own = FioOutputFingerprint.objects.filter(submission=submission).values("digest")
    list(FioOutputFingerprint.objects.select_for_update().filter(digest__in=own).order_by("id").values_list("id"))


def first_publisher_conflict(submission: Submission) -> Conflict | None:
    """The earliest-published submission of another account holding one of `submission`'s fio outputs, if any."""
    rows = list(_published_elsewhere(submission).order_by("submission__published_at", "submission_id"))
    if not rows:
        return None
    first = rows[0].submission_id
    digests = {row.digest for row in rows if row.submission_id == first}
    paths = (
        FioOutputFingerprint.objects.filter(submission=submission, digest__in=digests)
        .order_by("path")
        .values_list("path", flat=True)
        .distinct()
    )
    return Conflict(submission_id=first, paths=list(paths))
