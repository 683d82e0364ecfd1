"""Fast inserts of many rows of one model.

bulk_create is the portable path. On PostgreSQL, rows go through COPY instead: for the ~430 measurements of a full
PTS bundle, bulk_create spends ~100 ms adapting parameters in Python while COPY takes ~10 ms (measured with
bench/ingest_benchmark.py's bundle on PostgreSQL 15), and ingest speed is a stated target.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from django.db import connection
from django.db.models import JSONField, Model


def insert_rows(rows: Sequence[Model], *, batch_size: int = 1000) -> list[Model]:
    """Insert `rows` (all of one model, ids unset) and return them with their ids set."""
    if not rows:
        return []
    if connection.vendor != "postgresql":
        return type(rows[0]).objects.bulk_create(rows, batch_size=batch_size)
    model = type(rows[0])
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    pk = connection.ops.quote_name(model._meta.pk.column)
    converters = [(f.attname, isinstance(f, JSONField)) for f in fields]
    with connection.cursor() as cursor:
        # ids come from the sequence in COPY order; reserving them first makes the mapping exact
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, model._meta.pk.column, len(rows)],
        )
        ids = [row[0] for row in cursor.fetchall()]
        with cursor.cursor.copy(f"COPY {table} ({pk}, {columns}) FROM STDIN") as copy:
            for row_id, row in zip(ids, rows, strict=True):
                values = [row_id]
                for attname, is_json in converters:
                    value = getattr(row, attname)
                    values.append(json.dumps(value) if is_json and value is not None else value)
                copy.write_row(values)
    for row_id, row in zip(ids, rows, strict=True):
        row.pk = row_id
        row._state.adding = False
        row._state.db = connection.alias
    return list(rows)
