"""What a published table is: its columns (name, Frictionless type, description, the row query's source, unit) and
how its rows are selected and filtered. The shared tables are declared in datasets.tables (and its tables_*
modules), each test's own in its reports/<test>/tables.py; all import these two types from here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db.models import QuerySet


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # Frictionless type
    description: str
    source: object  # an ORM lookup (str) or expression the row query selects
    unit: str = ""


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    description: str
    columns: tuple[Column, ...]
    # Called with trials_of=None (public rows) or a user id (public rows and that user's own trial rows).
    base_queryset: Callable[..., QuerySet]
    # Where the run-level filters (drive, vendor, test, firmware, PCIe generation, compliance) live, relative to
    # this table's rows; None when the table is filtered through the set of matching runs instead.
    run_prefix: str | None = None
    # Filters a table understands beyond the run-level ones.
    cell_filters: frozenset[str] = field(default_factory=frozenset)
    ordering: tuple[str, ...] = ("pk",)
    # Without run_prefix, run-level filters keep the rows whose `runs_key[0]` is a matching run's `runs_key[1]`
    # (None: a drive's pk for the drives table, a submission's pk otherwise).
    runs_key: tuple[str, str] | None = None

    @property
    def column_names(self) -> list[str]:
        return [column.name for column in self.columns]

    def column(self, name: str) -> Column:
        return next(column for column in self.columns if column.name == name)
