"""The factories build valid rows that the aggregates and outlier check can use."""

from analysis.models import Measurement
from analysis.services import refresh_aggregates
from analysis.tests import factories


def test_an_iops_run_has_every_cell_of_every_round(db):
    run = factories.iops_run(rounds=6)
    assert Measurement.objects.filter(test_run=run).count() == 6 * 7 * 8
    assert (
        Measurement.objects.filter(test_run=run, in_steady_window=True).values("round__number").distinct().count() == 5
    )
    flag = factories.FlagFactory(test_run=run)
    assert flag.submission == run.submission


def test_aggregates_count_runs_and_distinct_units(db):
    model = factories.DriveModelFactory()
    unit = factories.PhysicalUnitFactory(drive_model=model)
    for value, run_unit in ((100.0, unit), (200.0, unit), (300.0, None)):
        factories.TestRunFactory(drive_model=model, unit=run_unit, headline={"iops_4k_read": value})
    factories.TestRunFactory(drive_model=model, headline={"iops_4k_read": 1e9}, submission__status="withdrawn")
    refresh_aggregates(drive_model=model)
    aggregate = model.aggregates.get(metric="iops_4k_read", factor="all")
    # per unit (issue 21): the unit's two runs count once as their median 150; the run of no known unit is its own
    assert (aggregate.median, aggregate.q1, aggregate.q3, aggregate.n_runs) == (225.0, 187.5, 262.5, 3)
    assert aggregate.n_units == 1  # runs without a known unit do not count in n_units
    assert aggregate.n_contributors == 3  # each factory run has its own uploader
    assert model.aggregates.get(metric="iops_4k_read", factor="pcie_generation", level="Gen4").n_runs == 3
