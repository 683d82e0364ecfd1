"""`field__any_of=values` finds exactly what `field__in=values` finds, on SQLite and on PostgreSQL (one array); and
`rows_within` finds the rows in a list of ranges (one query on PostgreSQL, several elsewhere)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.tests.factories import SubmissionFactory
from submissions.models import FioOutputFingerprint

pytestmark = pytest.mark.django_db


def test_any_of_matches_what_in_matches():
    submission = SubmissionFactory()
    for number, key in enumerate(("b:1", "b:2", "b:3", "it's", 'say "x"')):
        FioOutputFingerprint.objects.create(submission=submission, kind="bytes", digest=key, path=f"fio/{number}.json")
    for wanted in (["b:1", "b:3", "missing"], ["it's", 'say "x"'], [], ["b:2"] * 3):
        plain = set(FioOutputFingerprint.objects.filter(digest__in=wanted).values_list("digest", flat=True))
        with CaptureQueriesContext(connection) as queries:
            found = set(FioOutputFingerprint.objects.filter(digest__any_of=wanted).values_list("digest", flat=True))
        assert found == plain
        if connection.vendor == "postgresql" and wanted:
            assert "= ANY(" in queries[0]["sql"]


def test_awkward_values_and_a_subquery_find_what_in_finds():
    """The list goes as the text of one array on PostgreSQL: quotes, backslashes, commas, braces, blanks and the word
    NULL are values like any other. A QuerySet of one column goes as a subquery (its array on PostgreSQL)."""
    submission = SubmissionFactory()
    keys = ("a,b", "{x}", " s ", "", "NULL", "back\\slash", 'q"uote', "it's", "read:12")
    for number, key in enumerate(keys):
        FioOutputFingerprint.objects.create(submission=submission, kind="bytes", digest=key, path=f"fio/{number}.json")
    FioOutputFingerprint.objects.create(submission=SubmissionFactory(), kind="bytes", digest="other", path="x")
    for wanted in ([*keys, "missing"], ["NULL", "", "{x}"], ["back\\slash"], ["a", "b"]):
        plain = sorted(FioOutputFingerprint.objects.filter(digest__in=wanted).values_list("digest", flat=True))
        assert (
            sorted(FioOutputFingerprint.objects.filter(digest__any_of=wanted).values_list("digest", flat=True)) == plain
        )
    own_keys = FioOutputFingerprint.objects.filter(submission=submission).values("digest")
    with CaptureQueriesContext(connection) as queries:
        found = sorted(FioOutputFingerprint.objects.filter(digest__any_of=own_keys).values_list("digest", flat=True))
    assert found == sorted(keys)
    if connection.vendor == "postgresql":
        assert "= ANY(ARRAY(SELECT" in queries[0]["sql"]


def test_a_long_list_goes_in_one_array_on_postgresql_and_in_chunks_elsewhere(monkeypatch):
    from submissions import lookups

    monkeypatch.setattr(lookups, "CHUNK", 2)
    values = [f"k{i}" for i in range(5)]
    parts = lookups.chunks(values)
    assert [v for part in parts for v in part] == values
    assert len(parts) == (1 if connection.vendor == "postgresql" else 3)
    assert lookups.chunks([]) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("split", [False, True])
def test_rows_any_of_reads_and_locks_exactly_the_rows_named(monkeypatch, split):
    """Every named row and no other, in id order, in one query or over several chunks (rows gathered, then locked by
    id): another connection finds the named rows locked and the others free until the transaction ends."""
    from django.db import transaction

    from submissions import lookups

    if split:  # the chunked path, on any database
        monkeypatch.setattr(lookups, "chunks", lambda values: [values[i : i + 2] for i in range(0, len(values), 2)])
        monkeypatch.setattr(lookups, "CHUNK", 2)
    submission = SubmissionFactory()
    rows = {
        key: FioOutputFingerprint.objects.create(
            submission=submission, kind="bytes", digest=key, path=f"fio/{key}.json"
        ).pk
        for key in ("a", "b", "c", "d", "e")
    }
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        found = lookups.rows_any_of(
            FioOutputFingerprint.objects.all(),
            "digest",
            ["e", "a", "c", "missing"],
            ("id", "digest", "path"),
            lock=True,
        )
        assert found == [(rows[key], key, f"fio/{key}.json") for key in ("a", "c", "e")]
        if connection.vendor != "postgresql":
            assert not any("FOR UPDATE" in q["sql"] for q in queries)  # SQLite has no row locks
            return
        assert all("ORDER BY" in q["sql"] for q in queries if "FOR UPDATE" in q["sql"])
        locked = {key for key, pk in rows.items() if _locked_elsewhere(FioOutputFingerprint, pk)}
    assert locked == {"a", "c", "e"}
    assert not any(_locked_elsewhere(FioOutputFingerprint, pk) for pk in rows.values())


def _locked_elsewhere(model, pk: int) -> bool:
    """Whether another connection finds the row locked (FOR UPDATE NOWAIT fails)."""
    import psycopg

    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"], port=settings["PORT"] or 5432, user=settings["USER"], password=settings["PASSWORD"],
        dbname=settings["NAME"], autocommit=False,
    ) as other:  # fmt: skip
        try:
            other.execute(f"SELECT id FROM {model._meta.db_table} WHERE id = %s FOR UPDATE NOWAIT", [pk])
        except psycopg.errors.LockNotAvailable:
            return True
        return False


@pytest.mark.parametrize("split", [False, True])
def test_rows_any_of_without_lock_reads_the_same_rows_and_locks_none(monkeypatch, split):
    from submissions import lookups

    if split:
        monkeypatch.setattr(lookups, "chunks", lambda values: [values[i : i + 2] for i in range(0, len(values), 2)])
    submission = SubmissionFactory()
    made = [
        FioOutputFingerprint.objects.create(
            submission=submission, kind=f"kind-{index}", digest=key, path=f"fio/{index}.json"
        ).pk
        for index, key in enumerate(("b", "a", "b", "c"))
    ]
    with CaptureQueriesContext(connection) as queries:
        found = lookups.rows_any_of(
            FioOutputFingerprint.objects.all(), "digest", ["b", "a"], ("id", "digest"), lock=False
        )
    assert found == [(made[0], "b"), (made[1], "a"), (made[2], "b")]
    assert not any("FOR UPDATE" in q["sql"] for q in queries)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("split", [False, True])
def test_rows_within_reads_and_locks_exactly_the_rows_in_a_box(monkeypatch, split):
    """Every row whose group is a box's and whose numbers lie in its bounds, edges included, a number the box does not
    bound free (a null too), each row once where boxes overlap, in id order, in one query or several; with lock,
    another connection finds those rows locked and the others free (PostgreSQL)."""
    from django.db import transaction

    from submissions import lookups
    from submissions.models import MeasurementSignature

    if split:
        monkeypatch.setattr(lookups, "RANGES_PER_QUERY", 1)
    submission = SubmissionFactory()
    made = {
        (direction, iops, latency): MeasurementSignature.objects.create(
            submission=submission,
            path=f"fio/{iops}-{latency}.json",
            direction=direction,
            iops=iops,
            max_latency_ns=latency,
            values=[iops],
        ).pk
        for direction in ("read", "write")
        for iops in (9.5, 10.0, 10.5, 11.0, 20.0)
        for latency in (1.0, 2.0, None)
    }
    boxes = [
        ("read", ((10.0, 10.5), (1.0, 1.5))),
        ("read", ((10.4, 11.0), (0.5, 1.0))),  # overlaps the first: its rows once
        ("write", ((19.0, 21.0),)),  # any latency, none too
        ("x", ((0, 99),)),
        ("read", ((10.0, 10.5), (1.0, 1.5))),  # the first again
    ]
    wanted = [("read", 10.0, 1.0), ("read", 10.5, 1.0), ("read", 11.0, 1.0)]
    wanted += [("write", 20.0, latency) for latency in (1.0, 2.0, None)]
    with transaction.atomic():
        found = lookups.rows_within(
            MeasurementSignature.objects.all(),
            "direction",
            ("iops", "max_latency_ns"),
            boxes,
            ("id", "direction", "iops", "max_latency_ns"),
            lock=True,
        )
        assert found == sorted((made[key], *key) for key in wanted)
        if connection.vendor != "postgresql":
            return
        locked = {key for key, pk in made.items() if _locked_elsewhere(MeasurementSignature, pk)}
    assert locked == set(wanted)
    everything = MeasurementSignature.objects.all()
    assert lookups.rows_within(everything, "direction", ("iops",), [], ("id",), lock=False) == []
