"""`field__any_of=values` finds exactly what `field__in=values` finds, on SQLite and on PostgreSQL (one array)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from analysis.tests.factories import SubmissionFactory
from submissions.models import MeasurementSignature

pytestmark = pytest.mark.django_db


def test_any_of_matches_what_in_matches():
    submission = SubmissionFactory()
    for number, key in enumerate(("b:1", "b:2", "b:3", "it's", 'say "x"')):
        MeasurementSignature.objects.create(
            submission=submission, path=f"fio/{number}.json", direction="read", key=key, values={}
        )
    for wanted in (["b:1", "b:3", "missing"], ["it's", 'say "x"'], [], ["b:2"] * 3):
        plain = set(MeasurementSignature.objects.filter(key__in=wanted).values_list("key", flat=True))
        with CaptureQueriesContext(connection) as queries:
            found = set(MeasurementSignature.objects.filter(key__any_of=wanted).values_list("key", flat=True))
        assert found == plain
        if connection.vendor == "postgresql" and wanted:
            assert "= ANY(" in queries[0]["sql"]
