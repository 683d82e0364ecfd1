"""A verified bundle and where its files are: extracted on disk (verify_bundle) or held in memory with a private
spill directory (verify_bundle_stream). Files are read by their manifest path only."""

from __future__ import annotations

import hashlib
import io
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from nvmedb_client import jsonload
from nvmedb_client.bundle_format import CHUNK_BYTES, FILES_DIR, BundleError
from nvmedb_client.fio_output import parse_fio_output

_JSON_DOCUMENT, _FIO_OUTPUT = "json document", "fio output"  # their keys in a bundle's parse cache


@dataclass
class VerifiedBundle:
    """A bundle whose signature, manifest and every file's size and SHA-256 were checked. Its files are read by
    manifest path; `close()` (or a `with` block) frees what `verify_bundle_stream` holds."""

    manifest: dict
    public_key: bytes
    fingerprint: str
    root: Path | None  # the extraction directory of verify_bundle; None when the files are held (verify_bundle_stream)
    manifest_bytes: bytes = field(default=b"", repr=False)
    files: ExtractedFiles | HeldFiles | None = field(default=None, repr=False)
    _listed: frozenset[str] | None = field(default=None, repr=False)
    _parsed: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.files is None and self.root is not None:
            self.files = ExtractedFiles(Path(self.root))

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
        """`parse` of a listed file's bytes, computed once per bundle and parser. Callers must not change what it
        returns."""
        key = (path, parse)
        if key not in self._parsed:
            self._parsed[key] = parse(self.read_bytes(path))
        return self._parsed[key]

    def json_document(self, path: str, data: bytes | None = None) -> Any:
        """orjson.loads of a listed file's bytes (`data`, when the caller has read them), computed once per bundle: a
        fio output's parse (`fio_output`) and the server's walk for identifiers read the same document. Raises
        orjson.JSONDecodeError, every time, for a file orjson does not read; only where orjson is installed (the
        server)."""
        key = (path, _JSON_DOCUMENT)
        if key not in self._parsed:
            try:
                self._parsed[key] = jsonload.orjson.loads(self.read_bytes(path) if data is None else data)
            except jsonload.orjson.JSONDecodeError as refused:
                self._parsed[key] = refused.with_traceback(None)  # no frames kept alive by the cache
        found = self._parsed[key]
        if isinstance(found, jsonload.orjson.JSONDecodeError):
            raise found.with_traceback(None)  # a traceback of this raise alone, not one grown by every raise
        return found

    def fio_output(self, path: str) -> dict:
        """parse_fio_output of a listed file, computed once per bundle (its whole-text parse from `json_document`
        where orjson is installed). Raises what parse_fio_output raises, every time."""
        key = (path, _FIO_OUTPUT)
        if key not in self._parsed:
            load = (lambda raw: self.json_document(path, raw)) if jsonload.orjson is not None else None
            self._parsed[key] = parse_fio_output(self.read_bytes(path), load=load)
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


def _extract_member(archive: tarfile.TarFile, member: tarfile.TarInfo, target: Path) -> tuple[int, str]:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = target.open("xb")
    except (FileExistsError, NotADirectoryError) as exc:
        raise BundleError("unsafe_path", f"archive member {member.name!r} collides with another member") from exc
    with handle:
        return copy_hashing(archive.extractfile(member), handle)


def copy_hashing(source, handle) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    while chunk := source.read(CHUNK_BYTES):
        digest.update(chunk)
        handle.write(chunk)
        size += len(chunk)
    return size, digest.hexdigest()


class ForwardReader:
    """The decompressed archive as tarfile's file object, for `tarfile.TarFile(mode="r")`: it pulls the stream in
    the same `bufsize` blocks as tarfile's own stream reader (`mode="r|"`), at the same moments, so every size and
    ratio check sees the same reads, but a header or a member is a slice of one buffer instead of a copy of
    tarfile's whole block buffer per call, and it seeks forward only, as that reader does."""

    def __init__(self, source, bufsize: int = tarfile.RECORDSIZE):
        self._source = source
        self._bufsize = bufsize
        self._buffer = b""
        self._start = 0  # the stream position of the buffer's first byte
        self._pos = 0

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int) -> int:
        if pos < self._pos:
            raise tarfile.StreamError("seeking backwards is not allowed")
        self._fill(pos)
        self._pos = min(pos, self._start + len(self._buffer))  # a short stream stops where it ends, as tarfile's
        return self._pos

    def read(self, size: int) -> bytes:
        if size > 0:
            self._fill(self._pos + size)
        at = self._pos - self._start
        # tarfile's reader hands a negative size (a hostile header's) to a slice of what it holds: so does this
        data = self._buffer[at : at + size] if size >= 0 else self._buffer[at:][:size]
        self._pos += len(data)
        return data

    def _fill(self, end: int) -> None:
        """Reads blocks until the buffer reaches `end` or the stream ends, dropping what was read already."""
        have = self._start + len(self._buffer)
        if have >= end:
            return
        blocks = [self._buffer[self._pos - self._start :]]
        while have < end:
            block = self._source.read(self._bufsize)
            if not block:
                break
            blocks.append(block)
            have += len(block)
        self._buffer = b"".join(blocks)
        self._start = have - len(self._buffer)


def member_bytes(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    """`archive.extractfile(member).read()` of a regular, not sparse member, read straight from a ForwardReader."""
    reader = archive.fileobj
    if not isinstance(reader, ForwardReader):
        return archive.extractfile(member).read()
    if member.size <= 0:
        return b""
    reader.seek(member.offset_data)
    data = reader.read(member.size)
    if len(data) != member.size:
        raise tarfile.ReadError("unexpected end of data")
    return data


class ExtractedFiles:
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


class HeldFiles:
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
        if self.held + member.size > self._budget:
            return self._spill(archive.extractfile(member), relative)
        data = member_bytes(archive, member)
        self._memory[relative] = data
        self.held += len(data)
        return len(data), hashlib.sha256(data).hexdigest()

    def _spill(self, source, relative: str) -> tuple[int, str]:
        if self._directory is None:
            self._directory = tempfile.TemporaryDirectory(prefix=self._spill_prefix)
        target = Path(self._directory.name) / str(len(self._spilled))
        self._spilled[relative] = target
        with target.open("xb") as handle:
            return copy_hashing(source, handle)

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
