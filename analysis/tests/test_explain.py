"""Why is my unit different? Crafted populations of one drive model, each unit one published run."""

import pytest

from analysis import pcie
from analysis.explain import MIN_UNITS, explain_submission, percentile_among
from analysis.tests.factories import (
    DriveModelFactory,
    FirmwareFactory,
    FlagFactory,
    HostFactory,
    MeasurementFactory,
    PcieLinkFactory,
    SubmissionFactory,
    TestRunFactory,
)

pytestmark = pytest.mark.django_db

GEN4_USABLE = pcie.usable_bandwidth(16.0, 4, 256)
GEN3_USABLE = pcie.usable_bandwidth(8.0, 4, 256)


def unit_run(model, *, read_iops=500_000.0, link=None, **fields):
    """One unit's published IOPS run; the link is a healthy Gen4 x4 unless given."""
    return TestRunFactory(
        drive_model=model,
        headline={"iops_4k_read": read_iops},
        pcie_link=link or PcieLinkFactory(usable_bandwidth_bytes_per_s=GEN4_USABLE),
        **fields,
    )


def population(model, values):
    return [unit_run(model, read_iops=value) for value in values]


def metric(summary, key):
    return next(m for m in summary["metrics"] if m["key"] == key)


def factor(summary, kind):
    return next((f for f in summary["factors"] if f["kind"] == kind), None)


def test_a_downtrained_unit_among_normal_ones_is_explained_by_its_link():
    model = DriveModelFactory()
    population(model, [1_000_000, 1_010_000, 990_000, 1_005_000, 995_000])
    gen3 = PcieLinkFactory(speed_gts=8.0, generation=3, below_capability=True, usable_bandwidth_bytes_per_s=GEN3_USABLE)
    slow = unit_run(model, read_iops=850_000, link=gen3)
    MeasurementFactory(round__test_run=slow, link_utilization=0.94)

    summary = explain_submission(slow.submission)

    link = factor(summary, "link_below_capability")
    assert link["reason"] == (
        "Link trained at 8 GT/s x4 though the drive is capable of 16 GT/s x4: usable 3.60 GB/s, "
        "this run moved 94.0% of it."
    )
    assert link["evidence"] == {
        "negotiated": "8 GT/s x4",
        "capable": "16 GT/s x4",
        "usable_bandwidth": "3.60 GB/s",
        "moved": "3.38 GB/s",
        "link_utilization": "94.0%",
        "other_units_at_capability": "5 of 5",
    }
    read = metric(summary, "iops_4k_read")
    assert (read["percentile"], read["population_units"]) == (0.0, 6)
    assert read["position"] == "better than 0% of the 5 other units"
    assert read["value_display"] == "850k IOPS"


def test_a_unit_in_a_slower_slot_is_explained_by_its_link_against_the_others():
    """A Gen4 drive in a Gen3 slot: its link is all the slot allows (not below capability), yet slower than most."""
    model = DriveModelFactory()
    population(model, [1_000_000, 1_010_000, 990_000, 1_005_000])
    slot = PcieLinkFactory(
        speed_gts=8.0, generation=3, below_capability=False, usable_bandwidth_bytes_per_s=GEN3_USABLE
    )
    slow = unit_run(model, read_iops=850_000, link=slot)
    MeasurementFactory(round__test_run=slow, link_utilization=0.5)

    summary = explain_submission(slow.submission)

    assert factor(summary, "link_below_capability") is None
    assert factor(summary, "link_slower_than_others")["reason"] == (
        "Link at 8 GT/s x4, all its slot allows, where most other units ran at 16 GT/s x4 (4 of 4): "
        "usable 3.60 GB/s, this run moved 50.0% of it."
    )


def test_a_normal_unit_has_no_link_factor():
    model = DriveModelFactory()
    runs = population(model, [1, 2, 3, 4, 5])
    assert explain_submission(runs[0].submission)["factors"] == []


