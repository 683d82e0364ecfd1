"""A real S3-compatible server for tests: moto's standalone server (installed from PyPI with `moto[server]`), listening
on a free loopback port. Its objects live in this test process, so the server can be stopped (the bucket becomes
unreachable) and started again on the same port with every object still there."""

from __future__ import annotations

import logging
import socket
import time
import uuid

import boto3
from botocore.config import Config

ACCESS_KEY = "nvmedb-test"
SECRET_KEY = "nvmedb-test-secret"
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class S3Server:
    def __init__(self) -> None:
        self.port = free_port()
        self._server = None

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        deadline = time.monotonic() + 10
        while True:  # answering once the socket accepts
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def client(self):
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=Config(retries={"max_attempts": 1}),
        )

    def new_bucket(self) -> str:
        name = f"nvmedb-test-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(entry["Key"] for page in pages for entry in page.get("Contents", ()))

    def read(self, bucket: str, key: str) -> bytes:
        return self.client().get_object(Bucket=bucket, Key=key)["Body"].read()

    def storages(self, bucket: str, *, endpoint_url: str | None = None) -> dict:
        """STORAGES entries for bundles and releases in `bucket`, as NVMEDB_S3_* would configure them."""
        from nvmedb.settings.storages import OBJECT_STORAGE, RELEASES_PREFIX, object_storage_options

        def options(location: str) -> dict:
            return {
                **object_storage_options(
                    bucket=bucket, endpoint_url=endpoint_url or self.endpoint_url, region=REGION, location=location
                ),
                "access_key": ACCESS_KEY,
                "secret_key": SECRET_KEY,
            }

        return {
            "default": {"BACKEND": OBJECT_STORAGE, "OPTIONS": options("")},
            "releases": {"BACKEND": OBJECT_STORAGE, "OPTIONS": options(RELEASES_PREFIX)},
        }

    def environment(self, bucket: str) -> dict[str, str]:
        """The environment that points another process's settings at `bucket`."""
        return {
            "NVMEDB_S3_BUCKET": bucket,
            "NVMEDB_S3_ENDPOINT_URL": self.endpoint_url,
            "NVMEDB_S3_REGION": REGION,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        }
