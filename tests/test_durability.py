"""nvmedb.durability: a transaction of derived rows commits without waiting for the WAL flush, and only it."""

import pytest
from django.db import connection, transaction

from nvmedb.durability import derived_rows_transaction, snapshot_transaction


def synchronous_commit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_outermost_derived_transaction_is_relaxed_and_the_setting_ends_with_it():
    assert synchronous_commit() == "on"
    with derived_rows_transaction():
        assert synchronous_commit() == "off"
    assert synchronous_commit() == "on"
    with transaction.atomic(), derived_rows_transaction():  # nested: the commit belongs to the outer transaction
        assert synchronous_commit() == "on"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_derived_transaction_leaves_the_setting_as_it_was():
    with pytest.raises(ZeroDivisionError), derived_rows_transaction():
        assert synchronous_commit() == "off"
        1 / 0  # noqa: B018
    assert synchronous_commit() == "on"


@pytest.mark.django_db(transaction=True)
def test_on_sqlite_it_is_a_plain_transaction():
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite case")
    with derived_rows_transaction():
        assert connection.in_atomic_block
    assert not connection.in_atomic_block


def isolation() -> tuple[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')")
        return cursor.fetchone()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_outermost_snapshot_transaction_reads_one_snapshot_and_writes_nothing():
    with snapshot_transaction():
        assert isolation() == ("repeatable read", "on")
    assert isolation() == ("read committed", "off")
    with transaction.atomic(), snapshot_transaction():  # nested: the outer transaction's level holds
        assert isolation() == ("read committed", "off")
