"""Validated filters shared by the exports and the read API.

Query parameters (each optional; those marked * may repeat, and then match any of their values):

    drive*             drive model slug
    vendor*            vendor slug
    test*              iops, tp, lat, wsat, …; surface (the nvmedb extension): the surface tables, drives, submissions
    firmware*          firmware revision
    pcie_generation    1..7, the negotiated link's generation
    compliance         pts (PTS-compliant runs), quick (quick-profile runs), imported (imported runs)
    block_size_bytes*  block size in bytes, e.g. 4096            (measurements, steady_state)
    read_pct*          read share of the R/W mix, 0..100          (measurements, steady_state)
    in_steady_window   true: only rows inside the steady-state window; false: only rows outside  (measurements)

Exports also take `_size` (return at most this many rows) and `include=trial` (signed in: add your own trial runs,
file-target or quick-profile, which are never public). Anything else is an error, so a typo never silently
returns the whole table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db.models import Q, QuerySet

from analysis.models.results import Test
from analysis.selectors import public_test_runs
from datasets.tables import Table

MAX_VALUES_PER_PARAM = 50
MAX_TEXT_LENGTH = 220
COMPLIANCE = ("pts", "quick", "imported")
RUN_FILTERS = ("drive", "vendor", "test", "firmware", "pcie_generation", "compliance")
CELL_FILTERS = ("block_size_bytes", "read_pct", "in_steady_window")
REPEATABLE = frozenset({"drive", "vendor", "test", "firmware", "block_size_bytes", "read_pct"})
TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off"}


class FilterError(ValueError):
    """A query parameter the filters cannot accept; its message says which and why, for a 400 response."""


@dataclass
class Filters:
    values: dict[str, object] = field(default_factory=dict)
    size: int | None = None
    include_trial: bool = False  # asked for with include=trial; the view checks who asks
    trials_of: int | None = None  # the user id whose own trial rows are added to the public ones

    def run_q(self, prefix: str) -> Q:
        q = Q()
        v = self.values
        if "drive" in v:
            q &= Q(**{f"{prefix}drive_model__slug__in": v["drive"]})
        if "vendor" in v:
            q &= Q(**{f"{prefix}drive_model__vendor__slug__in": v["vendor"]})
        if "test" in v:
            q &= Q(**{f"{prefix}test__in": v["test"]})
        if "firmware" in v:
            q &= Q(**{f"{prefix}firmware__revision__in": v["firmware"]})
        if "pcie_generation" in v:
            q &= Q(**{f"{prefix}pcie_link__generation": v["pcie_generation"]})
        compliance = v.get("compliance")
        if compliance == "pts":
            q &= Q(**{f"{prefix}profile": "pts", f"{prefix}compliant": True, f"{prefix}target_kind": "device"})
        elif compliance == "quick":
            q &= Q(**{f"{prefix}profile": "quick"})
        elif compliance == "imported":
            q &= ~Q(**{f"{prefix}source": "client"})
        return q

    def cell_q(self) -> Q:
        q = Q()
        if "block_size_bytes" in self.values:
            q &= Q(block_size_bytes__in=self.values["block_size_bytes"])
        if "read_pct" in self.values:
            q &= Q(read_pct__in=self.values["read_pct"])
        if "in_steady_window" in self.values:
            q &= Q(in_steady_window=self.values["in_steady_window"])
        return q

    def has_run_filters(self) -> bool:
        return any(name in self.values for name in RUN_FILTERS)


def _text(name: str, raw: str) -> str:
    value = raw.strip()
    if not value:
        raise FilterError(f"{name} must not be empty.")
    if len(value) > MAX_TEXT_LENGTH:
        raise FilterError(f"{name} is too long (at most {MAX_TEXT_LENGTH} characters).")
    return value


def _integer(name: str, raw: str, low: int, high: int, what: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise FilterError(f"{name} must be {what}, got {raw[:40]!r}.") from None
    if not low <= value <= high:
        raise FilterError(f"{name} must be between {low} and {high}, got {value}.")
    return value


def _boolean(name: str, raw: str) -> bool:
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise FilterError(f"{name} must be true or false, got {raw[:40]!r}.")


def _choice(name: str, raw: str, choices) -> str:
    value = raw.strip()
    if value not in choices:
        raise FilterError(f"{name} must be one of {', '.join(choices)}; got {raw[:40]!r}.")
    return value


def _clean_one(name: str, raw: str):
    if name in ("drive", "vendor", "firmware"):
        return _text(name, raw)
    if name == "test":
        return _choice(name, raw, Test.values)
    if name == "compliance":
        return _choice(name, raw, COMPLIANCE)
    if name == "pcie_generation":
        return _integer(name, raw, 1, 7, "a PCIe generation number (1..7)")
    if name == "block_size_bytes":
        return _integer(name, raw, 1, 2**31 - 1, "a whole number of bytes, e.g. 4096")
    if name == "read_pct":
        return _integer(name, raw, 0, 100, "a whole percentage 0..100")
    return _boolean(name, raw)


def allowed_filters(table: Table) -> tuple[str, ...]:
    return RUN_FILTERS + tuple(name for name in CELL_FILTERS if name in table.cell_filters)


def parse(
    table: Table,
    params: Mapping,
    *,
    control: frozenset[str] = frozenset({"_size"}),
    ignore: frozenset[str] = frozenset(),
) -> Filters:
    """Validate `params` (a QueryDict or a mapping of name -> list of strings) for `table`. Raises FilterError."""
    allowed = allowed_filters(table)
    filters = Filters()
    for name in params:
        values = params.getlist(name) if hasattr(params, "getlist") else list(params[name])
        if name in ignore:
            continue
        if name in control:
            if name == "_size":
                filters.size = _integer("_size", values[-1], 1, 10**9, "a positive whole number of rows")
            elif name == "include":
                filters.include_trial = _choice("include", values[-1], ("trial",)) == "trial"
            continue
        if name not in allowed:
            if name in RUN_FILTERS + CELL_FILTERS:
                raise FilterError(f"{name} does not apply to the {table.name} table.")
            known = ", ".join(sorted(allowed + tuple(control)))
            raise FilterError(f"Unknown parameter {name[:40]!r}. This table takes: {known}.")
        if len(values) > 1 and name not in REPEATABLE:
            raise FilterError(f"{name} may be given only once.")
        if len(values) > MAX_VALUES_PER_PARAM:
            raise FilterError(f"{name} may be given at most {MAX_VALUES_PER_PARAM} times.")
        cleaned = [_clean_one(name, raw) for raw in values]
        filters.values[name] = cleaned if name in REPEATABLE else cleaned[0]
    return filters


def filtered_queryset(table: Table, filters: Filters) -> QuerySet:
    """The table's public rows that match `filters`, in a stable order (by id), not yet reduced to columns."""
    queryset = table.base_queryset(trials_of=filters.trials_of)
    if table.run_prefix is not None:
        queryset = queryset.filter(filters.run_q(table.run_prefix))
    elif filters.has_run_filters():
        runs = public_test_runs(trials_of=filters.trials_of).filter(filters.run_q(""))
        field, key = table.runs_key or ("pk", "drive_model_id" if table.name == "drives" else "submission_id")
        queryset = queryset.filter(**{f"{field}__in": runs.values(key)})
    if table.cell_filters:
        queryset = queryset.filter(filters.cell_q())
    return queryset.order_by(*table.ordering)


def rows_queryset(table: Table, filters: Filters) -> QuerySet:
    """Tuples in the table's column order."""
    queryset = filtered_queryset(table, filters).values_list(*[column.source for column in table.columns])
    if filters.size is not None:
        queryset = queryset[: filters.size]
    return queryset
