"""Migrations 0008 and 0009 give every stored signature its IOPS and largest latency columns from its stored figures
(the second and the seventh, null where it has none), and going back gives each its bucket key of 0005 again, on
SQLite and on PostgreSQL."""

import math

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from analysis.tests.factories import SubmissionFactory

BEFORE = ("submissions", "0007_plain_indexes_for_equality_lookups")
AFTER = ("submissions", "0009_signature_max_latency")


def migrate(target) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    executor.loader.build_graph()
    return executor


@pytest.mark.django_db(transaction=True)
def test_the_iops_come_from_the_stored_figures_and_the_keys_come_back():
    submission = SubmissionFactory()
    figures = {
        "read": [60.0, 35977.967034, 1.0e9, 6.0e10, 120.5, 100.25, 81234.5],
        "write": [60.0, 1e-3, 1.0, 2.0],
        "mixed": [60.0, 7.5, 1.0, 2.0, 3.0, 4.0, None],
    }
    try:
        old = migrate(BEFORE).loader.project_state([BEFORE]).apps.get_model("submissions", "MeasurementSignature")
        for direction, values in figures.items():
            old.objects.create(
                submission_id=submission.pk, path="fio/a.json", direction=direction, key="stale", values=values
            )

        new = migrate(AFTER).loader.project_state([AFTER]).apps.get_model("submissions", "MeasurementSignature")
        assert dict(new.objects.values_list("direction", "iops")) == {d: v[1] for d, v in figures.items()}
        latencies = dict(new.objects.values_list("direction", "max_latency_ns"))
        assert latencies == {"read": 81234.5, "write": None, "mixed": None}

        old = migrate(BEFORE).loader.project_state([BEFORE]).apps.get_model("submissions", "MeasurementSignature")
        bucket = math.log1p(1e-3)
        assert dict(old.objects.values_list("direction", "key")) == {
            d: f"{d}:{math.floor(math.log(v[1]) / bucket)}" for d, v in figures.items()
        }
    finally:
        migrate(AFTER)
