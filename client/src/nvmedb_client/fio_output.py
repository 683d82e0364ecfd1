"""Read fio's JSON output robustly and reduce it to the figures the PTS needs, in SI units.

fio's captured output is often not one clean JSON document: warnings or error lines come before it,
`--status-interval` prints several complete documents one after another, `--output-format=normal,json` wraps it in
text, and client/server mode reports `client_stats` instead of `jobs`. fio 2.x reports latencies in µs under
`slat`/`clat`/`lat`; fio 3.x in ns under `slat_ns`/`clat_ns`/`lat_ns`. Bandwidth is always KiB/s (`bw`), with
`bw_bytes` since 3.2.

Latency means the PTS response time: fio's total latency (`lat`, submission + completion), as every other PTS tool
reports it. Completion (`clat`) and submission (`slat`) latency are kept beside it under their own names.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from nvmedb_client import jsonload

MAX_OUTPUT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 32
MAX_VALUE = 2**63
_KIB = 1024
_US_TO_NS = 1000
_DIRECTIONS = ("read", "write")
_DOCUMENT_START = re.compile(r"^[ \t]*\{", re.MULTILINE)


class FioOutputError(ValueError):
    """fio's output holds no usable result; the message says why in plain words."""


@dataclass(frozen=True)
class FioSummary:
    """All jobs of one fio document aggregated, in SI units; None means this fio output did not report it.

    Jobs are summed as concurrent workers (their IOPS and bandwidth add up), which is what the client's own runs are.
    With `unified_rw_reporting=1` fio reports only the mixed total: read/write figures are then None.
    `lat_*` and `percentiles_ns` are total latency (slat + clat, fio's `lat_ns`); `clat_*` and `slat_*` are its two
    parts. Means are weighted by I/O count; percentiles come from fio's own percentile map for a single job, or are
    recomputed from merged json+ bins when several jobs report bins. Total-latency percentiles exist only when the job
    asked for them (`lat_percentiles=1`); without it `percentiles_ns` is empty, never filled with clat figures.
    """

    fio_version: str | None
    jobs: int
    runtime_s: float
    read_iops: float | None
    write_iops: float | None
    total_iops: float
    read_bw_bytes_per_s: float | None
    write_bw_bytes_per_s: float | None
    read_bytes: int | None
    write_bytes: int | None
    read_lat_mean_ns: float | None
    write_lat_mean_ns: float | None
    lat_mean_ns: float | None
    read_lat_max_ns: float | None
    write_lat_max_ns: float | None
    lat_max_ns: float | None
    percentiles_ns: dict = field(default_factory=dict)
    total_bw_bytes_per_s: float = 0.0
    total_bytes: int = 0
    clat_mean_ns: float | None = None
    read_clat_mean_ns: float | None = None
    write_clat_mean_ns: float | None = None
    clat_max_ns: float | None = None
    clat_percentiles_ns: dict = field(default_factory=dict)
    slat_mean_ns: float | None = None
    read_slat_mean_ns: float | None = None
    write_slat_mean_ns: float | None = None
    slat_max_ns: float | None = None

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def parse_fio_output(
    text: str | bytes, *, max_bytes: int = MAX_OUTPUT_BYTES, max_depth: int = MAX_DEPTH, load: Callable | None = None
) -> dict:
    """The final complete fio JSON document in `text`, however much else surrounds it. Every document must be strict
    JSON (no NaN or Infinity, no number beyond a double) nested at most `max_depth` deep (nvmedb_client.jsonload).
    `load`: what orjson.loads of the whole text gives (raising as it raises), from where the caller keeps it (a
    bundle parses each file's JSON once for every reader: VerifiedBundle.json_document)."""
    size = len(text)
    if size > max_bytes:
        raise FioOutputError(f"fio output is {size} bytes, more than the {max_bytes}-byte limit")
    raw = text if isinstance(text, bytes) else text.encode("utf-8", errors="surrogatepass")
    if not jsonload.within_depth(raw, max_depth):
        raise FioOutputError(f"fio output is nested deeper than {max_depth} levels")
    clean = _one_clean_result(raw, load)
    if clean is not None:
        return clean
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not text.strip():
        raise FioOutputError("fio output is empty: fio wrote no result")
    if jsonload.has_lone_surrogate(text):
        raise FioOutputError("fio output is not strict JSON: a string holds a lone UTF-16 surrogate escape")

    documents = _json_documents(text, max_depth=max_depth)
    results = [doc for doc in documents if isinstance(doc, dict) and ("jobs" in doc or "client_stats" in doc)]
    if not results:
        first_line = text.strip().splitlines()[0][:200]
        raise FioOutputError(f"fio output contains no JSON result; it starts with: {first_line!r}")
    return results[-1]


