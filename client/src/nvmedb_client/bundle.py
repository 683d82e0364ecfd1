"""Write and verify nvmedb result bundles (docs/bundle-format.md).

Verification treats the bundle as hostile: the archive is read once, as a stream, never with `extractall`; every
member's name and type is checked before a byte of it is kept; each member is hashed as it is read; sizes, counts and
the compression ratio are enforced while decompressing, so a bomb is stopped before it fills memory or the disk.
`verify_bundle_stream` keeps the files in memory (up to `BundleLimits.max_memory_bytes`, the rest in a private
temporary directory under numbered names) and reads from any binary file object, such as a file opened from Django's
storage, local or remote; `verify_bundle` extracts a bundle file on disk into a directory.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

import fastjsonschema
import jsonschema
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nvmedb_client import jsonload, signing, system_files
from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize
from nvmedb_client.tracking import TESTS_WITH_STEADY_STATE, evaluate_runs

FORMAT_VERSION = 2
# format 1 (no `system` declarations) is still read; writers write FORMAT_VERSION
READ_VERSIONS = (1, 2)
MANIFEST_NAME = "manifest.json"
SIGNATURE_NAME = "manifest.sig.json"
FILES_DIR = "files"
BUNDLE_SUFFIX = ".nvmedb.tar.gz"
MAX_SIGNATURE_BYTES = 64 * 1024
MAX_MANIFEST_DEPTH = 64
MAX_PATH_LENGTH = 1024
MAX_NAME_BYTES = 255
_GIB = 1024**3
_MIB = 1024**2
_CHUNK = 1024 * 1024
_CONTROL = re.compile("[\x00-\x1f\x7f]")


class BundleError(Exception):
    """A bundle breaks a rule. `code` names the rule (stable, for machines); `message` says it in plain English."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class BundleLimits:
    max_total_bytes: int = 2 * _GIB
    max_file_bytes: int = 256 * _MIB
    max_files: int = 20000
    max_compression_ratio: float = 200
    max_manifest_bytes: int = 16 * _MIB
    # verify_bundle_stream holds up to this many bytes of files in memory; the rest go to a temporary directory
    max_memory_bytes: int = 128 * _MIB
    # tiny bundles compress far better than large ones (tar padding is all zeros); judge the ratio only beyond this
    ratio_check_after_bytes: int = 1 * _MIB


@dataclass
class VerifiedBundle:
    """A bundle whose signature, manifest and every file's size and SHA-256 were checked. Its files are read by
    manifest path; `close()` (or a `with` block) frees what `verify_bundle_stream` holds."""

    manifest: dict
    public_key: bytes
    fingerprint: str
    root: Path | None  # the extraction directory of verify_bundle; None when the files are held (verify_bundle_stream)
    manifest_bytes: bytes = field(default=b"", repr=False)
    files: _ExtractedFiles | _HeldFiles | None = field(default=None, repr=False)
    _listed: frozenset[str] | None = field(default=None, repr=False)
    _parsed: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.files is None and self.root is not None:
            self.files = _ExtractedFiles(Path(self.root))

    @property
    def listed(self) -> frozenset[str]:
        """The paths the manifest lists (relative to files/)."""
        if self._listed is None:
            self._listed = frozenset(entry["path"] for entry in self.manifest["files"])
        return self._listed

    def read_bytes(self, path: str) -> bytes:
        """The bytes of a file the manifest lists (path relative to files/)."""
        if path not in self.listed:
            raise KeyError(f"{path!r} is not listed in the bundle manifest")
        return self.files.read_bytes(path)

    def parsed(self, path: str, parse: Callable[[bytes], Any]) -> Any:
        """`parse` of a listed file's bytes, computed once per bundle and parser: the server's content fingerprints
        and its ingest both read every fio output. Callers must not change what it returns."""
        key = (path, parse)
        if key not in self._parsed:
            self._parsed[key] = parse(self.read_bytes(path))
        return self._parsed[key]

    def open(self, path: str) -> BinaryIO:
        """A binary stream of a file the manifest lists, for files too large to read at once."""
        if path not in self.listed:
            raise KeyError(f"{path!r} is not listed in the bundle manifest")
        return self.files.open(path)

    def close(self) -> None:
        self._parsed = {}
        if self.files is not None:
            self.files.close()

    def __enter__(self) -> VerifiedBundle:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


