"""`field__any_of=values`: membership in a long list of values, sent to PostgreSQL as one array parameter.

Django compiles `field__in=values` to `IN (%s, %s, ...)`, preparing each value through the field on its own: for the
1,300 signature buckets a bundle's content check looks in, that compilation took as long as the queries. `any_of`
sends the values as they are, so they must already be what the column holds (strings for a CharField). On PostgreSQL
it is `field = ANY(%s::text[])` with the list as the text of one array, joined at once (psycopg's list dumper
quotes element by element, in Python); elsewhere it is the plain `IN`. The values may also be a QuerySet of
one column: on PostgreSQL `field = ANY(ARRAY(subquery))`, the subquery run once before the rows are looked up by the
column's index, never joined row by row.

`chunks` splits such a list for the database at hand (SQLite binds each value of an IN on its own, up to its limit of
parameters) and `rows_any_of` reads (and locks) the rows it names. `rows_within` reads (and locks) the rows whose
number lies in one of many ranges, each read by an index range scan."""

from collections.abc import Iterable, Sequence

from django.db import connection
from django.db.models import BooleanField, CharField, Q, QuerySet
from django.db.models.expressions import RawSQL
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


def merged_ranges(ranges: Iterable[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """(group, low, high) ranges, the overlapping ones of a group merged: none of the result overlap, so no row lies
    in two of them."""
    merged: list[list] = []
    for group, low, high in sorted(ranges):
        if merged and merged[-1][0] == group and low <= merged[-1][2]:
            merged[-1][2] = max(merged[-1][2], high)
        else:
            merged.append([group, low, high])
    return [tuple(found) for found in merged]


RANGES_PER_QUERY = 200  # elsewhere than on PostgreSQL: SQLite parses a chain of ORs as a tree at most 1,000 deep


def rows_within(
    rows: QuerySet,
    group: str,
    number: str,
    ranges: list[tuple[str, float, float]],
    columns: Sequence[str],
    *,
    lock: bool,
) -> list[tuple]:
    """`columns` (the first "id") of the rows of `rows` whose `group` is a range's group and whose `number` lies in
    it (low and high included), in id order; `ranges` must not overlap (merged_ranges). With `lock`, each row is locked
    (SELECT ... FOR UPDATE) until the transaction ends, in id order. On PostgreSQL one query: the ranges as three
    arrays, each range read by an index range scan when (`group`, `number`) is indexed, then the rows found by id;
    elsewhere RANGES_PER_QUERY ranges per query (SQLite locks nothing: a write locks the whole database)."""
    if not ranges:
        return []
    if connection.vendor == "postgresql":
        quote = connection.ops.quote_name
        table = quote(rows.model._meta.db_table)
        group_column, number_column = (quote(rows.model._meta.get_field(name).column) for name in (group, number))
        groups, lows, highs = zip(*ranges, strict=True)
        # OFFSET 0 keeps the planner from flattening the per-range lookup into one join: it then hashed the ranges and
        # scanned the whole table (20 s for 672 ranges over 690,000 signatures, against an index range scan each)
        # only quoted names are formatted in; the ranges go as parameters
        within_range = f"{group_column} = r.g AND {number_column} BETWEEN r.low AND r.high"
        lookup = f"SELECT id FROM {table} WHERE {within_range} OFFSET 0"  # noqa: S608
        ranges_sql = "unnest(%s::text[], %s::float8[], %s::float8[]) AS r(g, low, high)"
        sql = f"{table}.{quote('id')} = ANY(ARRAY(SELECT found.id FROM {ranges_sql}, LATERAL ({lookup}) AS found))"  # noqa: S608
        within = RawSQL(  # noqa: S611 - as above
            sql,
            (array_text(groups), [float(low) for low in lows], [float(high) for high in highs]),
            output_field=BooleanField(),
        )
        found = rows.filter(within).order_by("id")
        return list((found.select_for_update(of=("self",)) if lock else found).values_list(*columns))
    found = []
    for start in range(0, len(ranges), RANGES_PER_QUERY):
        within = Q()
        for group_value, low, high in ranges[start : start + RANGES_PER_QUERY]:
            within |= Q(**{group: group_value, f"{number}__range": (low, high)})
        part = rows.filter(within)
        found.extend((part.select_for_update() if lock else part).values_list(*columns))
    return sorted(found, key=lambda row: row[0])
