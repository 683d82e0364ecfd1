"""A large upload over real HTTP goes to storage in chunks: neither the site nor the client holds it whole."""

import hashlib
import os
import tracemalloc

import pytest

from nvmedb_client.api import NvmedbApi
from submissions import services
from submissions.models import Submission

MIB = 1024 * 1024


@pytest.fixture
def large_body(tmp_path):
    path = tmp_path / "large.nvmedb.tar.gz"
    digest = hashlib.sha256()
    with path.open("wb") as out:
        chunk = b"\x1f\x8b" + os.urandom(MIB - 2)
        for _ in range(48):
            out.write(chunk)
            digest.update(chunk)
            chunk = os.urandom(MIB)
    return path, digest.hexdigest()


def test_a_48_mib_upload_never_sits_whole_in_memory(live_server, large_body, bundle_storage, transactional_db):
    path, sha256 = large_body
    user = services.user_create(username="big", password="big-password-1")
    _, token = services.api_token_create(user=user)
    tracemalloc.start()
    try:
        with NvmedbApi(live_server.url, token) as api:
            submission, created = api.upload(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert created
    stored = Submission.objects.get(pk=submission["id"])
    assert stored.sha256 == sha256
    assert (bundle_storage / stored.storage_name).stat().st_size == 48 * MIB
    # Site and client share this process; both together stayed far below the body's size.
    assert peak < 16 * MIB, f"peak Python allocation {peak / MIB:.1f} MiB for a 48 MiB upload"


def test_a_body_cut_short_is_refused_and_nothing_is_kept(live_server, bundle_storage, transactional_db):
    import socket
    from urllib.parse import urlparse

    user = services.user_create(username="cut", password="cut-password-1")
    _, token = services.api_token_create(user=user)
    address = urlparse(live_server.url)
    body = b"\x1f\x8b" + b"x" * 498
    head = (
        f"POST /api/v1/submissions/ HTTP/1.1\r\nHost: {address.netloc}\r\nAuthorization: Token {token}\r\n"
        "Content-Type: application/octet-stream\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
        sock.sendall(head + body)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"incomplete_body" in answer
    assert Submission.objects.count() == 0
    assert not [p for p in bundle_storage.rglob("*") if p.is_file()]
