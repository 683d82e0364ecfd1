"""A unit's figures carry the indexes their lookups use and no other (migration 0027): the lookup by drive, metric
and unit (which also serves every lookup by drive), the fit's (its figures go with it), and a held submission's,
kept only for the rows that have one: a refit writes thousands of public rows, none of which needs an entry there.
Neither the drive nor the fit is a checked reference (migrations 0027, 0029): the refit writes a fit's rows in the
transaction that saves it, and the ORM's cascade removes them with their drive or fit."""

import pytest
from django.db import connection, transaction

from analysis.models import FactorUnitFigures

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]
TABLE = FactorUnitFigures._meta.db_table


def indexes() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [TABLE])
        return {name: definition.split(" USING btree ")[1] for name, definition in cursor.fetchall()}


def test_no_index_is_redundant_and_the_held_one_is_partial():
    found = indexes()
    assert sorted(found.values()) == sorted(
        ["(id)", "(drive_model_id, metric, unit_key)", "(fit_id)", "(submission_id) WHERE (submission_id IS NOT NULL)"]
    ), found


@pytest.mark.parametrize(
    "where, params",
    [
        ("submission_id = %s", ["00000000-0000-0000-0000-000000000001"]),
        ("submission_id IN (%s, %s)", ["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"]),
    ],
)
def test_a_held_submissions_figures_are_found_through_the_partial_index(where, params):
    """How a held refit and a submission's deletion find them: the planner can prove the index's condition."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN DELETE FROM {TABLE} WHERE {where}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "factor_unit_figures_held" in plan, plan


def test_only_the_submission_is_a_checked_reference():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.attname, c.confrelid::regclass::text FROM pg_constraint c JOIN pg_attribute a"
            " ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] WHERE c.conrelid = %s::regclass AND c.contype = 'f'",
            [TABLE],
        )
        assert sorted(cursor.fetchall()) == [("submission_id", "submissions_submission")]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.attname FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid"
            " AND a.attnum = c.conkey[1] WHERE c.conrelid = 'analysis_factorfitsummary'::regclass AND c.contype = 'f'"
        )
        assert cursor.fetchall() == [("drive_model_id",)]
