"""`field__any_of=values`: membership in a long list of values, sent to PostgreSQL as one array parameter.

Django compiles `field__in=values` to `IN (%s, %s, ...)`, preparing each value through the field on its own: for the
1,300 signature buckets a bundle's content check looks in, that compilation took as long as the queries. On
PostgreSQL `any_of` is `field = ANY(%s)` with the list as one array; elsewhere it is the plain `IN`. The values must
already be what the column holds (strings for a CharField): they are sent as they are.

`chunks` splits such a list for the database at hand (SQLite binds each value of an IN on its own, up to its limit of
parameters) and `lock_any_of` locks the rows it names."""

from django.db import connection
from django.db.models import CharField
from django.db.models.lookups import In


@CharField.register_lookup
class AnyOf(In):
    lookup_name = "any_of"

    def as_postgresql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s)", (*lhs_params, [str(value) for value in self.rhs])


CHUNK = 500  # values per query elsewhere than on PostgreSQL: well under SQLite's limit of bound parameters


def chunks(values: list) -> list[list]:
    """`values` in as many lists as one query may take: all in one on PostgreSQL (one array parameter), CHUNK at a
    time elsewhere."""
    size = len(values) if connection.vendor == "postgresql" else CHUNK
    return [values[start : start + size] for start in range(0, len(values), max(size, 1))]


def lock_any_of(model, field: str, values: list[str]) -> None:
    """Row locks (SELECT ... FOR UPDATE) on `model`'s rows whose CharField `field` is one of `values`, until the
    transaction ends, taken in id order (the order is one over all chunks, the same in every transaction, so two
    that lock overlapping rows never deadlock)."""
    parts = chunks(values)
    if len(parts) == 1:
        rows = model.objects.select_for_update().filter(**{f"{field}__any_of": parts[0]})
        list(rows.order_by("id").values_list("id"))
        return
    ids: set[int] = set()
    for part in parts:
        ids.update(model.objects.filter(**{f"{field}__any_of": part}).values_list("id", flat=True))
    ordered = sorted(ids)
    for start in range(0, len(ordered), CHUNK):
        rows = model.objects.select_for_update().filter(id__in=ordered[start : start + CHUNK])
        list(rows.order_by("id").values_list("id"))
