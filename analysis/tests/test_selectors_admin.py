"""Public reads hide unpublished work; staff pages for the dataset render."""

import pytest

from analysis import selectors
from analysis.ingest import ingest_submission
from analysis.models import DriveModelAggregate, Measurement, TestRun
from analysis.tests import factories


def test_only_published_unhidden_runs_are_public(db):
    shown = factories.TestRunFactory()
    factories.TestRunFactory(submission__status="held")
    factories.TestRunFactory(submission__status="withdrawn")
    factories.TestRunFactory(submission__hidden=True)
    assert list(selectors.public_test_runs()) == [shown]
    assert list(selectors.drive_models_with_data()) == [shown.drive_model]


def test_headline_aggregates_are_keyed_by_metric_and_level(db):
    model = factories.DriveModelFactory()
    factories.DriveModelAggregateFactory(drive_model=model)
    factories.DriveModelAggregateFactory(drive_model=model, factor="pcie_generation", level="Gen4")
    result = selectors.headline_aggregates(drive_model=model)
    assert set(result["iops_4k_read"]) == {"", "pcie_generation=Gen4"}


def test_a_rerun_that_is_rejected_removes_the_rows_and_their_aggregates(submission, make_verified):
    ingest_submission(submission=submission, bundle=make_verified())
    submission.status = "published"
    submission.save()
    # the sample bundle is a file-target trial, which never has aggregates: stand in for a device run
    TestRun.objects.filter(submission=submission).update(target_kind="device", profile="pts")
    model = TestRun.objects.get(submission=submission).drive_model
    from analysis.services import refresh_aggregates

    refresh_aggregates(drive_model=model)
    assert DriveModelAggregate.objects.filter(drive_model=model).exists()

    def mutate(run_dir, manifest, files):
        manifest["runs"][0]["threads"] = 8

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    assert outcome.status == "rejected"
    assert not Measurement.objects.filter(test_run__submission=submission).exists()
    assert not DriveModelAggregate.objects.filter(drive_model=model).exists()


@pytest.mark.parametrize("name", ["testrun", "measurement", "flag", "drivemodel", "pcielink", "drivemodelaggregate"])
def test_the_admin_lists_render(admin_client, name):
    run = factories.iops_run(rounds=1, mixes=(0,), block_sizes=(4096,))
    factories.FlagFactory(test_run=run)
    factories.DriveModelAggregateFactory(drive_model=run.drive_model)
    response = admin_client.get(f"/admin/analysis/{name}/")
    assert response.status_code == 200


def test_the_admin_run_page_renders_its_windows_and_flags(admin_client):
    run = factories.iops_run(rounds=1, mixes=(0,), block_sizes=(4096,))
    factories.SteadyStateWindowFactory(test_run=run)
    factories.FlagFactory(test_run=run, reason="<script>alert(1)</script>")
    response = admin_client.get(f"/admin/analysis/testrun/{run.pk}/change/")
    assert response.status_code == 200
    assert b"<script>alert(1)</script>" not in response.content and b"iops.total_iops.rw000.bs4096" in response.content


def test_withdrawing_a_submission_drops_it_from_the_aggregates(db):
    from django.core.management import call_command

    from analysis.services import refresh_aggregates_for_submission

    model = factories.DriveModelFactory()
    kept = factories.TestRunFactory(drive_model=model, headline={"iops_4k_read": 100.0})
    gone = factories.TestRunFactory(drive_model=model, headline={"iops_4k_read": 300.0})
    call_command("refresh_aggregates")
    assert model.aggregates.get(metric="iops_4k_read", factor="all").n_runs == 2
    gone.submission.status = "withdrawn"
    gone.submission.save()
    refresh_aggregates_for_submission(submission=gone.submission)
    aggregate = model.aggregates.get(metric="iops_4k_read", factor="all")
    assert (aggregate.n_runs, aggregate.median) == (1, 100.0)
    assert kept.submission.status == "published"


def test_a_brand_never_takes_its_controller_makers_pci_id(submission, make_verified, shared_samples):
    import json as jsonlib

    def seagate(run_dir, manifest, files):
        path = run_dir / "system/nvme-id-ctrl.json"
        doc = jsonlib.loads(path.read_text())
        doc.update(mn="Seagate FireCuda 530 ZP4000GM30023", vid=0x1987, ssvid=0x1BB1)
        path.write_text(jsonlib.dumps(doc))

    ingest_submission(submission=submission, bundle=make_verified(mutate=seagate))
    vendor = TestRun.objects.get(submission=submission).drive_model.vendor
    assert vendor.name == "Seagate" and vendor.pci_vendor_id is None
