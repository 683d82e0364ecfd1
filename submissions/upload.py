"""Reading an upload in chunks: hashing and counting as it goes, and stopping as soon as it is too large."""

import hashlib
from typing import BinaryIO

from django.core.files.uploadhandler import TemporaryFileUploadHandler

CHUNK_BYTES = 1024 * 1024
# Room for multipart boundaries and headers on top of the bundle itself.
MULTIPART_OVERHEAD_BYTES = 64 * 1024


class BundleTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"The bundle is larger than this site accepts ({limit} bytes).")


class HashingReader:
    """A read-only file object over `source` that hashes what passes through and enforces `limit`.

    Storage backends read it in chunks, so the bundle goes to storage without ever being held whole in memory.
    """

    def __init__(self, source: BinaryIO, *, limit: int) -> None:
        self._source = source
        self._limit = limit
        self._hash = hashlib.sha256()
        self.size = 0

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes, fewer only at the end (an S3 upload takes a short read for the end of the body);
        without a size, the next CHUNK_BYTES, so that nothing reads the whole body into memory."""
        if size is None or size < 0:
            size = CHUNK_BYTES
        pieces = []
        wanted = size
        while wanted > 0:
            data = self._source.read(min(wanted, CHUNK_BYTES))
            if not data:
                break
            self.size += len(data)
            if self.size > self._limit:
                raise BundleTooLarge(self._limit)
            self._hash.update(data)
            pieces.append(data)
            wanted -= len(data)
        return b"".join(pieces)

    # A one-way stream: storage backends read it once, front to back (an upload to a bucket in parts).
    closed = False

    def seekable(self) -> bool:
        return False

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()


class LimitedTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    """Multipart uploads go to a temporary file on disk (never memory) and stop at the site's size limit."""

    def __init__(self, request=None, *, limit: int) -> None:
        super().__init__(request)
        self._limit = limit
        self._received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self._received += len(raw_data)
        if self._received > self._limit:
            raise BundleTooLarge(self._limit)
        return super().receive_data_chunk(raw_data, start)
