"""The seam between the site and where bundles and releases are kept: a local directory or an S3-compatible bucket.

Everything that reads or writes those files goes through Django's storage API and the two helpers here, so web and
worker processes on different machines share nothing but the storage (see nvmedb.object_storage for the bucket).
An unreachable bucket surfaces as StorageUnavailable: the API answers 503 with Retry-After (nvmedb.faults) and a task
is retried, never a bundle rejected.
"""

from __future__ import annotations

import os
import posixpath
from typing import BinaryIO

from django.core.files.storage import Storage


class StorageUnavailable(ConnectionError):
    """Bundle or release storage did not answer (connection refused or dropped, timeout, the server's own error).

    A ConnectionError, hence an OSError: callers that retry on I/O faults retry on this too."""


def open_stream(storage: Storage, name: str) -> BinaryIO:
    """`name` as a read-only binary stream: from a bucket it is read as it downloads, never held whole in memory or
    on disk. Raises FileNotFoundError when there is no such file."""
    opener = getattr(storage, "open_stream", None)
    if opener is not None:
        return opener(name)
    return storage.open(name, "rb")


def list_sizes(storage: Storage, directory: str) -> dict[str, int]:
    """Size in bytes of each file directly in `directory` (one listing request on a bucket); {} when it is absent."""
    lister = getattr(storage, "list_sizes", None)
    if lister is not None:
        return lister(directory)
    try:
        local = storage.path(directory)
    except NotImplementedError:
        try:
            _, files = storage.listdir(directory)
        except FileNotFoundError:
            return {}
        return {name: storage.size(posixpath.join(directory, name)) for name in files}
    try:
        with os.scandir(local) as entries:
            return {entry.name: entry.stat().st_size for entry in entries if entry.is_file()}
    except FileNotFoundError:
        return {}


def local_path(storage: Storage, name: str = "") -> str | None:
    """The file system path of `name` when `storage` is a local directory, else None (a bucket)."""
    try:
        return storage.path(name)
    except NotImplementedError:
        return None
