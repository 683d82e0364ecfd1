"""What identifies a measurement: digests and signatures of every fio output of a bundle, by which
submissions.first_received finds the submission of another account, received earlier, that already holds them.

Two digests per fio output. "bytes" is the file's SHA-256 as the signed manifest lists it. "measurements" is the
SHA-256 of the statistics fio measured (per job: read/write/trim/sync sections, runtimes, CPU use, latency and depth
histograms) in canonical JSON, leaving out what names or places the run (job options, file names, host, device
names, timestamps, fio version). The public copy of a raw file is scrubbed and re-formatted, so its bytes differ
from the original; its measured statistics do not, and no two real runs ever produce the same ones.

A digest changes with any edit, so each fio output also gets measurement signatures (one per direction that did I/O):
the figures the dataset publishes from it, compared with a relative tolerance (NEAR_TOLERANCE, 1e-4) far below the
run-to-run variation of real drives. Two submissions are near-duplicates when at least NEAR_SHARE of either one's
signatures match one of the other's. Whoever's submission was received first (held, withdrawn and imported ones
included; one rejected without ever being published claims nothing) keeps the measurement: a later copy from another
account is rejected, and a copy published before this rule is withdrawn when the original is published.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import transaction

try:
    import orjson
except ImportError:  # the server has it; the standard library writes the same bytes, slower
    orjson = None

from nvmedb.bulk import insert_values
from nvmedb_client.fio_output import FioSummary, parse_fio_output, summarize
from submissions.fio_summaries import bundle_summary
from submissions.models import FioOutputFingerprint, MeasurementSignature, Submission

if TYPE_CHECKING:
    from nvmedb_client.bundle import VerifiedBundle

BYTES = "bytes"
MEASUREMENTS = "measurements"
SIGNATURE = "signature"  # a near-duplicate signature (MeasurementSignature), not a digest

# Two figures agree when they differ by at most this share of the larger. Consecutive rounds of one cell of the shared
# SSSPT runs differ by a median of 2.4-5.2 % in IOPS and 2.4-4.0 % in mean latency; the whole signature agrees within
# 1e-4 for 1 of 7,408 such pairs (a SATA drive's 1 MiB reads at the bus limit; within 1e-3, 24 do), hence NEAR_SHARE.
# See docs/methodology.md.
NEAR_TOLERANCE = 1e-4
# Two submissions are near-duplicates when this share of either one's signatures match one of the other's.
NEAR_SHARE = 0.5

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
    """A digest (kind BYTES or MEASUREMENTS) or a near-duplicate signature (kind SIGNATURE: no digest, `direction` and
    `values` its figures, the second of them its IOPS)."""

    kind: str
    digest: str
    path: str
    direction: str = ""
    values: tuple = field(default=(), compare=False)


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


# Where orjson's compact, key-sorted output could differ from the standard library's: any number written with an
# exponent (orjson writes 1e-7 as 1e-7, the standard library 1e-07), a value that starts 0.0000 (the standard library
# writes 1e-05, orjson 0.00001), DEL (escaped only by the standard library), or any non-ASCII character. Keys start
# with a quote, so fio's percentile keys ("10.000000") are no small value; a match inside a string only sends it down
# the slow path. Each search starts with a literal that is rare in a dump (a class, or a digit, tries nearly every
# byte, and costs more than the dump itself): a small value is found from its ".0000" and looked behind, and "E",
# which orjson never writes, is searched for only when the dump holds one (a byte search).
_EXPONENT = re.compile(rb"e[-+]?[0-9]")
_UPPER_EXPONENT = re.compile(rb"E[-+]?[0-9]")
_SMALL_VALUE = re.compile(rb"\.0000(?<=[:,\[-]0\.0000)")


def _spelled_as_the_standard_library(fast: bytes) -> bool:
    if not fast.isascii() or b"\x7f" in fast:
        return False
    if _EXPONENT.search(fast) is not None or (b"E" in fast and _UPPER_EXPONENT.search(fast) is not None):
        return False
    if fast.startswith((b"0.0000", b"-0.0000")):
        return False
    return _SMALL_VALUE.search(fast) is None


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


def signature_values(doc: dict, summary: FioSummary | None = None) -> list[tuple[str, tuple]]:
    """(direction, figures) for each direction of a parsed fio result that did I/O: runtime (s), IOPS, bandwidth
    (B/s), bytes, mean total and completion latency and the largest total latency (ns), as the dataset reads them
    (nvmedb_client.fio_output.summarize: the jobs summed, fio 2.x units converted). Formatting, key order, number
    spelling (12 or 12.0) and keys the dataset does not read change none of them. `summary`: summarize(doc), when
    it was already made."""
    try:
        summary = summary if summary is not None else summarize(doc)
    except Exception:  # noqa: BLE001 - best effort: the ingest judges the output and names what is wrong with it
        return []
    unified = summary.read_iops is None and summary.write_iops is None  # unified_rw_reporting: the mixed total only
    found = []
    for direction, figures_of in _MIXED_FIGURES if unified else _DIRECTION_FIGURES:
        values = figures_of(summary)
        iops, io_bytes = values[1], values[3]
        if not iops or iops <= 0 or not io_bytes:
            continue
        found.append((direction, tuple([None if v is None else float(v) for v in values])))
    return found


def _figures(iops: str, bw: str, io_bytes: str, latency_prefix: str) -> attrgetter:
    """The FioSummary fields of one direction's signature, in its order (signature_values)."""
    latencies = (f"{latency_prefix}{name}" for name in ("lat_mean_ns", "clat_mean_ns", "lat_max_ns"))
    return attrgetter("runtime_s", iops, bw, io_bytes, *latencies)


