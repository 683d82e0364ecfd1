"""Fast inserts of many rows of one model.

bulk_create is the portable path. On PostgreSQL, rows go through COPY instead: for the ~430 measurements of a full
PTS bundle, bulk_create spends ~100 ms adapting parameters in Python while COPY takes ~10 ms (measured with
bench/ingest_benchmark.py's bundle on PostgreSQL 15), and ingest speed is a stated target.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connection
from django.db.models import JSONField, Model

from nvmedb.json_field import json_text


def insert_rows(rows: Sequence[Model], *, batch_size: int = 1000) -> list[Model]:
    """Insert `rows` (all of one model, ids unset) and return them with their ids set."""
    if not rows:
        return []
    if connection.vendor != "postgresql":
        return type(rows[0]).objects.bulk_create(rows, batch_size=batch_size)
    model = type(rows[0])
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    with connection.cursor() as cursor:
        ids = _reserve_ids(cursor, model, len(rows))
        values = ([row_id, *(getattr(row, f.attname) for f in fields)] for row_id, row in zip(ids, rows, strict=True))
        _copy(cursor, model, [model._meta.pk, *fields], values)
    for row_id, row in zip(ids, rows, strict=True):
        row.pk = row_id
        row._state.adding = False
        row._state.db = connection.alias
    return list(rows)


def _reserve_ids(cursor, model: type[Model], count: int) -> list:
    """`count` ids from the table's sequence: COPY gives the rows these, in order, so the mapping is exact."""
    cursor.execute(
        "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
        [model._meta.db_table, model._meta.pk.column, count],
    )
    return [row[0] for row in cursor.fetchall()]


def insert_values(model: type[Model], names: Sequence[str], rows: Iterable[Sequence]) -> None:
    """Insert rows of `model` given as the values of its fields `names` (attribute names), their ids from the
    table's sequence. Where the ids are not needed, no model instance is made per row: their __init__ (and its
    post_init signal) was most of the time of the ~1,500 content fingerprints of a bundle."""
    rows = list(rows)
    if not rows:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_create([model(**dict(zip(names, row, strict=True))) for row in rows], batch_size=1000)
        return
    by_attname = {f.attname: f for f in model._meta.concrete_fields}
    with connection.cursor() as cursor:
        _copy(cursor, model, [by_attname[name] for name in names], rows)


def insert_values_returning_ids(model: type[Model], names: Sequence[str], rows: Iterable[Sequence]) -> list:
    """insert_values, and the ids the rows were given, in their order: for rows whose ids are referenced (the
    ~430 measurements of a bundle, by their flags), where a model instance per row took longer than its COPY."""
    rows = list(rows)
    if not rows:
        return []
    if connection.vendor != "postgresql":
        instances = [model(**dict(zip(names, row, strict=True))) for row in rows]
        return [row.pk for row in model.objects.bulk_create(instances, batch_size=1000)]
    by_attname = {f.attname: f for f in model._meta.concrete_fields}
    with connection.cursor() as cursor:
        ids = _reserve_ids(cursor, model, len(rows))
        fields = [model._meta.pk, *(by_attname[name] for name in names)]
        _copy(cursor, model, fields, ((row_id, *row) for row_id, row in zip(ids, rows, strict=True)))
    return ids


def _copy(cursor, model: type[Model], fields: list, rows: Iterable[Sequence]) -> None:
    """COPY `rows` (values of `fields`, in order) into the model's table; a JSON field's value as its JSON text."""
    json_at = [i for i, f in enumerate(fields) if isinstance(f, JSONField)]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            if json_at:
                row = list(row)
                for i in json_at:
                    row[i] = json_text(row[i]) if row[i] is not None else None
            copy.write_row(row)
