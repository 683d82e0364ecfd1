import os
import shutil
import socket
import subprocess
import sys
import time

import httpx
import pytest

from conftest import IN_CI, REPO_ROOT


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_docker_compose_accepts_the_production_topology():
    if not shutil.which("docker-compose"):
        if IN_CI:
            pytest.fail("CI must install docker-compose to check docker-compose.yml")
        pytest.skip("docker-compose is not installed (apt-get install docker-compose)")
    env = dict(
        os.environ,
        SECRET_KEY="k",
        NVMEDB_SERIAL_HASH_KEY="h",
        POSTGRES_PASSWORD="p",
        NVMEDB_S3_SECRET_ACCESS_KEY="minio-secret",
    )
    result = subprocess.run(
        ["docker-compose", "-f", "docker-compose.yml", "config"], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    for service in ("web:", "worker:", "beat:", "postgres:", "redis:", "minio:", "bucket:"):
        assert service in result.stdout
    assert "NVMEDB_S3_BUCKET: nvmedb" in result.stdout and "NVMEDB_S3_ENDPOINT_URL: http://minio:9000" in result.stdout


def test_plain_runserver_serves_the_site_and_its_static_files_with_debug_off(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "DEBUG"}}
    env.update(NVMEDB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="nvmedb.settings.local")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=REPO_ROOT, env=env, check=True, capture_output=True)
    port = _free_port()
    server = subprocess.Popen(
        [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                home = httpx.get(base + "/")
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        assert home.status_code == 200
        assert "nvmedb-client run" in home.text
        css = httpx.get(base + "/static/css/site.css")
        assert css.status_code == 200
        assert "font" in css.text
    finally:
        server.terminate()
        server.wait(timeout=10)