@lru_cache(maxsize=1)
def manifest_schema() -> dict:
    text = resources.files("nvmedb_client").joinpath("schemas/manifest.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def manifest_errors(manifest: object) -> list[str]:
    """Every JSON Schema violation of `manifest`, as "<json path>: <problem>" sentences (empty when valid)."""
    full, fast = _schema_validators()
    try:
        fast(manifest)
    except fastjsonschema.JsonSchemaException:
        pass  # the full validator below lists every violation, with its path
    else:
        return []
    errors = sorted(full.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    return [f"{e.json_path}: {e.message}" for e in errors]


@lru_cache(maxsize=1)
def _schema_validators():
    """jsonschema lists every error but takes ~1 s on a full PTS manifest; fastjsonschema compiles the same schema to
    code that accepts or rejects it in milliseconds. The schema uses only keywords whose meaning draft 7 and draft
    2020-12 share, so the compiled check is run as draft 7 (the newest fastjsonschema knows); tests hold the two to
    the same verdicts."""
    schema = manifest_schema()
    fast = fastjsonschema.compile({**schema, "$schema": "http://json-schema.org/draft-07/schema#"})
    return jsonschema.Draft202012Validator(schema), fast


def encode_manifest(manifest: dict) -> bytes:
    """The canonical bytes of a manifest: sorted keys, two-space indent, UTF-8, trailing newline."""
    return (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


# --- writing -----------------------------------------------------------------------------------------------------


def write_bundle(
    *,
    run_dir: Path,
    manifest: dict,
    signing_key: Ed25519PrivateKey,
    out_path: Path,
    files: Iterable[str] | None = None,
) -> Path:
    """Write a signed bundle of the files in `run_dir` to `out_path`, atomically; returns `out_path`.

    This is the reference writer, usable by any tool (docs/bundle-format.md has an example). `run_dir` holds the
    bundle's files as they go under `files/` (e.g. `fio/iops-r01-rw000-bs4096.json`, `system/id-ctrl.json`);
    `files` names the ones to pack (paths relative to `run_dir`), every regular file under it when None.
    `manifest` is everything but "files", which this computes (size and SHA-256 of each file, sorted by path);
    it must match the schema and, in format 2, declare every file under `system/` with its kind.
    `signing_key` is an Ed25519 private key (`nvmedb_client.signing.load_signing_key` reads a PEM file).
    Raises BundleError (`code` and a sentence) when the manifest or a file would make a bundle readers refuse.
    """
    run_dir = Path(run_dir)
    if files is None:
        files = [
            path.relative_to(run_dir).as_posix()
            for path in run_dir.rglob("*")
            if path.is_file() and not path.is_symlink()
        ]
    paths = sorted(set(files))
    for path in paths:
        _check_relative_path(path)
        source = run_dir / path
        if source.is_symlink() or not source.is_file():
            raise BundleError("missing_file", f"{path} is not a regular file in {run_dir}")
    entries = [_describe_file(run_dir / path, path) for path in paths]
    complete = {**manifest, "files": entries}
    problems = manifest_errors(complete)
    if problems:
        raise BundleError("bad_manifest", "the manifest does not match the schema: " + "; ".join(problems[:5]))
    problems = _version_problems(complete)
    if problems:
        raise BundleError("bad_manifest", "; ".join(problems[:5]))
    manifest_bytes = encode_manifest(complete)
    public_key = signing.public_key_bytes(signing_key)
    signature_bytes = json.dumps(
        {
            "algorithm": "ed25519",
            "public_key": base64.b64encode(public_key).decode("ascii"),
            "signature": base64.b64encode(signing.sign(signing_key, manifest_bytes)).decode("ascii"),
        },
        indent=2,
    ).encode()
    mtime = int(_parse_timestamp(complete["created_at"]).timestamp())

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            with (
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=mtime) as compressed,
                tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive,
            ):
                _add_bytes(archive, MANIFEST_NAME, manifest_bytes, mtime)
                _add_bytes(archive, SIGNATURE_NAME, signature_bytes, mtime)
                for entry in entries:
                    _add_file(archive, run_dir / entry["path"], entry, mtime)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, out_path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return out_path


def _describe_file(source: Path, path: str) -> dict:
    digest = hashlib.sha256()
    size = 0
    with source.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return {"path": path, "size": size, "sha256": digest.hexdigest()}


def _tar_info(name: str, size: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = mtime
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes, mtime: int) -> None:
    archive.addfile(_tar_info(name, len(data), mtime), io.BytesIO(data))


def _add_file(archive: tarfile.TarFile, source: Path, entry: dict, mtime: int) -> None:
    with source.open("rb") as handle:
        reader = _HashingReader(handle)
        archive.addfile(_tar_info(f"{FILES_DIR}/{entry['path']}", entry["size"], mtime), reader)
    if reader.hexdigest() != entry["sha256"]:
        raise BundleError("hash_mismatch", f"{entry['path']} changed while the bundle was being written")


class _HashingReader:
    def __init__(self, handle):
        self._handle = handle
        self._digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        self._digest.update(data)
        return data

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def _parse_timestamp(value: str) -> datetime:
    """A schema-valid RFC 3339 UTC timestamp, to the second (Python 3.10 cannot parse every fraction length)."""
    return datetime.fromisoformat(value[:19] + "+00:00")


# --- verifying ---------------------------------------------------------------------------------------------------


def verify_bundle(
    path: Path,
    *,
    extract_to: Path,
    limits: BundleLimits = BundleLimits(),
    trusted_keys: Collection[bytes] | None = None,
) -> VerifiedBundle:
    """Check a bundle completely and extract its files under `extract_to`/files; raises BundleError on any problem.

    `extract_to` must be empty or absent. On failure the partly extracted files are removed.
    """
    path = Path(path)
    root = Path(extract_to)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise ValueError(f"extract_to {root} must be an empty directory")
    try:
        with path.open("rb") as raw:
            return _verify(raw, _ExtractedFiles(root), limits, trusted_keys, path.name, root=root)
    except BaseException:
        for child in root.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        raise


def verify_bundle_stream(
    stream: BinaryIO,
    *,
    limits: BundleLimits = BundleLimits(),
    trusted_keys: Collection[bytes] | None = None,
    compressed_size: int | None = None,
    name: str = "the bundle",
    spill_prefix: str = "nvmedb-bundle-",
) -> VerifiedBundle:
    """Check the bundle read from `stream` (a binary file object, read once from its current position) completely,
    keeping its files in memory; raises BundleError on any problem. Nothing is written to disk unless the files add
    up to more than `limits.max_memory_bytes` (then the rest go to a temporary directory named `spill_prefix`...,
    removed by `close()`).

    `compressed_size` (the stream's length) sets the compression-ratio limit; when None it is taken from the stream
    (its file's size, or its end) or, for a stream that cannot tell, counted as it is read. `name` names the bundle
    in messages. Close the result (or use it in a `with` block) when done."""
    held = _HeldFiles(limits.max_memory_bytes, spill_prefix)
    try:
        return _verify(stream, held, limits, trusted_keys, name, root=None, compressed_size=compressed_size)
    except BaseException:
        held.close()
        raise


def _verify(
    raw: BinaryIO,
    files: _ExtractedFiles | _HeldFiles,
    limits: BundleLimits,
    trusted_keys: Collection[bytes] | None,
    name: str,
    *,
    root: Path | None,
    compressed_size: int | None = None,
) -> VerifiedBundle:
    magic = raw.read(2)
    if magic != b"\x1f\x8b":
        raise BundleError("not_an_archive", f"{name} is not a gzip-compressed tar archive")
    counted = _CountingReader(raw, magic)
    if compressed_size is None:
        compressed_size = _stream_size(raw)
    stream = _LimitedStream(gzip.GzipFile(fileobj=counted, mode="rb"), compressed_size, counted, limits)
    try:
        manifest_bytes, signature_bytes, extracted = _read_members(stream, files, limits)
    except (tarfile.TarError, gzip.BadGzipFile, zlib.error, EOFError, ValueError) as exc:
        # tarfile raises ValueError (and UnicodeError, a ValueError) on some malformed headers
        raise BundleError("not_an_archive", f"{name} is not a readable tar.gz archive ({exc})") from exc

    if manifest_bytes is None:
        raise BundleError("bad_manifest", f"the bundle has no {MANIFEST_NAME}")
    manifest = _load_manifest(manifest_bytes)
    if signature_bytes is None:
        raise BundleError("bad_signature", f"the bundle has no {SIGNATURE_NAME}")
    public_key = _check_signature(signature_bytes, manifest_bytes)
    if trusted_keys is not None and public_key not in set(trusted_keys):
        raise BundleError(
            "untrusted_key",
            f"the bundle is signed by key {signing.fingerprint(public_key)}, which is not one of the trusted keys",
        )
    _check_files(manifest, extracted)
    return VerifiedBundle(
        manifest=manifest,
        public_key=public_key,
        fingerprint=signing.fingerprint(public_key),
        root=root,
        manifest_bytes=manifest_bytes,
        files=files,
    )


def _stream_size(raw: BinaryIO) -> int | None:
    """The length of the file behind `raw`, when it can tell without reading it."""
    try:
        return os.fstat(raw.fileno()).st_size
    except (AttributeError, OSError, io.UnsupportedOperation):
        pass
    size = getattr(raw, "size", None)  # Django's File objects, including django-storages' remote files
    return size if isinstance(size, int) and size > 0 else None


class _CountingReader:
    """The compressed stream, with the two bytes already read put back in front, counting what passes."""

    def __init__(self, source: BinaryIO, head: bytes):
        self._source = source
        self._head = head
        self.count = len(head)

    def read(self, size: int = -1) -> bytes:
        head, self._head = self._head, b""
        if size is not None and 0 <= size <= len(head):
            self._head = head[size:]
            return head[:size]
        data = self._source.read(-1 if size is None or size < 0 else size - len(head))
        self.count += len(data)
        return head + data


class _LimitedStream:
    """A file-like view of the decompressed bytes that stops at the total-size and compression-ratio limits. The
    ratio is judged against the stream's size, or, when it is unknown, against the compressed bytes read so far."""

    def __init__(self, source, compressed_size: int | None, counted: _CountingReader, limits: BundleLimits):
        self._source = source
        self._compressed_size = compressed_size
        self._counted = counted
        self._limits = limits
        # tar and pax headers and block padding come on top of the files' own bytes
        self._total_limit = limits.max_total_bytes + 4096 * (limits.max_files + 16) + 20 * 512
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = _CHUNK
        data = self._source.read(size)
        self.consumed += len(data)
        compressed = self._compressed_size if self._compressed_size is not None else self._counted.count
        ratio_limit = max(self._limits.max_compression_ratio * max(compressed, 1), self._limits.ratio_check_after_bytes)
        if self.consumed > ratio_limit:
            raise BundleError(
                "compression_ratio",
                f"the archive expands to more than {self._limits.max_compression_ratio:g} times its compressed size "
                f"of {compressed} bytes (a decompression bomb?)",
            )
        if self.consumed > self._total_limit:
            raise BundleError(
                "too_large", f"the archive holds more than the limit of {self._limits.max_total_bytes} bytes"
            )
        return data


def _read_members(
    stream: _LimitedStream, files: _ExtractedFiles | _HeldFiles, limits: BundleLimits
) -> tuple[bytes | None, bytes | None, dict[str, tuple[int, str]]]:
    manifest_bytes = signature_bytes = None
    extracted: dict[str, tuple[int, str]] = {}  # path under files/ -> (size, sha256)
    seen: set[str] = set()
    folders: set[str] = set()  # every folder a file of files/ sits in
    total = 0
    entries = 0
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            name = member.name
            _check_member_name(name)
            if name.rstrip("/") in seen:
                raise BundleError("duplicate_member", f"the archive holds {name!r} more than once")
            seen.add(name.rstrip("/"))
            _check_member_type(member)
            entries += 1
            if entries > limits.max_files + 2:  # the manifest and its signature come on top of the files
                raise BundleError("too_many_files", f"the archive holds more than {limits.max_files} files")
            if member.isdir():
                if name.rstrip("/") != FILES_DIR and not name.startswith(f"{FILES_DIR}/"):
                    raise BundleError("extra_file", f"the archive holds an unexpected directory {name!r}")
                continue
            if len(extracted) >= limits.max_files and name not in (MANIFEST_NAME, SIGNATURE_NAME):
                raise BundleError("too_many_files", f"the archive holds more than {limits.max_files} files")
            total += member.size
            if total > limits.max_total_bytes:
                raise BundleError(
                    "too_large", f"the archive's files add up to more than the limit of {limits.max_total_bytes} bytes"
                )
            if name in (MANIFEST_NAME, SIGNATURE_NAME):
                limit = limits.max_manifest_bytes if name == MANIFEST_NAME else MAX_SIGNATURE_BYTES
                if member.size > limit:
                    raise BundleError("too_large", f"{name} is {member.size} bytes, more than the limit of {limit}")
                data = archive.extractfile(member).read()
                if name == MANIFEST_NAME:
                    manifest_bytes = data
                else:
                    signature_bytes = data
                continue
            if not name.startswith(f"{FILES_DIR}/"):
                raise BundleError("extra_file", f"the archive holds {name!r} outside {FILES_DIR}/")
            if member.size > limits.max_file_bytes:
                raise BundleError(
                    "too_large",
                    f"{name} is {member.size} bytes, more than the per-file limit of {limits.max_file_bytes}",
                )
            relative = name[len(FILES_DIR) + 1 :]
            _check_no_collision(relative, extracted, folders, name)
            extracted[relative] = files.add(archive, member, relative)
    return manifest_bytes, signature_bytes, extracted


def _check_no_collision(relative: str, extracted: dict, folders: set[str], name: str) -> None:
    """A file may not share its path with a folder of another file (`a` and `a/b`): no directory could hold both."""
    parts = relative.split("/")
    parents = ["/".join(parts[:n]) for n in range(1, len(parts))]
    if relative in folders or any(parent in extracted for parent in parents):
        raise BundleError("unsafe_path", f"archive member {name!r} collides with another member")
    folders.update(parents)


def _check_member_name(name: str) -> None:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        # tarfile hands over undecodable name bytes as lone surrogates; no manifest path (strict JSON) can name them
        raise BundleError("unsafe_path", f"archive member {name!r} has a name that is not UTF-8") from None
    try:
        _check_relative_path(name.rstrip("/") if name.endswith("/") else name)
    except BundleError as exc:
        raise BundleError("unsafe_path", f"archive member {name!r}: {exc.message}") from None


def _check_relative_path(path: str) -> None:
    if not path or path.startswith("/") or "\\" in path or (len(path) > 1 and path[1] == ":"):
        raise BundleError("unsafe_path", f"{path!r} is not a relative '/'-separated path")
    if _CONTROL.search(path):
        raise BundleError("unsafe_path", f"{path!r} contains a control character")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise BundleError("unsafe_path", f"{path!r} has an empty, '.' or '..' component")
    if len(path) > MAX_PATH_LENGTH or any(len(part.encode()) > MAX_NAME_BYTES for part in parts):
        raise BundleError(
            "unsafe_path", f"{path[:80]!r}... is longer than {MAX_PATH_LENGTH} characters or has a name over 255 bytes"
        )


def _check_member_type(member: tarfile.TarInfo) -> None:
    if member.issym() or member.islnk():
        kind = "symbolic" if member.issym() else "hard"
        raise BundleError("link_member", f"archive member {member.name!r} is a {kind} link; links are not allowed")
    if member.isdir():
        return
    if not member.isreg() or member.issparse():
        raise BundleError(
            "special_member",
            f"archive member {member.name!r} is not a regular file (devices, FIFOs and sparse files are not allowed)",
        )


def _extract_member(archive: tarfile.TarFile, member: tarfile.TarInfo, target: Path) -> tuple[int, str]:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = target.open("xb")
    except (FileExistsError, NotADirectoryError) as exc:
        raise BundleError("unsafe_path", f"archive member {member.name!r} collides with another member") from exc
    with handle:
        return _copy_hashing(archive.extractfile(member), handle)


def _copy_hashing(source, handle) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    while chunk := source.read(_CHUNK):
        digest.update(chunk)
        handle.write(chunk)
        size += len(chunk)
    return size, digest.hexdigest()


class _ExtractedFiles:
    """The files of a bundle extracted under `root`/files (verify_bundle)."""

    def __init__(self, root: Path):
        self.root = root

    def add(self, archive: tarfile.TarFile, member: tarfile.TarInfo, relative: str) -> tuple[int, str]:
        return _extract_member(archive, member, self.root / FILES_DIR / relative)

    def read_bytes(self, path: str) -> bytes:
        return (self.root / FILES_DIR / path).read_bytes()

    def open(self, path: str) -> BinaryIO:
        return (self.root / FILES_DIR / path).open("rb")

    def close(self) -> None:
        pass  # the caller owns the directory


class _HeldFiles:
    """The files of a bundle held in memory up to `budget` bytes; beyond it, each further file goes to a private
    temporary directory under a numbered name (never its own, so no path in a bundle ever reaches the disk)."""

    def __init__(self, budget: int, spill_prefix: str):
        self._budget = budget
        self._spill_prefix = spill_prefix
        self._memory: dict[str, bytes] = {}
        self._spilled: dict[str, Path] = {}
        self._directory: tempfile.TemporaryDirectory | None = None
        self.held = 0

    def add(self, archive: tarfile.TarFile, member: tarfile.TarInfo, relative: str) -> tuple[int, str]:
        source = archive.extractfile(member)
        if self.held + member.size > self._budget:
            return self._spill(source, relative)
        data = source.read()
        self._memory[relative] = data
        self.held += len(data)
        return len(data), hashlib.sha256(data).hexdigest()

    def _spill(self, source, relative: str) -> tuple[int, str]:
        if self._directory is None:
            self._directory = tempfile.TemporaryDirectory(prefix=self._spill_prefix)
        target = Path(self._directory.name) / str(len(self._spilled))
        self._spilled[relative] = target
        with target.open("xb") as handle:
            return _copy_hashing(source, handle)

    def read_bytes(self, path: str) -> bytes:
        if path in self._memory:
            return self._memory[path]
        return self._spilled[path].read_bytes()

    def open(self, path: str) -> BinaryIO:
        if path in self._memory:
            return io.BytesIO(self._memory[path])
        return self._spilled[path].open("rb")

    def close(self) -> None:
        self._memory = {}
        self._spilled = {}
        if self._directory is not None:
            self._directory.cleanup()
            self._directory = None


def _load_manifest(manifest_bytes: bytes) -> dict:
    try:
        manifest = jsonload.loads(manifest_bytes, what=MANIFEST_NAME, max_depth=MAX_MANIFEST_DEPTH)
    except jsonload.JsonError as exc:
        raise BundleError("bad_manifest", str(exc)) from None
    if not isinstance(manifest, dict):
        raise BundleError("bad_manifest", f"{MANIFEST_NAME} is not a JSON object")
    if manifest.get("format_version") not in READ_VERSIONS:
        raise BundleError(
            "bad_manifest",
            f"format_version is {manifest.get('format_version')!r}; this client reads versions "
            + " and ".join(str(v) for v in READ_VERSIONS),
        )
    problems = manifest_errors(manifest)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise BundleError("bad_manifest", "the manifest breaks the schema: " + "; ".join(problems[:3]) + more)
    paths = [entry["path"] for entry in manifest["files"]]
    if len(set(paths)) != len(paths):
        raise BundleError("bad_manifest", "the manifest lists a file more than once")
    problems = _version_problems(manifest)
    if problems:
        raise BundleError("bad_manifest", "; ".join(problems[:3]))
    return manifest


def _version_problems(manifest: dict) -> list[str]:
    """Rules of a format version that its schema cannot state (format 2: the system declarations are sound)."""
    if manifest.get("format_version") == 2:
        return system_files.declaration_problems(manifest)
    return []


def _check_signature(signature_bytes: bytes, manifest_bytes: bytes) -> bytes:
    try:
        document = jsonload.loads(signature_bytes, what=SIGNATURE_NAME, max_depth=4)
        if document.get("algorithm") != "ed25519":
            raise ValueError(f"algorithm {document.get('algorithm')!r} is not ed25519")
        public_key = base64.b64decode(document["public_key"], validate=True)
        signature = base64.b64decode(document["signature"], validate=True)
        if len(public_key) != 32 or len(signature) != 64:
            raise ValueError("the public key must be 32 bytes and the signature 64 bytes")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError, binascii.Error) as exc:
        raise BundleError("bad_signature", f"{SIGNATURE_NAME} is malformed: {exc}") from exc
    if not signing.verify_signature(public_key, signature, manifest_bytes):
        raise BundleError(
            "bad_signature",
            f"the signature does not match {MANIFEST_NAME} and key {signing.fingerprint(public_key)}: "
            "the manifest was changed or signed with another key",
        )
    return public_key


def _check_files(manifest: dict, extracted: dict[str, tuple[int, str]]) -> None:
    listed = {entry["path"]: entry for entry in manifest["files"]}
    for path, entry in sorted(listed.items()):
        if path not in extracted:
            raise BundleError("missing_file", f"{FILES_DIR}/{path} is listed in the manifest but not in the archive")
        size, sha256 = extracted[path]
        if size != entry["size"]:
            raise BundleError(
                "size_mismatch", f"{FILES_DIR}/{path} is {size} bytes but the manifest says {entry['size']}"
            )
        if sha256 != entry["sha256"]:
            raise BundleError("hash_mismatch", f"{FILES_DIR}/{path} does not match its SHA-256 in the manifest")
    extra = sorted(set(extracted) - set(listed))
    if extra:
        raise BundleError("extra_file", f"{FILES_DIR}/{extra[0]} is in the archive but not listed in the manifest")


# --- re-deriving the verdicts ------------------------------------------------------------------------------------


def rederive_steady_state(bundle: VerifiedBundle) -> list[dict]:
    """Compute steady_state[] afresh from the raw fio outputs in the bundle (never trusting the client's claim)."""
    runs = bundle.manifest["runs"]
    summaries = {}
    for run in runs:
        if run["test"] not in TESTS_WITH_STEADY_STATE or run["phase"] not in ("wdpc", "tp-write", "tp-read", "hir-pc"):
            continue
        try:
            summaries[run["id"]] = summarize(parse_fio_output(bundle.read_bytes(run["output_file"])))
        except (FioOutputError, KeyError):
            continue  # evaluate_runs records the run as having no value, with the reason
    return evaluate_runs(runs, summaries)


def bundle_file_name(manifest: dict) -> str:
    stamp = _parse_timestamp(manifest["created_at"]).strftime("%Y%m%dT%H%M%SZ")
    return f"nvmedb-{manifest['profile']}-{stamp}{BUNDLE_SUFFIX}"


def rederive_surface(bundle: VerifiedBundle) -> dict | None:
    """The surface's figures afresh from the raw fio outputs (None when the bundle has no surface)."""
    from nvmedb_client.pts import surface_figures

    summaries = {}
    for run in surface_figures.surface_runs(bundle.manifest["runs"]):
        try:
            summaries[run["id"]] = summarize(parse_fio_output(bundle.read_bytes(run["output_file"])))
        except (FioOutputError, KeyError):
            continue  # the cell is then listed as missing, with the reason
    return surface_figures.derive_from_manifest(bundle.manifest, summaries)
