"""Receiving a bundle: streamed to storage while it is hashed, refused when it is no gzip file, empty or cut short,
and queued for validation once its row is committed."""

import logging
import uuid
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files import File
from django.core.files.storage import Storage, default_storage
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from submissions.models import Submission, SubmissionEvent, SubmissionStatus
from submissions.storage import bundle_name
from submissions.tasks import submission_enqueue
from submissions.upload import HashingReader

logger = logging.getLogger(__name__)

GZIP_MAGIC = b"\x1f\x8b"


class NotGzip(Exception):
    """The body does not start like a gzip file, so it cannot be a bundle."""


class EmptyUpload(Exception):
    pass


class IncompleteUpload(Exception):
    """Fewer bytes arrived than the request announced: the connection broke off."""


class _GzipCheckingSource:
    """Raises NotGzip on the first read when the body does not start with the gzip magic bytes."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self._checked = False

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size)
        if not self._checked:
            while len(data) < 2:
                more = self._source.read(2 - len(data))
                if not more:
                    break
                data += more
            self._checked = True
            if data and not data.startswith(GZIP_MAGIC):
                raise NotGzip("The upload is not a gzip-compressed tar archive (.nvmedb.tar.gz).")
        return data


def _delete_quietly(storage: Storage, name: str) -> None:
    try:
        storage.delete(name)
    except Exception:  # the upload already failed; a leftover file is logged, not raised over the real error
        logger.exception("could not delete partial upload %s", name)


def submission_create(
    *,
    uploader: AbstractBaseUser,
    stream: BinaryIO,
    original_name: str = "",
    expected_size: int | None = None,
    storage: Storage | None = None,
) -> tuple[Submission, bool]:
    """Streams `stream` to storage while hashing it and returns (submission, created).

    The same bytes sent again by the same account return that account's existing submission. Duplicates are per
    uploader: a stranger who sent the same bytes first gets a submission of their own (which validation rejects,
    since the signing key is not theirs) and never blocks the owner. Raises BundleTooLarge, NotGzip, EmptyUpload or
    IncompleteUpload; nothing is kept from a refused upload.
    """
    storage = storage or default_storage
    submission_id = uuid.uuid4()
    name = bundle_name(submission_id, timezone.now())
    reader = HashingReader(_GzipCheckingSource(stream), limit=settings.NVMEDB_MAX_BUNDLE_BYTES)
    try:
        stored_name = storage.save(name, File(reader, name=name))
    except BaseException:
        _delete_quietly(storage, name)
        raise
    if expected_size is not None and 0 < reader.size != expected_size:
        _delete_quietly(storage, stored_name)
        raise IncompleteUpload(f"Only {reader.size} of the {expected_size} announced bytes arrived; send it again.")
    if reader.size == 0:
        _delete_quietly(storage, stored_name)
        raise EmptyUpload(
            "The request body is empty: send the bundle as application/octet-stream or multipart 'bundle'."
        )

    try:
        with transaction.atomic():
            submission = Submission.objects.create(
                id=submission_id,
                uploader=uploader,
                sha256=reader.sha256,
                size=reader.size,
                storage_name=stored_name,
                original_name=Path(original_name).name[:255],
            )
            SubmissionEvent.objects.create(submission=submission, to_status=SubmissionStatus.RECEIVED)
            transaction.on_commit(lambda: submission_enqueue(submission_id=submission.id))
    except IntegrityError:
        _delete_quietly(storage, stored_name)
        return Submission.objects.get(uploader=uploader, sha256=reader.sha256), False
    except DatabaseError:
        _delete_quietly(storage, stored_name)  # the database is away: nothing was acknowledged, keep nothing
        raise
    return submission, True
