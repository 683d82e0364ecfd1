"""Transactions of derived work: a snapshot its reads agree in (`snapshot_transaction`), and rows that can be
derived again committed without waiting for the write-ahead log's flush (`derived_rows_transaction`).

A refit replaces thousands of rows of figures (analysis.factor_effects), and nothing a contributor sent or was told
depends on when they reach the disk: its commit need not wait for the flush of their WAL (~3 ms of the commit on the
benchmark's drive on a virtual disk; more where an fsync is slower). Such a transaction is still atomic, and
PostgreSQL stays consistent; what a crash of the database server (not of a worker) within a few hundred milliseconds
of the commit can lose is that transaction whole, as if it had never run. The drive is then where it is while a
refit is queued: its `factors_version` below its `data_version`, its pages showing the fit before (a submission's
page tells its figures are being refreshed, by their digest), and `manage.py refresh_factor_effects --missing`, run at
every start, refits it. Never for the rows a contributor sent or a verdict told them: those wait for the flush.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from django.db import connection, transaction


def derived_rows_transaction() -> AbstractContextManager[None]:
    """`transaction.atomic()` whose commit does not wait for the WAL flush (`SET LOCAL synchronous_commit TO OFF`,
    PostgreSQL; SQLite has no such setting). Only when it is the outermost transaction: inside another, the commit
    is that transaction's, whose rows may be ones that must wait, so it is left as it is."""
    return _outermost_set("SET LOCAL synchronous_commit TO OFF")


def snapshot_transaction() -> AbstractContextManager[None]:
    """`transaction.atomic()` in which every query sees the same committed state: REPEATABLE READ, READ ONLY on
    PostgreSQL when it is the outermost transaction (the level must be set first thing; inside another transaction the
    outer one's level holds); a SQLite transaction is one snapshot already."""
    return _outermost_set("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")


@contextmanager
def _outermost_set(statement: str) -> Iterator[None]:
    """`transaction.atomic()` that runs `statement` first thing when it opens the outermost transaction on
    PostgreSQL; nested in another transaction, or on SQLite, a plain `atomic()`."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(statement)
        yield
