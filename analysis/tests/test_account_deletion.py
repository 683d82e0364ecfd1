"""Deleting an account never takes a contributor's published runs with it behind the pages' back: a submission's
uploader is protected, so the delete is refused (from code and from the admin) and the drive page, its summary and
the aggregates keep showing exactly the runs that exist."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db.models import ProtectedError

from analysis.models import DriveModelAggregate, DrivePageSummary, TestRun
from analysis.tests import factories
from analysis.tests.after_commit import refresh_and_summarise
from analysis.tests.conftest import make_browse_submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def contributor_drive():
    drive = factories.DriveModelFactory(name="Acme NVMe 990 1TB", slug="acme-990-1tb")
    contributor = factories.UserFactory(username="leaving")
    make_browse_submission(drive_model=drive, uploader=contributor)
    make_browse_submission(drive_model=drive)
    refresh_and_summarise(drive_model=drive)
    return contributor, drive


def shown(drive) -> tuple:
    summary = DrivePageSummary.objects.get(drive_model=drive)
    aggregates = sorted(
        DriveModelAggregate.objects.filter(drive_model=drive).values_list(
            "metric", "factor", "level", "n_runs", "median"
        )
    )
    return summary.version, summary.n_submissions, aggregates, TestRun.objects.filter(drive_model=drive).count()


def test_deleting_a_contributor_with_submissions_is_refused_and_leaves_the_drive_page_as_it_was(contributor_drive):
    contributor, drive = contributor_drive
    before = shown(drive)
    assert before[1] == 2
    with pytest.raises(ProtectedError):
        contributor.delete()
    assert shown(drive) == before


def test_the_admin_refuses_to_delete_a_contributor_with_submissions(contributor_drive, client):
    contributor, drive = contributor_drive
    before = shown(drive)
    staff = factories.UserFactory(username="staff", is_staff=True, is_superuser=True)
    client.force_login(staff)
    url = f"/admin/auth/user/{contributor.pk}/delete/"
    page = client.get(url)
    assert page.status_code == 200 and "Cannot delete user" in page.content.decode()
    client.post(url, {"post": "yes"})
    assert get_user_model().objects.filter(pk=contributor.pk).exists()
    assert shown(drive) == before