_DIRECTION_FIGURES = tuple(
    (direction, _figures(f"{direction}_iops", f"{direction}_bw_bytes_per_s", f"{direction}_bytes", f"{direction}_"))
    for direction in ("read", "write")
)
_MIXED_FIGURES = (("mixed", _figures("total_iops", "total_bw_bytes_per_s", "total_bytes", "")),)


# The figures a signature also stores in columns of their own, indexed after its direction (MeasurementSignature), and
# their places in its figures (signature_values): the two that tell real runs apart, as the others follow the IOPS
# (bandwidth, bytes, mean latencies) or the job's settings (runtime). See docs/methodology.md.
INDEXED_FIGURES = {"iops": 1, "max_latency_ns": 6}


def indexed_figures(values) -> tuple:
    """The INDEXED_FIGURES of a signature's figures, in order, None where it has none."""
    return tuple(values[place] if place < len(values) else None for place in INDEXED_FIGURES.values())


def agreeing_range(value: float) -> tuple[float, float]:
    """The values another signature's figure must lie between to agree with `value` within NEAR_TOLERANCE
    (figures_agree: the difference at most the tolerance times the larger magnitude), widened by a billionth for
    rounding."""
    low, high = sorted((value * (1 - NEAR_TOLERANCE), value / (1 - NEAR_TOLERANCE)))
    return low - abs(low) * 1e-9, high + abs(high) * 1e-9


def agreeing_bounds(indexed: tuple) -> tuple[tuple[float, float], ...]:
    """The ranges another signature's INDEXED_FIGURES must lie in to agree with these (indexed_figures), up to the
    first one missing: a missing figure agrees only with a missing one, so past it the candidates are not narrowed."""
    bounds = []
    for value in indexed:
        if value is None:
            break
        bounds.append(agreeing_range(value))
    return tuple(bounds)


def figures_agree(a, b) -> bool:
    """Whether two signatures' figures agree within NEAR_TOLERANCE, each relative to the larger of the pair."""
    if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)) or len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            if x is not y:
                return False
        elif abs(x - y) > NEAR_TOLERANCE * max(abs(x), abs(y)):
            return False
    return True


def _signatures(doc: dict, path: str, summary: FioSummary | None = None) -> list[Fingerprint]:
    return [
        Fingerprint(SIGNATURE, "", path, direction=direction, values=values)
        for direction, values in signature_values(doc, summary)
    ]


def bundle_fingerprints(bundle: VerifiedBundle) -> list[Fingerprint]:
    """Digests and signatures of every fio output the manifest's runs name (each output once)."""
    hashes = {entry["path"]: entry["sha256"] for entry in bundle.manifest.get("files", [])}
    outputs = dict.fromkeys(run.get("output_file") for run in bundle.manifest.get("runs", []) if isinstance(run, dict))
    found: list[Fingerprint] = []
    for path in outputs:
        if not isinstance(path, str) or path not in hashes:
            continue
        try:
            doc = bundle.fio_output(path)  # parsed once: the ingest reads the same result
        except OSError:
            continue
        except Exception:  # noqa: BLE001 - best effort: the ingest judges the output and names what is wrong with it
            doc = None
        digest = result_digest(doc) if doc is not None else None
        if digest is None:
            continue  # not a fio result: its bytes identify nobody either (an error message is the same for all)
        found.append(Fingerprint(BYTES, hashes[path], path))
        found.append(Fingerprint(MEASUREMENTS, digest, path))
        try:
            summary = bundle_summary(bundle, path)  # made once: the ingest reads the same figures
        except Exception:  # noqa: BLE001 - as signature_values: the ingest names what is wrong with the output
            summary = None
        found.extend(_signatures(doc, path, summary) if summary is not None else [])
    return found


def file_fingerprints(root: Path, files: Iterable[Path]) -> list[Fingerprint]:
    """Digests and signatures of the fio results among `files` (results imported from other tools, which have no
    manifest)."""
    found: list[Fingerprint] = []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        try:
            doc = parse_fio_output(data)
        except Exception:  # noqa: BLE001, S112 - best effort, as measurement_digest
            continue
        digest = result_digest(doc)
        if digest is not None:
            relative = str(path.relative_to(root))
            found.append(Fingerprint(BYTES, hashlib.sha256(data).hexdigest(), relative))
            found.append(Fingerprint(MEASUREMENTS, digest, relative))
            found.extend(_signatures(doc, relative))
    return found


def record_fingerprints(*, submission: Submission, fingerprints: list[Fingerprint]) -> None:
    """Stores the digests and signatures of `submission` in place of any it had (running twice stores the same
    rows), each kind in one COPY on PostgreSQL (nvmedb.bulk). Of two fio outputs with one digest, the first keeps it,
    as each row is stored once per submission (its unique constraints)."""
    digests: dict[tuple, Fingerprint] = {}
    signatures: dict[tuple, Fingerprint] = {}
    for f in fingerprints:
        if f.kind == SIGNATURE:
            signatures.setdefault((f.path[:1024], f.direction), f)
        else:
            digests.setdefault((f.kind, f.digest), f)
    submission_id = submission.pk
    with transaction.atomic():
        FioOutputFingerprint.objects.filter(submission_id=submission_id).delete()
        MeasurementSignature.objects.filter(submission_id=submission_id).delete()
        insert_values(
            FioOutputFingerprint,
            ("submission_id", "kind", "digest", "path"),
            [(submission_id, f.kind, f.digest, f.path[:1024]) for f in digests.values()],
        )
        insert_values(
            MeasurementSignature,
            ("submission_id", "path", "direction", *INDEXED_FIGURES, "values"),
            [
                (submission_id, path, direction, *indexed_figures(f.values), list(f.values))
                for (path, direction), f in signatures.items()
            ],
        )
