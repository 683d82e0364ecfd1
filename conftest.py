"""Fixtures and service checks shared by every test directory.

Tests that need a real service carry a marker (see pyproject.toml). Locally a missing service skips them with the
reason; in CI (CI=true) a missing service fails them, because CI installs and starts every service itself. CI runs the
suite twice (see .ci/run): once as a newcomer's `make test` (SQLite, no Redis) and once with PostgreSQL and Redis;
NVMEDB_TEST_SERVICES names the services a pass must have (default: all), the others are skipped with the reason.
"""

import gc
import os
import shutil
import socket
from pathlib import Path
from urllib.parse import urlparse

import pytest

REPO_ROOT = Path(__file__).resolve().parent
# beside the project root; NVMEDB_SHARED_SAMPLES points elsewhere (a git worktree sits one level deeper)
SHARED_SAMPLES = Path(os.environ.get("NVMEDB_SHARED_SAMPLES") or REPO_ROOT.parent / "shared" / "samples")
CHROMIUM = Path("/usr/bin/chromium")
IN_CI = os.environ.get("CI", "").lower() == "true"
SERVICE_MARKERS = ("fio", "postgres", "redis", "celery_worker", "browser")


def _required_services() -> set[str]:
    """The services whose absence fails a test rather than skipping it: none locally, in CI those of this pass."""
    if not IN_CI:
        return set()
    named = os.environ.get("NVMEDB_TEST_SERVICES", "").strip()
    if not named:
        return set(SERVICE_MARKERS)
    services = {name.strip() for name in named.split(",") if name.strip()}
    unknown = services - set(SERVICE_MARKERS)
    if unknown:
        raise pytest.UsageError(f"NVMEDB_TEST_SERVICES names unknown services: {', '.join(sorted(unknown))}")
    if "redis" in services:
        services.add("celery_worker")
    return services


REQUIRED_SERVICES = _required_services()


def _redis_reachable(url: str) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "localhost", parsed.port or 6379), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _missing_service(marker: str) -> str | None:
    """Why the service behind `marker` is unavailable, or None when it is there."""
    if marker == "fio" and not shutil.which("fio"):
        return "fio is not installed (apt-get install fio)"
    if marker == "postgres" and not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        return "DATABASE_URL does not point at PostgreSQL"
    if marker in ("redis", "celery_worker"):
        url = os.environ.get("REDIS_URL", "")
        if not url:
            return "REDIS_URL is not set"
        if not _redis_reachable(url):
            return f"no Redis answers at {url}"
    if marker == "browser":
        if not CHROMIUM.exists():
            return "Debian's chromium is not installed at /usr/bin/chromium (apt-get install chromium)"
        try:
            import playwright  # noqa: F401
        except ImportError:
            return "the playwright Python package is not installed"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in SERVICE_MARKERS:
        if item.get_closest_marker(marker) is None:
            continue
        reason = _missing_service(marker)
        if reason:
            if marker in REQUIRED_SERVICES:
                pytest.fail(f"CI must provide this service: {reason}")
            pytest.skip(reason)


@pytest.fixture
def collector_on():
    """The cycle collector on for the test (nvmedb.collector's pauses must hand it back), as it was after."""
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.fixture(scope="session")
def shared_samples() -> Path:
    """The real tool outputs in ../shared/samples/ (outside the repository; never copied into it)."""
    if not SHARED_SAMPLES.is_dir():
        pytest.skip(f"shared samples folder not found at {SHARED_SAMPLES} (it sits beside the project root)")
    return SHARED_SAMPLES


# --- object storage: a real S3-compatible server (moto's) on loopback ----------------------------------------------


@pytest.fixture(scope="session")
def s3_server():
    from tests.s3server import S3Server

    server = S3Server().start()
    yield server
    server.stop()


@pytest.fixture
def object_storage(settings, s3_server):
    """Bundles and releases of this test in a bucket of their own on the S3 server; returns (server, bucket)."""
    bucket = s3_server.new_bucket()
    settings.STORAGES = {**settings.STORAGES, **s3_server.storages(bucket)}
    return s3_server, bucket
