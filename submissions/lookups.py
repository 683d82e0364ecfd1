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
numbers lie in one of many boxes of ranges, each read by an index range scan."""

from collections.abc import Sequence

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


Box = tuple[str, tuple[tuple[float, float], ...]]  # a group, and (low, high) bounds of the first numbers


RANGES_PER_QUERY = 200  # elsewhere than on PostgreSQL: SQLite parses a chain of ORs as a tree at most 1,000 deep


def rows_within(
    rows: QuerySet, group: str, numbers: Sequence[str], boxes: list[Box], columns: Sequence[str], *, lock: bool
) -> list[tuple]:
    """`columns` (the first "id") of the rows of `rows` inside one of `boxes`, each row once, in id order: its `group`
    is the box's group and each of its first `numbers` lies within the box's bounds for it, edges included (a box
    may bound fewer numbers than there are: the others are free). With `lock`, each row is locked (SELECT ... FOR
    UPDATE) until the transaction ends, in id order. On PostgreSQL one query: the boxes as arrays, each read by an
    index range scan when (`group`, *`numbers`) is indexed (the first number bounds the scan, the others are checked
    on the index entries), then the rows found by id; elsewhere RANGES_PER_QUERY boxes per query (SQLite locks
    nothing: a write locks the whole database)."""
    boxes = sorted(set(boxes))
    if not boxes:
        return []
    if connection.vendor == "postgresql":
        within = RawSQL(*_boxes_sql(rows.model, group, numbers, boxes), output_field=BooleanField())  # noqa: S611
        found = rows.filter(within).order_by("id")
        return list((found.select_for_update(of=("self",)) if lock else found).values_list(*columns))
    found = {}
    for start in range(0, len(boxes), RANGES_PER_QUERY):
        within = Q()
        for group_value, bounds in boxes[start : start + RANGES_PER_QUERY]:
            ranges = {f"{number}__range": bound for number, bound in zip(numbers, bounds, strict=False)}
            within |= Q(**{group: group_value}, **ranges)
        part = rows.filter(within)
        found.update((row[0], row) for row in (part.select_for_update() if lock else part).values_list(*columns))
    return [found[row_id] for row_id in sorted(found)]


def _boxes_sql(model, group: str, numbers: Sequence[str], boxes: list[Box]) -> tuple[str, list]:
    """`id = ANY(ARRAY(...))` of the rows inside `boxes`, and its parameters: the boxes bounding as many numbers go
    as arrays (a group's, and each bound's lows and highs), unnested, each box looked up on its own. Only quoted
    names are formatted in; the boxes go as parameters."""
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    group_column = quote(model._meta.get_field(group).column)
    number_columns = [quote(model._meta.get_field(name).column) for name in numbers]
    branches, params = [], []
    for dimensions in sorted({len(bounds) for _, bounds in boxes}):
        same = [(group_value, bounds) for group_value, bounds in boxes if len(bounds) == dimensions]
        names = ["g", *(f"{side}{i}" for i in range(dimensions) for side in ("low", "high"))]
        arrays = ", ".join(["%s::text[]"] + ["%s::float8[]"] * (2 * dimensions))
        conditions = " AND ".join(
            [f"{group_column} = r.g"]
            + [f"{number_columns[i]} BETWEEN r.low{i} AND r.high{i}" for i in range(dimensions)]
        )
        # OFFSET 0 keeps the planner from flattening the per-box lookup into one join: it then hashed the boxes and
        # scanned the whole table (20 s for 672 boxes over 690,000 signatures, against an index range scan each)
        lookup = f"SELECT id FROM {table} WHERE {conditions} OFFSET 0"  # noqa: S608
        boxes_sql = f"unnest({arrays}) AS r({', '.join(names)})"
        branches.append(f"SELECT found.id FROM {boxes_sql}, LATERAL ({lookup}) AS found")  # noqa: S608
        params.append(array_text(group_value for group_value, _ in same))
        for i in range(dimensions):
            params.append([float(bounds[i][0]) for _, bounds in same])
            params.append([float(bounds[i][1]) for _, bounds in same])
    return f"{table}.{quote('id')} = ANY(ARRAY({' UNION ALL '.join(branches)}))", params
