"""Raw files of a stored bundle, as the public may see them: each re-emitted from the fields its kind allows, with
every identifier found anywhere in the bundle removed.

The bundle is read as a stream (tar members in order), never extracted: the manifest comes first and lists every file
that may be served; nothing outside that list is ever opened, and of that list only the files whose kind the manifest
makes known (analysis.raw_allow.file_kinds) are served, each by the allow-list of its kind. Which identifiers to
remove is decided once per bundle over all of its files, the unserved ones too (analysis.raw_identifiers), and cached; a file
is then re-emitted and scrubbed with that union as it is read. Files up to NVMEDB_RAW_FILE_RENDER_MAX_BYTES are
shown; larger ones are offered as a streamed download, up to NVMEDB_RAW_FILE_DOWNLOAD_MAX_BYTES.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.core.files.storage import Storage, default_storage

from analysis import privacy, raw_allow, raw_identifiers
from submissions.storage import open_bundle

logger = logging.getLogger(__name__)
SCRUBBED = privacy.SCRUBBED
MANIFEST_NAME = "manifest.json"
FILES_PREFIX = "files/"
MAX_MANIFEST_BYTES = 16 * 1024**2


@dataclass(frozen=True)
class RawFile:
    path: str
    size: int
    sha256: str
    kind: str | None = None  # analysis.raw_allow.KINDS; None: of no known kind, not served

    @property
    def served(self) -> bool:
        return self.kind is not None

    @property
    def kind_label(self) -> str:
        return raw_allow.KINDS[self.kind] if self.kind else raw_allow.NOT_SERVED


class RawFileNotFound(LookupError):
    pass


class RawFileNotServed(RawFileNotFound):
    """A listed file of no known kind: the public never sees it; its contributor keeps the original bundle."""


class RawFileTooLarge(RawFileNotFound):
    pass


def render_max_bytes() -> int:
    return int(getattr(settings, "NVMEDB_RAW_FILE_RENDER_MAX_BYTES", 2 * 1024**2))


def download_max_bytes() -> int:
    return int(getattr(settings, "NVMEDB_RAW_FILE_DOWNLOAD_MAX_BYTES", 64 * 1024**2))


def scrub(name: str, data: bytes, identifiers: set[str] | None = None, *, kind: str) -> bytes:
    """The public form of one file of `kind` on its own (plus `identifiers` found elsewhere in its bundle)."""
    found = privacy.identifiers_in_file(name, data) | set(identifiers or ())
    return "".join(raw_allow.reemit(kind, io.BytesIO(data), privacy.Scrubber(found))).encode()


UNREADABLE = (tarfile.TarError, EOFError, zlib.error, UnicodeDecodeError)


@contextlib.contextmanager
def _readable(storage_name: str) -> Iterator[None]:
    """A stored bundle that is not the gzip tar it should be is not found, never a server error."""
    try:
        yield
    except UNREADABLE as exc:
        raise RawFileNotFound(f"the stored bundle cannot be read ({type(exc).__name__}: {exc})") from None


def _open_archive(storage: Storage, storage_name: str):
    handle = open_bundle(storage_name, storage=storage)
    try:
        with _readable(storage_name):
            return handle, tarfile.open(fileobj=handle, mode="r|gz")
    except BaseException:
        handle.close()
        raise


def _read_manifest(archive: tarfile.TarFile, member: tarfile.TarInfo | None) -> dict:
    if member is None or member.name != MANIFEST_NAME or not member.isfile() or member.size > MAX_MANIFEST_BYTES:
        raise RawFileNotFound("the bundle does not start with its manifest")
    try:
        manifest = json.loads(archive.extractfile(member).read())
    except (ValueError, RecursionError):
        raise RawFileNotFound("the bundle's manifest is not readable JSON") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files", []), list):
        raise RawFileNotFound("the bundle's manifest lists no files")
    return manifest


def _listed(manifest: dict) -> set[str]:
    return {str(entry["path"]) for entry in manifest["files"] if isinstance(entry, dict) and "path" in entry}


def bundle_files(*, storage_name: str, storage: Storage | None = None) -> list[RawFile]:
    """The files the bundle's manifest lists (read from its first member)."""
    handle, archive = _open_archive(storage or default_storage, storage_name)
    with handle, archive, _readable(storage_name):
        manifest = _read_manifest(archive, next(iter(archive), None))
    kinds = raw_allow.file_kinds(manifest)
    try:
        return [
            RawFile(str(e["path"]), int(e["size"]), str(e["sha256"]), kinds.get(str(e["path"])))
            for e in manifest["files"]
        ]
    except (KeyError, TypeError, ValueError):
        raise RawFileNotFound("the bundle's manifest lists a file without its path, size or hash") from None


