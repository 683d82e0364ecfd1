"""A float in a CSV reads the same from SQLite (Python's writers) as from PostgreSQL (COPY): float8out's spelling."""

import math
import random

import pytest
from django.db import connection

from datasets.float_text import postgres_float
from datasets.writers import csv_record

# as PostgreSQL 15 printed each (SELECT x::float8::text, extra_float_digits 1)
SPELLED_BY_POSTGRESQL = {
    1e14: "100000000000000", 1e15: "1e+15", 9.99e14: "999000000000000", 123456789012345.6: "123456789012345.6",
    1.5e15: "1.5e+15", 0.0001: "0.0001", 0.00012: "0.00012", 0.00001: "1e-05", 1.2e-05: "1.2e-05",
    12345678901234567890.0: "1.2345678901234567e+19", -0.0: "-0", 5e-324: "5e-324", 100000.0: "100000",
    1.7976931348623157e308: "1.7976931348623157e+308", -7.29479320578198e16: "-7.294793205781981e+16", 0.1: "0.1", 1 / 3: "0.3333333333333333", 2.5: "2.5",
    math.inf: "Infinity", -math.inf: "-Infinity", 1e16: "1e+16", 123.0: "123", -9.5e-05: "-9.5e-05",
}  # fmt: skip


def test_a_float_is_spelled_as_postgresql_spells_it():
    for value, spelled in SPELLED_BY_POSTGRESQL.items():
        assert postgres_float(value) == spelled, value
    assert postgres_float(math.nan) == "NaN"
    assert csv_record([5.0, 5, None, "x", 2.5e-7]) == "5,5,,x,2.5e-07"


def random_floats(count: int) -> list[float]:
    rng = random.Random(3)
    values = [rng.uniform(-1, 1) * 10 ** rng.uniform(-12, 22) for _ in range(count)]
    values += [float(round(v)) for v in values[: count // 4]]  # whole numbers, where ".0" goes
    values += [10.0**e for e in range(-8, 20)] + [-(10.0**e) for e in range(-8, 20)]
    values += [math.nextafter(1e15, 0), 1e15, math.nextafter(1e15, math.inf), math.nextafter(1e-4, 0), 1e-4]
    # whole numbers beyond 2^53, where repr's shortest digits can sit half-way to the next double
    values += [float(rng.randrange(2**53, 10**22)) * rng.choice((1, -1)) for _ in range(count // 2)]
    return values


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgresql_spells_every_float_as_postgres_float_does():
    values = random_floats(20_000)
    with connection.cursor() as cursor:
        cursor.execute("SELECT v::text FROM unnest(%s::float8[]) WITH ORDINALITY AS t(v, i) ORDER BY i", [values])
        spelled = [row[0] for row in cursor.fetchall()]
    assert [postgres_float(v) for v in values] == spelled
