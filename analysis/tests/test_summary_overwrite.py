"""The rebuild overwrites a drive's stored page summary in one UPDATE (browse.summaries._overwrite) rather than
update_or_create's read of the whole row first: the row it leaves must be the one update_or_create leaves, every
column rewritten and `updated` moved on; a drive without a row yet gets one through update_or_create."""

from __future__ import annotations

import pytest
from django.db.models import F

from analysis.models import DriveModel, DrivePageSummary
from analysis.tests.conftest import make_browse_submission
from browse import summaries

pytestmark = pytest.mark.django_db

COLUMNS = tuple(f.attname for f in DrivePageSummary._meta.concrete_fields if f.attname != "updated")


def stored(drive: DriveModel) -> dict:
    return DrivePageSummary.objects.filter(drive_model=drive).values(*COLUMNS, "updated").get()


def changed(drive: DriveModel) -> DriveModel:
    """The drive after a change of its public data: one more submission, its data version raised."""
    make_browse_submission(drive_model=drive, firmware="FW3", generation=5, scale=1.2)
    DriveModel.objects.filter(pk=drive.pk).update(data_version=F("data_version") + 1)
    return DriveModel.objects.get(pk=drive.pk)


def test_a_rebuild_over_a_stored_summary_leaves_the_row_update_or_create_leaves(browse_drive):
    before = stored(browse_drive)
    drive = changed(browse_drive)
    assert summaries.rebuild_summary(drive.pk) == summaries.WRITTEN
    overwritten = stored(drive)
    assert overwritten["n_submissions"] == before["n_submissions"] + 1, "every column is rewritten"
    assert overwritten["data_version"] == drive.data_version and overwritten["updated"] > before["updated"]

    DrivePageSummary.objects.filter(drive_model=drive).update(**{k: v for k, v in before.items() if k != "updated"})
    DrivePageSummary.objects.update_or_create(drive_model=drive, defaults=summaries.summary_fields(drive))
    by_update_or_create = stored(drive)
    assert {k: overwritten[k] for k in COLUMNS} == {k: by_update_or_create[k] for k in COLUMNS}
    assert by_update_or_create["updated"] > overwritten["updated"]


def test_a_drive_without_a_stored_summary_gets_one(browse_drive):
    DrivePageSummary.objects.filter(drive_model=browse_drive).delete()
    drive = changed(browse_drive)
    assert summaries.rebuild_summary(drive.pk) == summaries.WRITTEN
    row = stored(drive)
    assert row["data_version"] == drive.data_version and row["n_submissions"] == 3
    assert summaries.rebuild_summary(drive.pk) == summaries.CURRENT
