import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from conftest import REPO_ROOT
from nvmedb.env import env_bool, env_int, env_list


def test_env_bool_reads_the_usual_spellings(monkeypatch):
    for raw, expected in [("1", True), ("yes", True), ("On", True), ("0", False), ("false", False), ("", False)]:
        monkeypatch.setenv("NVMEDB_FLAG", raw)
        assert env_bool("NVMEDB_FLAG") is expected


def test_env_bool_rejects_a_value_it_cannot_understand(monkeypatch):
    monkeypatch.setenv("NVMEDB_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="NVMEDB_FLAG"):
        env_bool("NVMEDB_FLAG")


def test_env_int_names_the_variable_on_a_bad_value(monkeypatch):
    monkeypatch.setenv("NVMEDB_LIMIT", "12MB")
    with pytest.raises(ImproperlyConfigured, match="NVMEDB_LIMIT must be an integer"):
        env_int("NVMEDB_LIMIT", 1)


def test_env_list_splits_on_commas_and_drops_blanks(monkeypatch):
    monkeypatch.setenv("NVMEDB_HOSTS", "a.example, b.example,,")
    assert env_list("NVMEDB_HOSTS", []) == ["a.example", "b.example"]


def _import_settings(module: str, env: dict[str, str], tmp_path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "DEBUG"}}
    clean.update(env, NVMEDB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE=module)
    code = "from django.conf import settings; print(settings.DEBUG, settings.DATABASES['default']['ENGINE'])"
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=REPO_ROOT,
        env=clean,
        capture_output=True,
        text=True,
    )


def test_production_settings_refuse_to_start_without_a_secret_key(tmp_path):
    result = _import_settings("nvmedb.settings.production", {}, tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY must be set in production" in result.stderr


def test_embedded_defaults_are_sqlite_with_debug_off(tmp_path):
    result = _import_settings("nvmedb.settings.local", {}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "django.db.backends.sqlite3"]
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_database_url_switches_to_postgresql(tmp_path):
    result = _import_settings("nvmedb.settings.local", {"DATABASE_URL": "postgres://u:p@db:5432/nvmedb"}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[1] == "django.db.backends.postgresql"


def _production_check(env: dict[str, str], code: str, tmp_path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "DJANGO_"))}
    clean.update(
        {"SECRET_KEY": "x" * 50, "DATABASE_URL": "postgres://u:p@db:5432/nvmedb", "REDIS_URL": "redis://r:6379/0"},
        ALLOWED_HOSTS="testserver",
        NVMEDB_VAR_DIR=str(tmp_path),
        DJANGO_SETTINGS_MODULE="nvmedb.settings.production",
        **env,
    )
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=REPO_ROOT,
        env=clean,
        capture_output=True,
        text=True,
    )


# A request that needs neither the database nor Redis: the OpenAPI schema.
_REQUESTS = """
from django.test import Client
plain = Client().get("/api/schema/")
print(plain.status_code, plain.headers.get("Location"))
secure = Client().get("/api/schema/", headers={"X-Forwarded-Proto": "https"})
print(secure.status_code)
print(secure.headers.get("Strict-Transport-Security"))
print(secure.headers.get("Content-Security-Policy"))
"""


def test_production_redirects_to_https_and_sends_hsts_and_a_content_security_policy(tmp_path):
    result = _production_check({}, _REQUESTS, tmp_path)
    assert result.returncode == 0, result.stderr
    redirect, status, hsts, csp = result.stdout.splitlines()
    assert redirect == "301 https://testserver/api/schema/"
    assert status == "200"
    assert hsts == "max-age=31536000"
    assert "script-src 'self';" in csp and "frame-ancestors 'none'" in csp


def test_the_proxy_header_and_the_redirect_are_configurable(tmp_path):
    env = {"SECURE_PROXY_SSL_HEADER": "X-Scheme: https", "SECURE_HSTS_SECONDS": "600"}
    result = _production_check(env, _REQUESTS.replace("X-Forwarded-Proto", "X-Scheme"), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:3] == ["200", "max-age=600"]
    code = "from django.conf import settings; print(settings.SECURE_SSL_REDIRECT, settings.SECURE_PROXY_SSL_HEADER)"
    result = _production_check({"SECURE_SSL_REDIRECT": "false", "SECURE_PROXY_SSL_HEADER": ""}, code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False None"


def test_a_malformed_proxy_header_setting_stops_start_up(tmp_path):
    result = _production_check({"SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto"}, "", tmp_path)
    assert result.returncode != 0
    assert "SECURE_PROXY_SSL_HEADER must look like" in result.stderr


def test_database_connections_are_health_checked_in_every_environment():
    from django.conf import settings

    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True


def test_production_passes_djangos_deployment_checks(tmp_path):
    env = {"SECRET_KEY": "k3y-" + "a9Zq7-Xw" * 8}
    code = "from django.core.management import call_command; call_command('check', deploy=True, fail_level='WARNING')"
    result = _production_check(env, code, tmp_path)
    assert result.returncode == 0, result.stderr


def test_the_site_answers_a_browsers_favicon_request_with_its_icon(client):
    response = client.get("/favicon.ico", follow=True)
    assert response.status_code == 200
    assert b"<svg" in b"".join(response.streaming_content if response.streaming else [response.content])