def test_percentiles_at_the_lowest_the_highest_and_ties():
    model = DriveModelFactory()
    runs = population(model, [100_000, 200_000, 200_000, 300_000, 400_000])

    lowest, tied, highest = (explain_submission(runs[i].submission) for i in (0, 1, 4))

    assert metric(lowest, "iops_4k_read")["percentile"] == 0.0
    assert metric(highest, "iops_4k_read")["percentile"] == 100.0
    # beats 100k, ties the other 200k: (1 + 0.5) of 4
    assert metric(tied, "iops_4k_read")["percentile"] == 37.5


def test_for_latency_the_lowest_value_is_the_best():
    model = DriveModelFactory()
    runs = [TestRunFactory(drive_model=model, test="lat", headline={"lat_4k_mean": ns}) for ns in (20e3, 30e3, 40e3,
            50e3, 60e3)]  # fmt: skip
    fastest, slowest = explain_submission(runs[0].submission), explain_submission(runs[-1].submission)
    assert metric(fastest, "lat_4k_mean")["percentile"] == 100.0
    assert metric(slowest, "lat_4k_mean")["percentile"] == 0.0
    assert metric(slowest, "lat_4k_mean")["value_display"] == "60.0 µs"


def test_a_unit_tied_with_every_other_is_at_the_middle():
    assert percentile_among(5.0, [5.0, 5.0, 5.0], higher_is_better=True) == 50.0


def test_a_one_unit_population_says_so():
    only = unit_run(DriveModelFactory())
    read = metric(explain_submission(only.submission), "iops_4k_read")
    assert (read["percentile"], read["population_units"]) == (None, 1)
    assert read["position"] == "the only unit of this model measured so far: nothing to compare with"


def test_below_the_threshold_no_percentile_is_given():
    model = DriveModelFactory()
    runs = population(model, [1, 2, 3, 4][: MIN_UNITS - 1])
    read = metric(explain_submission(runs[-1].submission), "iops_4k_read")
    assert read["percentile"] is None
    assert read["position"] == f"not enough units: {MIN_UNITS - 1} units of this model, a percentile needs {MIN_UNITS}"


def test_runs_of_the_same_unit_and_trials_and_hidden_submissions_are_not_peers():
    model = DriveModelFactory()
    mine = unit_run(model)
    unit_run(model, unit=mine.unit, submission=SubmissionFactory())  # the same unit, another submission
    unit_run(model, target_kind="file")
    unit_run(model, profile="quick")
    unit_run(model, submission=SubmissionFactory(hidden=True))
    unit_run(model, submission=SubmissionFactory(status="rejected"))
    assert metric(explain_submission(mine.submission), "iops_4k_read")["population_units"] == 1


def test_firmware_host_cpu_wear_and_overprovisioning_that_differ_are_named():
    model = DriveModelFactory()
    for _ in range(4):
        unit_run(model, percentage_used=2, overprovisioning=0.12)
    odd = unit_run(
        model,
        firmware=FirmwareFactory(drive_model=model, revision="OLDFW01"),
        host=HostFactory(cpu_model="Intel(R) Celeron(R) N5105"),
        percentage_used=45,
        overprovisioning=0.0,
    )
    summary = explain_submission(odd.submission)
    assert factor(summary, "firmware")["reason"].startswith(
        "Firmware OLDFW01; the model's most common firmware is 1B2QEXM7 (4 of 4 other units)"
    )
    assert factor(summary, "host_cpu")["evidence"]["most_common"] == "AMD EPYC 7302P 16-Core Processor"
    assert factor(summary, "wear")["evidence"] == {"percentage_used": "45%", "others_median": "2%"}
    assert factor(summary, "overprovisioning")["evidence"] == {"overprovisioning": "0%", "others_median": "12.0%"}


def test_a_unit_like_the_others_has_none_of_those_factors():
    model = DriveModelFactory()
    runs = [unit_run(model, percentage_used=2, overprovisioning=0.12) for _ in range(5)]
    assert explain_submission(runs[0].submission)["factors"] == []


