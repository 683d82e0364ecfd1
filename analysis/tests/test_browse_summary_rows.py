"""The summary rebuild's shortcuts held to the plain reads they replace: the light run rows built from value tuples
(run_rows.row_dicts) with the headline floats read without Django's converter on PostgreSQL (run_rows.HeadlineFloat)
are the rows `.values()` with a plain Cast gives, key order included; the list's run kinds read with the runs
(summaries.RUN_KIND_COLUMNS) are the ones `_run_kinds` asks the database for."""

from __future__ import annotations

import pytest
from django.db.models import FloatField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from analysis.models import DriveModel
from analysis.selectors import public_test_runs
from analysis.tests import factories
from browse import run_rows, summaries

METRICS = ("iops_4k_read", "bw_1m_read", "lat_4k_mean", "iops_4k_write")


def plain_rows(drive: DriveModel) -> list[dict]:
    metrics = {run_rows.metric_column(key): Cast(KT(f"headline__{key}"), FloatField()) for key in METRICS}
    runs = public_test_runs().filter(drive_model=drive).order_by("id").annotate(**metrics)
    return list(runs.values(*run_rows.LIGHT_RUN_FIELDS, "overprovisioning", *metrics))


def fast_rows(drive: DriveModel) -> list[dict]:
    metrics = {run_rows.metric_column(key): run_rows.HeadlineFloat(key) for key in METRICS}
    runs = public_test_runs().filter(drive_model=drive).order_by("id").annotate(**metrics)
    return list(run_rows.row_dicts(runs, (*run_rows.LIGHT_RUN_FIELDS, "overprovisioning", *metrics)))


@pytest.mark.django_db
def test_the_light_rows_are_the_plain_values_rows(browse_drive):  # noqa: F811
    drive = browse_drive
    submission = factories.SubmissionFactory()
    for test, headline in (
        ("iops", {"iops_4k_read": 512345.678, "iops_4k_write": 3}),
        ("tp", {}),
        ("lat", {"bw_1m_read": 0.0, "lat_4k_mean": 1e-9}),
    ):
        factories.TestRunFactory(submission=submission, drive_model=drive, test=test, headline=headline, unit=None)
    plain, fast = plain_rows(drive), fast_rows(drive)
    assert len(plain) >= 5 and fast == plain
    assert [list(row) for row in fast] == [list(row) for row in plain], "the same keys in the same order"
    for a, b in zip(fast, plain, strict=True):
        assert {k: type(v) for k, v in a.items()} == {k: type(v) for k, v in b.items()}
    assert any(row["m_iops_4k_write"] == 3.0 and type(row["m_iops_4k_write"]) is float for row in fast)


@pytest.mark.django_db
@pytest.mark.parametrize("imported", [False, True])
def test_the_run_kinds_read_with_the_runs_are_the_plain_query(browse_drive, imported):  # noqa: F811
    drive = browse_drive
    runs_of = public_test_runs()
    if imported:
        factories.TestRunFactory(submission=factories.SubmissionFactory(), drive_model=drive, source="ssspt")
    rows = run_rows.public_runs_of([drive.pk], runs_of, met=summaries.RUN_KIND_COLUMNS)[drive.pk]
    kinds = {kind: max(run[column] for run in rows) for kind, column in summaries.RUN_KIND_OF.items()}
    assert kinds == summaries._run_kinds(runs_of, drive)
    assert kinds == {"pts": 1, "imported": int(imported)}
    fields = summaries.summary_fields(DriveModel.objects.get(pk=drive.pk))
    assert fields["run_kinds"] == (",pts,imported," if imported else ",pts,")
