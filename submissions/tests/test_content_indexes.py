"""The content checks' tables carry the indexes their lookups use and no other (migrations 0007 and 0008): one btree on
a fingerprint's digest (equality lookups, never LIKE) and one on a signature's direction, IOPS and largest latency
(range lookups), and
a submission's rows found through the unique constraint's index, which starts with the submission."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.tests.factories import SubmissionFactory
from submissions.lookups import rows_any_of, rows_within
from submissions.models import FioOutputFingerprint, MeasurementSignature

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def indexes(model) -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [model._meta.db_table])
        return dict(cursor.fetchall())


def plan(sql: str, params: list) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.parametrize(
    "model, column, unique",
    [
        (FioOutputFingerprint, "digest", "fingerprint_once_per_submission"),
        (MeasurementSignature, "direction, iops, max_latency_ns", "signature_once_per_output"),
    ],
)
def test_each_lookup_has_one_index_and_no_index_is_unused(model, column, unique):
    found = indexes(model)
    assert len(found) == 3, found  # the primary key, the unique constraint, the lookup's btree
    assert not any("pattern_ops" in definition for definition in found.values())
    assert found[unique].split("USING btree ")[1].startswith("(submission_id,")
    lookup = [definition for definition in found.values() if definition.endswith(f"USING btree ({column})")]
    assert len(lookup) == 1, found


def crowded_fingerprints() -> list:
    """40 submissions with 100 fingerprints each, every digest its own, the table analysed: the submissions."""
    submissions = [SubmissionFactory() for _ in range(40)]
    FioOutputFingerprint.objects.bulk_create(
        FioOutputFingerprint(submission=s, kind="bytes", digest=f"{i:064x}", path=f"fio/{i}.json")
        for i, s in enumerate(submissions * 100)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {FioOutputFingerprint._meta.db_table}")
    return submissions


def test_a_submissions_rows_and_a_digest_are_found_by_index():
    submissions = crowded_fingerprints()
    table = FioOutputFingerprint._meta.db_table
    by_submission = plan(f"SELECT id FROM {table} WHERE submission_id = %s", [submissions[3].pk])
    assert "fingerprint_once_per_submission" in by_submission, by_submission
    by_digest = plan(f"SELECT id FROM {table} WHERE digest = ANY(%s)", [[f"{7:064x}", f"{9:064x}"]])
    assert "fingerprint_digest" in by_digest, by_digest


def test_the_rows_sharing_a_submissions_digests_are_found_by_both_indexes_never_by_a_join():
    """content_rows sends a submission's digests as the array of a subquery: the subquery reads them by the unique
    constraint's index, once, then the digest index finds the rows sharing them; no join of the two."""
    submissions = crowded_fingerprints()
    own = FioOutputFingerprint.objects.filter(submission=submissions[3]).values("digest")
    with CaptureQueriesContext(connection) as queries:
        found = rows_any_of(FioOutputFingerprint.objects.all(), "digest", own, ("id", "digest"), lock=True)
    assert len(found) == 100
    (query,) = queries.captured_queries
    shown = plan(query["sql"], [])
    assert "fingerprint_once_per_submission" in shown and "fingerprint_digest" in shown, shown
    assert "Join" not in shown and "Nested Loop" not in shown, shown


def test_the_signatures_in_many_boxes_are_read_by_index_ranges_and_their_latency_checked_on_the_index():
    """rows_within on a crowded table: 40 submissions × 100 signatures; each box's IOPS range holds one signature of
    each of four submissions, and its latency range two of them. The rows come from the (direction, iops,
    max_latency_ns) index, the latency checked on its entries (an index condition, not a filter of rows read from the
    table), never a scan of the table, and are exactly those in a box."""
    submissions = [SubmissionFactory() for _ in range(40)]
    MeasurementSignature.objects.bulk_create(
        MeasurementSignature(
            submission=s,
            path=f"fio/{i}.json",
            direction="read",
            iops=1000.0 + i + n * 0.01,
            max_latency_ns=5000.0 + n % 2,
            values=[60.0],
        )
        for n, s in enumerate(submissions)
        for i in range(100)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {MeasurementSignature._meta.db_table}")
    boxes = [("read", ((1000.0 + i - 0.001, 1000.0 + i + 0.035), (4999.5, 5000.5))) for i in range(0, 100, 7)]
    columns = ("id", "iops")
    with CaptureQueriesContext(connection) as queries:
        found = rows_within(
            MeasurementSignature.objects.all(), "direction", ("iops", "max_latency_ns"), boxes, columns, lock=True
        )
    wanted = [1000.0 + i + n * 0.01 for i in range(0, 100, 7) for n in (0, 2)]
    expected = sorted(MeasurementSignature.objects.filter(iops__in=wanted).values_list(*columns))
    assert found == expected and len(found) == 15 * 2
    (query,) = queries.captured_queries
    shown = plan(query["sql"], [])
    assert "signature_iops_latency" in shown and "Seq Scan on submissions_measurementsignature" not in shown, shown
    conditions = [line for line in shown.splitlines() if "Index Cond" in line and "max_latency_ns" in line]
    assert conditions and not any("Filter" in line and "max_latency_ns" in line for line in shown.splitlines()), shown
