"""`field__any_of=values`: membership in a long list of values, sent to PostgreSQL as one array parameter.

Django compiles `field__in=values` to `IN (%s, %s, ...)`, preparing each value through the field on its own: for the
1,300 signature buckets a bundle's content check looks in, that compilation took as long as the queries. On
PostgreSQL `any_of` is `field = ANY(%s)` with the list as one array; elsewhere it is the plain `IN`. The values must
already be what the column holds (strings for a CharField): they are sent as they are."""

from django.db.models import CharField
from django.db.models.lookups import In


@CharField.register_lookup
class AnyOf(In):
    lookup_name = "any_of"

    def as_postgresql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s)", (*lhs_params, [str(value) for value in self.rhs])