def _one_clean_result(raw: bytes, load: Callable | None = None) -> dict | None:
    """The usual case, at the parser's own speed: the whole output is one strict UTF-8 JSON fio result. orjson
    refuses what the slower path below would refuse (NaN, a number beyond a double, a lone surrogate escape, bytes
    that are not UTF-8), so None sends anything else there, to be read or refused with its reason. The depth was
    bounded by the caller."""
    if jsonload.orjson is None or raw.lstrip()[:1] != b"{":
        return None
    try:
        doc = (load or jsonload.orjson.loads)(raw)
    except jsonload.orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) and ("jobs" in doc or "client_stats" in doc) else None


def _json_documents(text: str, *, max_depth: int) -> list:
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            return [jsonload.loads(stripped, what="fio output", max_bytes=len(stripped) * 4 + 1, max_depth=max_depth)]
        except jsonload.JsonError:
            pass  # not one clean document: scan for the documents inside it (the scan says what is not strict)
    decoder = jsonload.strict_decoder()
    documents = []
    position = 0
    while True:
        match = _DOCUMENT_START.search(text, position)
        if match is None:
            return documents
        start = match.end() - 1
        try:
            document, end = decoder.raw_decode(text, start)
        except jsonload.JsonError as exc:
            raise FioOutputError(f"fio output {exc.problem}") from None
        except RecursionError as exc:
            raise FioOutputError(f"fio output is nested deeper than {max_depth} levels") from exc
        except ValueError:
            position = start + 1
            continue
        documents.append(document)
        position = end


def summarize(doc: dict) -> FioSummary:
    """Aggregate every job of a parsed fio document (see FioSummary); FioOutputError when it holds no measurement."""
    if not isinstance(doc, dict):
        raise FioOutputError("fio output is not a JSON object")
    try:
        summary = _summarize(doc)
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        if isinstance(exc, FioOutputError):
            raise
        raise FioOutputError(f"fio output has an unexpected shape ({type(exc).__name__}: {exc})") from exc
    _check_bounds(summary)
    return summary


def _check_bounds(summary: FioSummary) -> None:
    """Every figure must be a finite number a 64-bit column can hold: a larger one is no measurement (2**63 bytes is
    8 EiB; 2**63 ns is 292 years), and the sums and squares of steady-state math stay finite below it. The usual
    case, a plain finite number inside the bounds, is checked inline without naming it (a call per figure was a
    fifth of summarize); None, text and tables are no figure."""
    for name, value in zip(_SUMMARY_FIELDS, _summary_values(summary), strict=True):
        if value is not None and (type(value) not in _PLAIN or not -MAX_VALUE < value < MAX_VALUE):
            _check_bound(name, value)
    tables = {"percentile": summary.percentiles_ns, "completion percentile": summary.clat_percentiles_ns}
    for kind, by_direction in tables.items():
        for direction, table in by_direction.items():
            for key, value in table.items():
                if type(value) not in _PLAIN or not -MAX_VALUE < value < MAX_VALUE:
                    _check_bound(f"{kind} {key} of {direction}", value)


_PLAIN = (int, float)  # exactly these: a bool is no figure
_SUMMARY_FIELDS = tuple(FioSummary.__dataclass_fields__)
_summary_values = operator.attrgetter(*_SUMMARY_FIELDS)


