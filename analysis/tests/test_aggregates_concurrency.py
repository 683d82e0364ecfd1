"""Aggregate refreshes of one drive model, run at once by concurrent ingests, all succeed and the last counts all."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from analysis.models import DriveModelAggregate
from analysis.models.aggregates import Factor
from analysis.services import refresh_aggregates
from analysis.tests.factories import (
    DriveModelFactory,
    FirmwareFactory,
    HostFactory,
    PcieLinkFactory,
    PhysicalUnitFactory,
    SubmissionFactory,
    TestRunFactory,
)

INGESTS = 6

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_concurrent_ingests_of_one_model_all_refresh_its_aggregates_and_the_last_counts_every_run():
    model = DriveModelFactory()
    firmware, unit, host = FirmwareFactory(drive_model=model), PhysicalUnitFactory(drive_model=model), HostFactory()
    submissions = [SubmissionFactory(status="ingesting", published_at=None) for _ in range(INGESTS)]
    links = [PcieLinkFactory() for _ in range(INGESTS)]
    # Every ingest has written its runs (uncommitted) before any refreshes: the overlap that broke the unique
    # constraint, made certain instead of left to timing.
    all_written = threading.Barrier(INGESTS, timeout=60)
    errors: list[BaseException] = []

    def ingest(i: int) -> None:
        try:
            with transaction.atomic():
                submission = submissions[i]
                TestRunFactory(
                    submission=submission,
                    drive_model=model,
                    firmware=firmware,
                    unit=unit,
                    host=host,
                    pcie_link=links[i],
                    headline={"iops_4k_read": 100_000.0 + i},
                )
                all_written.wait()
                refresh_aggregates(drive_model=model, also_submission=submission)
                submission.status = "published"
                submission.save(update_fields=["status"])
        except BaseException as exc:  # reported below with the thread's error
            errors.append(exc)
            all_written.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=ingest, args=(i,)) for i in range(INGESTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    overall = DriveModelAggregate.objects.get(drive_model=model, metric="iops_4k_read", factor=Factor.ALL)
    assert overall.n_runs == INGESTS
    assert overall.median == pytest.approx(100_000.0 + (INGESTS - 1) / 2)
