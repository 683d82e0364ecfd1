"""Verifying a bundle as hostile input: the archive is read once, as a stream, never with `extractall`; every
member's name and type is checked before a byte of it is kept; each member is hashed as it is read; sizes, counts and
the compression ratio are enforced while decompressing. Then the manifest (schema, version), its signature and every
listed file's size and SHA-256."""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import os
import shutil
import tarfile
import zlib
from collections.abc import Collection
from pathlib import Path
from typing import BinaryIO

from nvmedb_client import jsonload, signing
from nvmedb_client.bundle_files import ExtractedFiles, ForwardReader, HeldFiles, VerifiedBundle
from nvmedb_client.bundle_format import (
    CHUNK_BYTES,
    FILES_DIR,
    MANIFEST_NAME,
    MAX_MANIFEST_DEPTH,
    MAX_SIGNATURE_BYTES,
    READ_VERSIONS,
    SIGNATURE_NAME,
    BundleError,
    BundleLimits,
    check_relative_path,
    is_plain_path,
    manifest_errors,
    version_problems,
)

DEFAULT_LIMITS = BundleLimits()


def verify_bundle(
    path: Path,
    *,
    extract_to: Path,
    limits: BundleLimits = DEFAULT_LIMITS,
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
            return _verify(raw, ExtractedFiles(root), limits, trusted_keys, path.name, root=root)
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
    limits: BundleLimits = DEFAULT_LIMITS,
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
    without reading it (its file's size, or a Django File's `size`) or, for a stream that cannot tell, the ratio is
    judged against the compressed bytes read so far (stricter: a stream is never measured against bytes it has not
    yet shown). `name` names the bundle in messages. Close the result (or use it in a `with` block) when done."""
    held = HeldFiles(limits.max_memory_bytes, spill_prefix)
    try:
        return _verify(stream, held, limits, trusted_keys, name, root=None, compressed_size=compressed_size)
    except BaseException:
        held.close()
        raise


def _verify(
    raw: BinaryIO,
    files: ExtractedFiles | HeldFiles,
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
            size = CHUNK_BYTES
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
    stream: _LimitedStream, files: ExtractedFiles | HeldFiles, limits: BundleLimits
) -> tuple[bytes | None, bytes | None, dict[str, tuple[int, str]]]:
    manifest_bytes = signature_bytes = None
    extracted: dict[str, tuple[int, str]] = {}  # path under files/ -> (size, sha256)
    seen: set[str] = set()
    folders: set[str] = set()  # every folder a file of files/ sits in
    total = 0
    entries = 0
    # tarfile's random-access reader over a forward-only view that reads as its stream reader ("r|") does
    with tarfile.TarFile(fileobj=ForwardReader(stream), mode="r") as archive:
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
    if is_plain_path(name):
        return  # ASCII, so UTF-8, and a safe path
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        # tarfile hands over undecodable name bytes as lone surrogates; no manifest path (strict JSON) can name them
        raise BundleError("unsafe_path", f"archive member {name!r} has a name that is not UTF-8") from None
    try:
        check_relative_path(name.rstrip("/") if name.endswith("/") else name)
    except BundleError as exc:
        raise BundleError("unsafe_path", f"archive member {name!r}: {exc.message}") from None


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
    problems = version_problems(manifest)
    if problems:
        raise BundleError("bad_manifest", "; ".join(problems[:3]))
    return manifest


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
