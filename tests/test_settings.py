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
