"""The page summary's large documents are stored lz4-compressed on PostgreSQL (migration 0025), and read back whole."""

from __future__ import annotations

import importlib

import pytest
from django.db import DatabaseError, connection, transaction

from analysis.models import DrivePageSummary
from analysis.tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]
migration = importlib.import_module("analysis.migrations.0025_page_summary_lz4_compression")


def server_has_lz4() -> bool:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL default_toast_compression = 'lz4'")
    except DatabaseError:  # a server built without lz4 refuses the setting
        return False
    return True


def compression_of(column: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attcompression FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s",
            [DrivePageSummary._meta.db_table, column],
        )
        return cursor.fetchone()[0]


def test_the_large_documents_are_compressed_with_lz4_and_read_back_whole():
    if not server_has_lz4():
        pytest.skip("this PostgreSQL has no lz4: the migration leaves pglz")
    assert {column: compression_of(column) for column in migration.COLUMNS} == dict.fromkeys(migration.COLUMNS, "l")
    assert compression_of("slug") == ""  # the others as they were
    drive = factories.DriveModelFactory()
    points = [{"unit": i, "value": i * 1.5, "label": f"unit {i} firmware FW{i % 7}"} for i in range(20_000)]
    DrivePageSummary.objects.create(
        drive_model=drive, format=1, version="v", data_version=1, slug=drive.slug, n_runs=1, n_submissions=1,
        n_units=1, pcie_generations="", run_kinds="", summary={}, compare={}, page={}, breakdowns={"points": points},
    )  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT pg_column_compression(breakdowns), pg_column_size(breakdowns) FROM {DrivePageSummary._meta.db_table}"
            " WHERE drive_model_id = %s",
            [drive.pk],
        )
        method, stored_bytes = cursor.fetchone()
    assert method == "lz4" and stored_bytes < 1_000_000  # compressed, not stored as it is
    assert DrivePageSummary.objects.get(drive_model=drive).breakdowns == {"points": points}
