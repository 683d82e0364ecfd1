"""Where releases are kept and how a build publishes one: the storage mechanics of datasets.releases.

On local disk (NVMEDB_RELEASES_DIR) a build writes in a sibling temporary directory (".building-…") published by one
atomic rename; in an S3-compatible bucket it writes in this machine's temporary directory and uploads the files with
SHA256SUMS last, so a release exists once its SHA256SUMS does. Builds run one at a time under `exclusive_lock`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages
from django.db import DatabaseError, connection

from nvmedb.storage import list_sizes, local_path, open_stream

logger = logging.getLogger(__name__)

TEMP_PREFIX = ".building-"
LOCK_NAME = ".lock"
SUMS = "SHA256SUMS"
# pg_advisory_lock key of release builds (any fixed number the site uses for nothing else)
LOCK_KEY = 0x6E766D6552454C


def release_storage() -> Storage:
    return storages["releases"]


def storage_id(storage: Storage) -> str:
    return local_path(storage) or f"{getattr(storage, 'bucket_name', '')}/{getattr(storage, 'location', '')}"


def numbers(storage: Storage) -> list[int]:
    """Every numbered directory, published or not."""
    try:
        directories, _ = storage.listdir("")
    except FileNotFoundError:
        return []
    return [int(name) for name in directories if name.isdigit()]


def read_bytes(storage: Storage, name: str) -> bytes:
    with open_stream(storage, name) as handle:
        return handle.read()


def parse_sums(text: str) -> dict[str, str]:
    sums = {}
    for line in text.splitlines():
        digest, _, name = line.partition("  ")
        if name:
            sums[name] = digest
    return sums


@contextmanager
def exclusive_lock(root: Path | None) -> Iterator[None]:
    """One build at a time: on PostgreSQL an advisory lock (held by the session, so a killed builder's goes with it),
    which holds across machines; otherwise a lock file beside the releases, or in the local state directory."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
        try:
            yield
        finally:
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
            except DatabaseError:  # the session is gone or its transaction failed; the lock ends with the session
                logger.warning("release build lock not released explicitly", exc_info=True)
        return
    with open((root or Path(settings.VAR_DIR)) / LOCK_NAME, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def remove_abandoned_builds(root: Path) -> list[str]:
    """Remove temporary directories of builds that died (call only while holding the lock)."""
    removed = []
    for path in root.iterdir():
        if path.is_dir() and path.name.startswith(TEMP_PREFIX):
            make_writable(path)
            shutil.rmtree(path)
            removed.append(path.name)
    return removed


def remove_abandoned_uploads(storage: Storage) -> list[str]:
    """In a bucket, a numbered directory without SHA256SUMS is an upload that died (call only under the lock)."""
    removed = []
    for number in numbers(storage):
        sizes = list_sizes(storage, str(number))
        if SUMS not in sizes:
            for name in sizes:
                storage.delete(f"{number}/{name}")
            removed.append(str(number))
    return removed


def make_writable(path: Path) -> None:
    path.chmod(0o755)
    for child in path.iterdir():
        child.chmod(0o644)


@contextmanager
def build_directory(root: Path | None, number: int) -> Iterator[Path]:
    """Where a build writes: beside the releases on local disk (so publication is one rename), else a temporary
    directory of this machine. Whatever is left of it afterwards is removed."""
    if root is None:
        with tempfile.TemporaryDirectory(prefix="nvmedb-release-") as temp:
            yield Path(temp)
        return
    temp = root / f"{TEMP_PREFIX}{number}-{uuid.uuid4().hex[:8]}"
    temp.mkdir()
    try:
        yield temp
    finally:
        if temp.exists():
            make_writable(temp)
            shutil.rmtree(temp)


def publish(storage: Storage, root: Path | None, temp: Path, number: int) -> None:
    if root is not None:
        for child in temp.iterdir():
            child.chmod(0o444)
        os.rename(temp, root / str(number))  # atomic publication
        (root / str(number)).chmod(0o555)
        fsync_dir(root)
        return
    # SHA256SUMS last: until it is there, readers see no release N (get_release), and a dead upload is removed.
    names = [*sorted(p.name for p in temp.iterdir() if p.name != SUMS), SUMS]
    for name in names:
        with open(temp / name, "rb") as handle:
            stored = storage.save(f"{number}/{name}", File(handle, name=name))
        if stored != f"{number}/{name}":
            raise RuntimeError(f"release storage kept {number}/{name} as {stored}; releases are never overwritten")


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
