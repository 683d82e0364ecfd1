"""nvmedb.bulk writes a JSON column's value as text PostgreSQL reads back to what the standard library's text gives,
and refuses what it refused (NaN and infinities are no JSON)."""

from __future__ import annotations

import datetime
import json
import math
import uuid

import psycopg
import pytest
from django.db import connection, transaction

from analysis.tests.factories import SubmissionFactory
from nvmedb import bulk
from submissions.models import MeasurementSignature

VALUES = [
    {"iops": 123456.789, "bw_bytes": 3_500_000_000, "lat_ns": {"mean": 81234.5, "p99": 1.5e-05}, "runtime": 60000},
    [1, 2.0, -0.0, 1e300, 1e-300, 0.1, True, False, "", "µs ✓ \\" + '"', {"nested": [[]]}],
    {"serial": 2**63 - 1, "big": 2**70, "negative": -(2**63)},  # the second beyond 64 bits
    {1: "an int key", "ok": None},  # a key that is no string; a null
    "a string",
    12,
]


@pytest.mark.parametrize("value", VALUES)
def test_the_text_reads_back_to_what_the_standard_librarys_text_reads_back_to(value):
    assert json.loads(bulk.json_text(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize("value", [{"ratio": math.nan}, [math.inf], {"t": -math.inf, "n": None}])
def test_nan_and_infinities_are_written_as_the_standard_library_writes_them(value):
    assert bulk.json_text(value) == json.dumps(value)  # "NaN", "Infinity": not silently a null


@pytest.mark.parametrize("value", [{"when": datetime.datetime(2026, 11, 27)}, {"d": datetime.date(2026, 1, 1)}])
def test_what_the_standard_library_refuses_is_refused(value):
    with pytest.raises(TypeError):
        bulk.json_text(value)


def test_a_uuid_is_the_one_value_written_where_the_standard_library_would_refuse_it():
    """orjson writes it as its string, with no option to refuse it; no caller stores one (the ingest would have
    failed on it before)."""
    unit = uuid.uuid4()
    with pytest.raises(TypeError):
        json.dumps({"id": unit})
    assert json.loads(bulk.json_text({"id": unit})) == {"id": str(unit)}


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgresql_stores_what_the_standard_librarys_text_stores_and_still_refuses_nan(monkeypatch):
    """jsonb keeps numbers as numerics (1e300 comes back an integer, -0.0 as 0): what matters is the same value
    stored for either text."""
    submission = SubmissionFactory()
    names = ["submission_id", "path", "direction", "iops", "values"]

    def stored(direction: str) -> list:
        bulk.insert_values(
            MeasurementSignature,
            names,
            [[submission.pk, f"fio/{i}.json", direction, 1.0, v] for i, v in enumerate(VALUES)],
        )
        found = MeasurementSignature.objects.filter(submission=submission, direction=direction)
        return [value for _, value in sorted(found.values_list("path", "values"))]

    fast = stored("read")
    monkeypatch.setattr(bulk, "json_text", json.dumps)
    assert fast == stored("write")
    monkeypatch.undo()
    with pytest.raises(psycopg.DataError, match='Token "NaN" is invalid'), transaction.atomic():
        bulk.insert_values(MeasurementSignature, names, [[submission.pk, "fio/nan.json", "read", 1.0, [math.nan]]])
    assert connection.vendor == "postgresql"