def _check_bound(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise FioOutputError(f"fio output gives a non-finite {name} ({value})")
    if abs(value) >= MAX_VALUE:  # compared as an int when it is one: a huge int has no float form
        shown = f"{value:.3g}" if isinstance(value, float) else f"a {len(str(abs(value)))}-digit number"
        raise FioOutputError(f"fio output gives {name} = {shown}, beyond the limit of ±2**63")


def _summarize(doc: dict) -> FioSummary:
    version = doc.get("fio version")
    if version is not None and not isinstance(version, str):
        raise FioOutputError("fio output has a non-text 'fio version'")
    entries = _job_entries(doc)
    failed = [entry for entry in entries if entry.get("error")]
    if failed:
        names = ", ".join(f"{entry.get('jobname', '?')!r} (error {entry.get('error')})" for entry in failed)
        raise FioOutputError(f"fio reported a failed job: {names}; its figures are not a measurement")

    io_bytes_in_kib = _io_bytes_in_kib(version)
    unified = not any(direction in entry for entry in entries for direction in _DIRECTIONS)
    directions = ("mixed",) if unified else _DIRECTIONS
    stats = {d: _direction_stats(entries, d, io_bytes_in_kib) for d in directions}

    runtimes = [_entry_runtime_ms(entry) for entry in entries]
    total_iops = sum(s.iops for s in stats.values())
    total_bw = sum(s.bw for s in stats.values())
    total_bytes = sum(s.io_bytes for s in stats.values())
    lat_mean, lat_max = _combine_latency(s.latency["lat"] for s in stats.values())
    clat_mean, clat_max = _combine_latency(s.latency["clat"] for s in stats.values())
    slat_mean, slat_max = _combine_latency(s.latency["slat"] for s in stats.values())
    read = stats.get("read")
    write = stats.get("write")
    return FioSummary(
        fio_version=version,
        jobs=len(entries),
        runtime_s=max(runtimes) / 1000,
        read_iops=read.iops if read else None,
        write_iops=write.iops if write else None,
        total_iops=total_iops,
        read_bw_bytes_per_s=read.bw if read else None,
        write_bw_bytes_per_s=write.bw if write else None,
        read_bytes=read.io_bytes if read else None,
        write_bytes=write.io_bytes if write else None,
        read_lat_mean_ns=read.latency["lat"].mean if read else None,
        write_lat_mean_ns=write.latency["lat"].mean if write else None,
        lat_mean_ns=lat_mean,
        read_lat_max_ns=read.latency["lat"].max if read else None,
        write_lat_max_ns=write.latency["lat"].max if write else None,
        lat_max_ns=lat_max,
        percentiles_ns=_percentile_maps(stats, "lat"),
        total_bw_bytes_per_s=total_bw,
        total_bytes=total_bytes,
        clat_mean_ns=clat_mean,
        read_clat_mean_ns=read.latency["clat"].mean if read else None,
        write_clat_mean_ns=write.latency["clat"].mean if write else None,
        clat_max_ns=clat_max,
        clat_percentiles_ns=_percentile_maps(stats, "clat"),
        slat_mean_ns=slat_mean,
        read_slat_mean_ns=read.latency["slat"].mean if read else None,
        write_slat_mean_ns=write.latency["slat"].mean if write else None,
        slat_max_ns=slat_max,
    )


def _percentile_maps(stats: dict, kind: str) -> dict:
    return {d: s.latency[kind].percentiles for d, s in stats.items() if s.latency[kind].percentiles}


def _job_entries(doc: dict) -> list[dict]:
    if "jobs" in doc:
        entries = doc["jobs"]
    else:
        entries = doc.get("client_stats")
        if isinstance(entries, list):
            # with several servers fio adds an "All clients" entry that already sums the others
            combined = [entry for entry in entries if isinstance(entry, dict) and entry.get("jobname") == "All clients"]
            entries = combined or entries
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise FioOutputError("fio output has no job results (empty or malformed 'jobs' list)")
    return entries


def _io_bytes_in_kib(version: str | None) -> bool:
    """fio before 2.21 reported io_bytes in KiB (and had no io_kbytes key)."""
    match = re.match(r"fio-(\d+)\.(\d+)", version or "")
    return bool(match) and (int(match.group(1)), int(match.group(2))) < (2, 21)


def _entry_runtime_ms(entry: dict) -> float:
    """Wall-clock runtime of one entry. With group_reporting fio sums `job_runtime` over the group's threads, while
    each direction's `runtime` is the longest thread's, so the direction figures come first."""
    directions = [entry[d].get("runtime") for d in ("read", "write", "mixed", "trim") if isinstance(entry.get(d), dict)]
    wall = max((c for c in directions if isinstance(c, (int, float))), default=0)
    if wall > 0:
        return float(wall)
    job_runtime = entry.get("job_runtime")
    return float(job_runtime) if isinstance(job_runtime, (int, float)) else 0.0


# Each latency kind under its fio 3.x (ns) and fio 2.x (µs) key.
_LATENCY_KEYS = {"lat": ("lat_ns", "lat"), "clat": ("clat_ns", "clat"), "slat": ("slat_ns", "slat")}


@dataclass
class _Latency:
    ios: float = 0
    mean: float | None = None
    max: float | None = None
    percentiles: dict = field(default_factory=dict)


@dataclass
class _DirectionStats:
    iops: float = 0.0
    bw: float = 0.0
    io_bytes: int = 0
    latency: dict = field(default_factory=dict)  # "lat" | "clat" | "slat" -> _Latency


def _direction_stats(entries: list[dict], direction: str, io_bytes_in_kib: bool) -> _DirectionStats:
    stats = _DirectionStats()
    present = [entry[direction] for entry in entries if isinstance(entry.get(direction), dict)]
    for data in present:
        stats.iops += float(data.get("iops", 0))
        stats.bw += float(data["bw_bytes"]) if "bw_bytes" in data else float(data.get("bw", 0)) * _KIB
        if "io_kbytes" in data or not io_bytes_in_kib:
            stats.io_bytes += int(data.get("io_bytes", 0))
        else:
            stats.io_bytes += int(data.get("io_bytes", 0)) * _KIB
    stats.latency = {kind: _latency(present, kind) for kind in _LATENCY_KEYS}
    return stats


def _latency(present: list[dict], kind: str) -> _Latency:
    result = _Latency()
    weighted = 0.0
    weight = 0
    maxima = []
    sources = []
    for data in present:
        lat, scale = _latency_object(data, kind)
        ios = _io_count(data, lat)
        result.ios += ios
        if lat is None or ios == 0 or lat.get("N") == 0:  # N 0: fio took no sample (slat of a sync engine)
            continue
        weighted += float(lat.get("mean", 0)) * scale * ios
        weight += ios
        if "max" in lat:
            maxima.append(float(lat["max"]) * scale)
        sources.append((lat, scale))
    if weight:
        result.mean = weighted / weight
    if maxima:
        result.max = max(maxima)
    result.percentiles = _percentiles(sources)
    return result


def _io_count(data: dict, lat: dict | None) -> float:
    """How many I/Os the latency mean covers: used only to weight means across jobs and directions."""
    for count in (data.get("total_ios"), (lat or {}).get("N")):
        if isinstance(count, (int, float)):
            return count
    # fio 2.1 reports neither count; IOPS x runtime is the same figure within rounding
    return float(data.get("iops", 0)) * float(data.get("runtime", 0)) / 1000


def _latency_object(data: dict, kind: str) -> tuple[dict | None, int]:
    ns_key, us_key = _LATENCY_KEYS[kind]
    if isinstance(data.get(ns_key), dict):
        return data[ns_key], 1
    if isinstance(data.get(us_key), dict):
        return data[us_key], _US_TO_NS
    return None, 1


def _percentiles(sources: list[tuple[dict, int]]) -> dict:
    if len(sources) == 1:
        lat, scale = sources[0]
        found = {}
        for key, value in (lat.get("percentile") or {}).items():
            name, asked = _percentile_entry(key)
            if asked:  # fio 2.x pads the map with "0.00": 0 entries nobody asked for
                found[name] = float(value) * scale
        return found
    if sources and all(isinstance(lat.get("bins"), dict) and lat.get("percentile") for lat, _ in sources):
        requested = sorted({float(key) for lat, _ in sources for key in lat["percentile"] if float(key) > 0})
        merged: dict[int, int] = {}
        for lat, scale in sources:
            for value, count in lat["bins"].items():
                merged[int(value) * scale] = merged.get(int(value) * scale, 0) + int(count)
        return percentiles_from_bins(merged, requested)
    return {}  # several jobs without json+ bins: percentiles cannot be combined honestly


def percentiles_from_bins(bins: dict[int, int], requested: Iterable[float]) -> dict[str, float]:
    """fio's own rule: the p-th percentile is the first bin at which the running count reaches p% of all I/Os."""
    total = sum(bins.values())
    result: dict[str, float] = {}
    if total == 0:
        return result
    pending = sorted(requested)
    running = 0
    for value in sorted(bins):
        running += bins[value]
        while pending and running >= pending[0] / 100.0 * total:
            result[_percentile_key(pending.pop(0))] = float(value)
        if not pending:
            break
    return result


def _percentile_key(key) -> str:
    return f"{float(key):f}"


# fio's percentile keys as written ("99.990000") → (the key as a summary spells it, whether it is above 0): the same
# twenty or so recur in every latency table of every output, each read once. Bounded, as outputs are untrusted.
_PERCENTILE_ENTRIES: dict[str, tuple[str, bool]] = {}


def _percentile_entry(key) -> tuple[str, bool]:
    """(_percentile_key(key), float(key) > 0), remembered per key; raises ValueError for a key that is no number."""
    entry = _PERCENTILE_ENTRIES.get(key) if type(key) is str else None
    if entry is None:
        number = float(key)
        entry = (_percentile_key(number), number > 0)
        if type(key) is str and len(_PERCENTILE_ENTRIES) < 1024:
            _PERCENTILE_ENTRIES[key] = entry
    return entry


def _combine_latency(latencies: Iterable[_Latency]) -> tuple[float | None, float | None]:
    measured = [lat for lat in latencies if lat.mean is not None and lat.ios]
    if not measured:
        return None, None
    mean = sum(lat.mean * lat.ios for lat in measured) / sum(lat.ios for lat in measured)
    maxima = [lat.max for lat in measured if lat.max is not None]
    return mean, max(maxima) if maxima else None
