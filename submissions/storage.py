"""Stored bundles: the web process writes an upload to bundle storage (Django's "default" storage: a local directory, or
an S3-compatible bucket, see nvmedb.settings.storages) and every reader, in whatever process or machine, reads it back
from there through `open_bundle`. Nothing a worker needs is on the web machine's disk.
"""

from __future__ import annotations

import shutil
import uuid
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from django.core.files.storage import Storage, default_storage

from nvmedb.storage import open_stream

if TYPE_CHECKING:
    from submissions.models import Submission

COPY_BYTES = 1024 * 1024


def bundle_name(submission_id: uuid.UUID, when: datetime) -> str:
    return f"bundles/{when:%Y/%m}/{submission_id}.nvmedb.tar.gz"


def open_bundle(submission: Submission | str, *, storage: Storage | None = None) -> BinaryIO:
    """The stored bundle of `submission` (or the bundle stored under that name) as a read-only binary stream, read
    from storage as it is consumed (read(), no seek). Close it. Raises FileNotFoundError when it is gone and
    nvmedb.storage.StorageUnavailable when storage does not answer."""
    name = submission if isinstance(submission, str) else submission.storage_name
    return open_stream(storage or default_storage, name)


def copy_bundle_to(submission: Submission | str, directory: Path, *, storage: Storage | None = None) -> Path:
    """The stored bundle copied into `directory` (a temporary directory of the caller, which removes it), for readers
    that still need a file path."""
    target = directory / "bundle.nvmedb.tar.gz"
    with open_bundle(submission, storage=storage) as source, target.open("wb") as out:
        shutil.copyfileobj(source, out, COPY_BYTES)
    return target
