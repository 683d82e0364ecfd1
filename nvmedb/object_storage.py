"""Bundles and releases in an S3-compatible bucket (AWS S3, MinIO, …): django-storages' S3Storage, plus

- reads as streams (`open_stream`): S3Storage.open() downloads the whole object first, which a raw-file page that
  needs only the bundle's manifest, or a 1 GiB bundle, must not pay;
- one listing request for the sizes of a release's files (`list_sizes`);
- short connection timeouts and few retries, so an unreachable bucket answers in seconds, not minutes;
- every outage (refused or dropped connection, timeout, the server's 5xx or throttling, a missing bucket) raised as
  nvmedb.storage.StorageUnavailable, so callers tell it apart from a bad bundle.
"""

from __future__ import annotations

import functools
import io
import posixpath
from typing import BinaryIO

from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, PartialCredentialsError
from storages.backends.s3 import S3Storage
from storages.utils import clean_name

from nvmedb.storage import StorageUnavailable

READ_BUFFER_BYTES = 256 * 1024
# The server's own trouble, not the request's: worth trying again later.
OUTAGE_CODES = frozenset(
    {"SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "Throttling", "NoSuchBucket"}
)


def is_outage(exc: BaseException) -> bool:
    """Whether `exc`, raised by boto3, means the bucket is away (rather than a missing key or a bug)."""
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return False  # a deployment mistake; shown as the error it is
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return status >= 500 or error.get("Code") in OUTAGE_CODES
    return isinstance(exc, BotoCoreError)


def _not_found(exc: ClientError) -> bool:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status == 404 and exc.response.get("Error", {}).get("Code") != "NoSuchBucket"


def _translated(method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except StorageUnavailable:
            raise
        except Exception as exc:
            if is_outage(exc):
                # the message may reach a page: the cause (with the service's address) goes to the logs only
                raise StorageUnavailable(f"object storage did not answer ({type(exc).__name__})") from exc
            raise

    return wrapper


class _BodyReader(io.RawIOBase):
    """The body of a GetObject response as a raw binary stream; outages while reading become StorageUnavailable."""

    def __init__(self, body, name: str) -> None:
        self._body = body
        self.name = name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            data = self._body.read(len(buffer))
        except Exception as exc:
            if is_outage(exc) or isinstance(exc, OSError):
                raise StorageUnavailable(f"object storage stopped sending {self.name} ({type(exc).__name__})") from exc
            raise
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._body.close()
        super().close()


class ObjectStorage(S3Storage):
    """S3Storage with the additions in the module docstring. Extra options: connect_timeout and read_timeout
    (seconds) and max_attempts (requests per call, first included)."""

    def get_default_settings(self) -> dict:
        return {
            **super().get_default_settings(),
            # storage.open() downloads a whole object: past this it goes to a temporary file, not memory
            "max_memory_size": 8 * 1024**2,
            "connect_timeout": 5,
            "read_timeout": 60,
            "max_attempts": 3,
        }

    def __init__(self, **settings) -> None:
        super().__init__(**settings)
        if settings.get("transfer_config") is None:
            # An upload streams through in parts of 8 MiB; at most two sent at once and two more read ahead bound
            # what one upload holds in memory (~32 MiB; boto3's defaults allow ~80 MiB).
            self.transfer_config = TransferConfig(max_concurrency=2)
            self.transfer_config.max_in_memory_upload_chunks = 2
        self.client_config = self.client_config.merge(
            Config(
                connect_timeout=self.connect_timeout,
                read_timeout=self.read_timeout,
                retries={"max_attempts": self.max_attempts, "mode": "standard"},
            )
        )

    def key(self, name: str) -> str:
        return self._normalize_name(clean_name(name))

    @_translated
    def open_stream(self, name: str) -> BinaryIO:
        try:
            response = self.connection.meta.client.get_object(Bucket=self.bucket_name, Key=self.key(name))
        except ClientError as exc:
            if _not_found(exc):
                raise FileNotFoundError(f"no such object: {name}") from None
            raise
        return io.BufferedReader(_BodyReader(response["Body"], name), buffer_size=READ_BUFFER_BYTES)

    @_translated
    def list_sizes(self, directory: str) -> dict[str, int]:
        prefix = self.key(directory)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        sizes = {}
        pages = self.connection.meta.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket_name, Prefix=prefix, Delimiter="/"
        )
        for page in pages:
            for entry in page.get("Contents", ()):
                sizes[posixpath.relpath(entry["Key"], prefix)] = int(entry["Size"])
        return sizes

    _open = _translated(S3Storage._open)
    _save = _translated(S3Storage._save)
    delete = _translated(S3Storage.delete)
    exists = _translated(S3Storage.exists)
    listdir = _translated(S3Storage.listdir)
    size = _translated(S3Storage.size)
    get_modified_time = _translated(S3Storage.get_modified_time)
