"""A process that writes Parquet with the project's writer and reads it back exits 0, every time (pyarrow used to
abort at interpreter shutdown about one run in ten; see datasets/parquet.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import REPO_ROOT

RUNS = 20

SCRIPT = textwrap.dedent(
    """
    import datetime, django
    django.setup()
    from datasets import parquet, writers
    from datasets.tables import TABLES

    columns = TABLES["measurements"].columns
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    sample = {"integer": 7, "number": -5.5, "boolean": True, "string": "=HYPERLINK(1)", "datetime": when}
    rows = [tuple(sample[c.type] for c in columns)] * 20_000
    data = b"".join(writers.write_parquet(columns, rows))
    assert parquet.read_table(data).num_rows == len(rows)
    """
)


def test_a_parquet_writing_and_reading_process_exits_0_twenty_times_in_a_row(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "nvmedb.settings.test", "NVMEDB_VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)  # the script needs no database
    for run in range(RUNS):
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"run {run + 1} of {RUNS} exited {done.returncode}: {done.stderr[-2000:]}"


def test_build_release_exits_0_twenty_times_in_a_row(tmp_path, shared_samples):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "nvmedb.settings.local", "NVMEDB_VAR_DIR": str(tmp_path)}
    for name in ("DATABASE_URL", "REDIS_URL"):
        env.pop(name, None)  # SQLite in tmp_path and the file broker: a database of this test's own

    def manage(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "manage.py", *args]
        return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)

    assert manage("migrate", "-v0").returncode == 0
    imported = manage("import_results", "--format", "ssspt", str(shared_samples / "ssspt-hp-iops-1"))
    assert imported.returncode == 0, imported.stderr
    for run in range(RUNS):
        done = manage("build_release", "--force")
        assert done.returncode == 0, f"run {run + 1} of {RUNS} exited {done.returncode}: {done.stderr[-2000:]}"
        assert f"Built release {run + 1}: measurements" in done.stdout
