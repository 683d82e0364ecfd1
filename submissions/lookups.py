"""`field__any_of=values`: membership in a long list of values, sent to PostgreSQL as one array parameter.

Django compiles `field__in=values` to `IN (%s, %s, ...)`, preparing each value through the field on its own: for the
1,300 signature buckets a bundle's content check looks in, that compilation took as long as the queries. `any_of`
sends the values as they are, so they must already be what the column holds (strings for a CharField). On PostgreSQL
it is `field = ANY(%s::text[])` with the list as the text of one array, joined at once (psycopg's list dumper
quotes element by element, in Python); elsewhere it is the plain `IN`. The values may also be a QuerySet of
one column: on PostgreSQL `field = ANY(ARRAY(subquery))`, the subquery run once before the rows are looked up by the
column's index, never joined row by row.

`chunks` splits such a list for the database at hand (SQLite binds each value of an IN on its own, up to its limit of
parameters) and `rows_any_of` reads (and locks) the rows it names."""

from collections.abc import Sequence

from django.db import connection
from django.db.models import CharField, QuerySet
from django.db.models.lookups import In


@CharField.register_lookup
class AnyOf(In):
    lookup_name = "any_of"

    def get_prep_lookup(self):
        if isinstance(self.rhs, (list, tuple)):
            return self.rhs  # as they are: see the module docstring
        return super().get_prep_lookup()

    def as_postgresql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        if not self.rhs_is_direct_value():  # a subquery
            rhs, rhs_params = self.process_rhs(compiler, connection)
            return f"{lhs} = ANY(ARRAY{rhs})", (*lhs_params, *rhs_params)
        return f"{lhs} = ANY(%s::text[])", (*lhs_params, array_text(self.rhs))


def array_text(values) -> str:
    """`values` as the text of a PostgreSQL text array: each one quoted, its backslashes and double quotes escaped."""
    quoted = ('"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)
    return "{" + ",".join(quoted) + "}"


CHUNK = 500  # values per query elsewhere than on PostgreSQL: well under SQLite's limit of bound parameters


def chunks(values: list) -> list[list]:
    """`values` in as many lists as one query may take: all in one on PostgreSQL (one array parameter), CHUNK at a
    time elsewhere."""
    size = len(values) if connection.vendor == "postgresql" else CHUNK
    return [values[start : start + size] for start in range(0, len(values), max(size, 1))]


def rows_any_of(
    rows: QuerySet, field: str, values: list[str] | QuerySet, columns: Sequence[str], *, lock: bool
) -> list[tuple]:
    """`columns` (the first "id") of the rows of `rows` whose CharField `field` is one of `values` (a list, or a
    QuerySet of one column), in id order; with `lock`, each is locked (SELECT ... FOR UPDATE) until the transaction
    ends, in id order (one order over all chunks, the same in every transaction, so two that lock overlapping rows
    never deadlock). On PostgreSQL, and for a QuerySet, one query reads and locks them."""
    parts = [values] if isinstance(values, QuerySet) else chunks(values)
    if len(parts) == 1:
        found = rows.select_for_update() if lock else rows
        return list(found.filter(**{f"{field}__any_of": parts[0]}).order_by("id").values_list(*columns))
    by_id = {row[0]: row for part in parts for row in rows.filter(**{f"{field}__any_of": part}).values_list(*columns)}
    ordered = sorted(by_id)
    for start in range(0, len(ordered) if lock else 0, CHUNK):
        locked = rows.model.objects.select_for_update().filter(id__in=ordered[start : start + CHUNK])
        list(locked.order_by("id").values_list("id"))
    return [by_id[row_id] for row_id in ordered]