def test_bus_bound_and_thermal_flags_are_explained_with_their_evidence():
    model = DriveModelFactory()
    run = unit_run(model, max_temperature_k=358.15)
    busy = MeasurementFactory(round__test_run=run, link_utilization=0.97)
    FlagFactory(test_run=run, measurement=busy, kind="bus_bound")
    FlagFactory(test_run=run, kind="thermal_throttle", reason="throttle counters grew during the run: x +3")
    summary = explain_submission(run.submission)
    assert factor(summary, "bus_bound")["reason"] == (
        f"1 fio run moved at least 90.0% of the {pcie_gb(GEN4_USABLE)} the link can carry: the bus, not the drive, "
        "set this number."
    )
    assert factor(summary, "bus_bound")["evidence"]["busiest"] == "97.0%"
    assert factor(summary, "thermal_throttle")["evidence"] == {"hottest": "85 °C"}


def pcie_gb(value):
    from nvmedb_client.units import bandwidth

    return bandwidth(value)


def test_a_submission_without_runs_has_no_summary():
    assert explain_submission(SubmissionFactory()) is None


def test_the_submission_page_places_the_unit_and_names_its_link(client):
    model = DriveModelFactory()
    population(model, [1_000_000, 1_010_000, 990_000, 1_005_000, 995_000])
    gen3 = PcieLinkFactory(speed_gts=8.0, generation=3, below_capability=True, usable_bandwidth_bytes_per_s=GEN3_USABLE)
    slow = unit_run(model, read_iops=850_000, link=gen3)
    MeasurementFactory(round__test_run=slow, link_utilization=0.94)

    page = client.get(f"/submissions/{slow.submission.pk}/").content.decode()

    assert "Why is this unit different?" in page
    assert "better than 0% of the 5 other units" in page
    assert "usable 3.60 GB/s, this run moved 94.0% of it." in page
    assert "<dt>usable bandwidth</dt><dd>3.60 GB/s</dd>" in page


def test_the_page_of_a_unit_like_the_others_says_nothing_sets_it_apart(client):
    runs = population(DriveModelFactory(), [1, 2, 3, 4, 5])
    page = client.get(f"/submissions/{runs[2].submission.pk}/").content.decode()
    assert "better than 50% of the 4 other units" in page
    assert "Nothing on record sets this unit apart" in page


def test_the_page_claims_a_match_only_for_conditions_both_sides_record(client):
    runs = population(DriveModelFactory(), [1, 2, 3, 4, 5])
    for run in runs:
        run.pcie_link = None
        run.host = None
        run.save()
    page = client.get(f"/submissions/{runs[2].submission.pk}/").content.decode()
    conditions = page.split("Nothing on record sets this unit apart", 1)[-1].split("</p>", 1)[0]
    assert "link" not in conditions and "host" not in conditions
    assert "Not recorded for this unit: PCIe link" in page and "host CPU" in page.split("Not recorded", 1)[1]


def test_the_submission_api_answers_the_same_summary_and_its_shape_is_frozen():
    from rest_framework.test import APIClient

    from submissions.tests.contract import assert_matches_contract

    model = DriveModelFactory(name="Acme Rocket 1TB", slug="acme-rocket-1tb")
    population(model, [1_000_000, 1_010_000, 990_000, 1_005_000, 995_000])
    gen3 = PcieLinkFactory(speed_gts=8.0, generation=3, below_capability=True, usable_bandwidth_bytes_per_s=GEN3_USABLE)
    slow = unit_run(model, read_iops=850_000, link=gen3)
    MeasurementFactory(round__test_run=slow, link_utilization=0.94)

    answer = APIClient().get(f"/api/v1/submissions/{slow.submission.pk}/").json()

    assert answer["explanation"] == explain_submission(slow.submission)
    assert factor(answer["explanation"], "link_below_capability")["evidence"]["moved"] == "3.38 GB/s"
    assert_matches_contract("submission_explained", answer)


def test_the_openapi_schema_documents_the_explanation(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = schema["components"]["schemas"]
    explanation = components["SubmissionOutput"]["properties"]["explanation"]
    assert "Explanation" in str(explanation)
    assert {"metrics", "factors", "min_units"} <= set(components["Explanation"]["properties"])
    assert "percentile" in components["MetricPosition"]["properties"]