def listed_file(*, storage_name: str, path: str, storage: Storage | None = None) -> RawFile:
    """The manifest's entry for `path` (its size was checked against the file when the bundle was verified)."""
    found = next((f for f in bundle_files(storage_name=storage_name, storage=storage) if f.path == path), None)
    if found is None:
        raise RawFileNotFound(f"{path!r} is not listed in the bundle's manifest")
    return found


def collect_bundle_identifiers(*, storage_name: str, storage: Storage | None = None) -> set[str]:
    """The union of the identifiers in the manifest and every listed file of the stored bundle."""
    handle, archive = _open_archive(storage or default_storage, storage_name)
    found: set[str] = set()
    with handle, archive, _readable(storage_name):
        listed: set[str] | None = None
        for member in archive:
            if listed is None:
                manifest = _read_manifest(archive, member)
                listed = _listed(manifest)
                found |= raw_identifiers.identifiers_of_manifest(manifest)
                continue
            path = member.name.removeprefix(FILES_PREFIX)
            if member.isfile() and member.name.startswith(FILES_PREFIX) and path in listed:
                found |= raw_identifiers.identifiers_of_file(path, member.size, archive.extractfile(member))
    return found


def bundle_identifiers(*, storage_name: str, storage: Storage | None = None) -> set[str]:
    """collect_bundle_identifiers, kept in the cache (a stored bundle never changes; the ingest caches it first)."""
    found = raw_identifiers.cached(storage_name)
    if found is None:
        found = collect_bundle_identifiers(storage_name=storage_name, storage=storage)
        raw_identifiers.remember(storage_name, found)
    return found


class ScrubbedFile:
    """One served file of a bundle, re-emitted by its kind's allow-list and scrubbed as it is read: iterate
    `chunks()` once, or `close()` it."""

    def __init__(self, path: str, size: int, kind: str, handle, archive, member, scrubber: privacy.Scrubber):
        self.path, self.size, self.kind = path, size, kind  # size: bytes in the bundle, before scrubbing
        self._handle, self._archive, self._member, self._scrubber = handle, archive, member, scrubber

    def chunks(self) -> Iterator[str]:
        try:
            yield from raw_allow.reemit(self.kind, self._archive.extractfile(self._member), self._scrubber)
        except UNREADABLE as exc:
            logger.warning("stored bundle unreadable while serving %s", self.path, exc_info=True)
            yield f"\n[the stored bundle could not be read past this point: {type(exc).__name__}]\n"
        finally:
            self.close()

    def close(self) -> None:
        self._archive.close()
        self._handle.close()


def open_scrubbed(*, storage_name: str, path: str, storage: Storage | None = None) -> ScrubbedFile:
    """`path` (relative to files/, listed in the manifest) scrubbed with its bundle's identifiers, as a stream."""
    storage = storage or default_storage
    identifiers = bundle_identifiers(storage_name=storage_name, storage=storage)
    if len(identifiers) > privacy.MAX_IDENTIFIERS:
        raise RawFileNotFound(
            f"the bundle names {len(identifiers)} identifiers, more than the {privacy.MAX_IDENTIFIERS} its raw files "
            "can be scrubbed of here"
        )
    scrubber = privacy.Scrubber(identifiers)
    handle, archive = _open_archive(storage, storage_name)
    try:
        with _readable(storage_name):
            return _find_member(path, handle, archive, scrubber)
    except BaseException:
        archive.close()
        handle.close()
        raise


def _find_member(path: str, handle, archive: tarfile.TarFile, scrubber: privacy.Scrubber) -> ScrubbedFile:
    kind: str | None = None
    for index, member in enumerate(archive):
        if index == 0:
            manifest = _read_manifest(archive, member)
            if path not in _listed(manifest):
                raise RawFileNotFound(f"{path!r} is not listed in the bundle's manifest")
            kind = raw_allow.file_kinds(manifest).get(path)
            if kind is None:
                raise RawFileNotServed(not_served_message(path))
            continue
        if member.name == FILES_PREFIX + path and member.isfile():
            if member.size > download_max_bytes():
                raise RawFileTooLarge(f"{path!r} ({member.size} bytes) is larger than the site serves")
            return ScrubbedFile(path, member.size, kind, handle, archive, member, scrubber)
    raise RawFileNotFound(f"{path!r} is not in the bundle")


def not_served_message(path: str) -> str:
    return (
        f"{path}: {raw_allow.NOT_SERVED}. Raw files are served by allow-list: only files whose kind the manifest "
        "names, and only their known fields. The contributor keeps the original bundle.\n"
    )


def inline_text(scrubbed: ScrubbedFile) -> str:
    """The whole re-emitted file as a raw-file page shows it (JSON is written laid out already)."""
    return "".join(scrubbed.chunks())
