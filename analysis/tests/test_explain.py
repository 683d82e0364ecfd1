"""Why is my unit different? Crafted populations of one drive model, each unit one published run."""

import random
import re

import pytest

from analysis import explain_model, pcie
from analysis.explain import MIN_UNITS, explain_submission, percentile_among
from analysis.factor_effects import refresh_factor_effects, refresh_held_figures
from analysis.models import DriveModel, FactorFitSummary, FactorUnitFigures
from analysis.tests.factories import (
    DriveModelFactory,
    FirmwareFactory,
    FlagFactory,
    HostFactory,
    MeasurementFactory,
    PcieLinkFactory,
    PhysicalUnitFactory,
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


def explained(submission):
    """The submission's explanation once the refit task has stored its drive's figures (as after a commit)."""
    refit(submission)
    return explain_submission(submission)


def refit(submission):
    for model in DriveModel.objects.filter(test_runs__submission=submission).distinct():
        refresh_factor_effects(model)
    if submission.status == "held":  # its own figures are refit apart from the drive's (and when its page is viewed)
        refresh_held_figures(submission)


def metric(summary, key):
    return next(m for m in summary["metrics"] if m["key"] == key)


def factor(summary, kind):
    return next((f for f in summary["factors"] if f["kind"] == kind), None)


def downtrained_among_normal(model):
    """Five normal units and a Gen4 unit whose link trained at Gen3 (below capability), 15 % slower."""
    population(model, [1_000_000, 1_010_000, 990_000, 1_005_000, 995_000])
    gen3 = PcieLinkFactory(speed_gts=8.0, generation=3, below_capability=True, usable_bandwidth_bytes_per_s=GEN3_USABLE)
    slow = unit_run(model, read_iops=850_000, link=gen3)
    MeasurementFactory(round__test_run=slow, link_utilization=0.94)
    return slow


def test_a_downtrained_unit_among_normal_ones_is_explained_by_its_link():
    slow = downtrained_among_normal(DriveModelFactory())

    summary = explained(slow.submission)

    link = factor(summary, "link_below_capability")
    assert link["reason"] == "Its link trained at 8 GT/s x4 though the drive and its slot can do 16 GT/s x4."
    (line,) = link["lines"]
    assert line.startswith("4 KiB random read −15%; link Gen3 x4, below capability accounts for −15% [")
    assert line.endswith("] (1 unit — indicative)")
    assert link["evidence"]["4 KiB random read"].startswith("gap −15%, accounts for −15% [")
    assert {k: link["evidence"][k] for k in ("negotiated", "capable", "usable_bandwidth")} == {
        "negotiated": "8 GT/s x4", "capable": "16 GT/s x4", "usable_bandwidth": "3.60 GB/s"
    }  # fmt: skip
    read = metric(summary, "iops_4k_read")
    assert (read["percentile"], read["population_units"]) == (0.0, 6)
    assert read["position"] == "better than 0% of the 5 other units"
    assert read["value_display"] == "850k IOPS"
    # at the reference conditions (a capable link) it is a unit like the others
    assert read["gap_display"] == "−15%" and read["normalized"]["low"] < 1e6 < read["normalized"]["high"]
    normalized = read["normalized"]
    assert normalized["display"] == explain_model._display("IOPS", normalized) and " IOPS [" in normalized["display"]
    assert [f["kind"] for f in summary["factors"]] == ["link_below_capability"]


def test_a_unit_in_a_slower_slot_is_bus_bound_only_where_the_link_caps_it():
    """A Gen4 drive in a Gen3 slot: its link is all the slot allows (not below capability), and carries less than
    the other units read; it is named where that cost it (random read), never as a link below capability."""
    model = DriveModelFactory()
    population(model, [1_000_000, 1_010_000, 990_000, 1_005_000, 995_000])
    slot = PcieLinkFactory(
        speed_gts=8.0, generation=3, below_capability=False, usable_bandwidth_bytes_per_s=GEN3_USABLE
    )
    slow = unit_run(model, read_iops=850_000, link=slot)

    summary = explained(slow.submission)

    assert factor(summary, "link_below_capability") is None
    bound = factor(summary, "bus_bound")
    assert bound["reason"] == (
        "Its link (Gen3 x4) capped it below what the drive reaches on a faster link: the bus, not the drive, set "
        "this figure."
    )
    assert bound["lines"][0].startswith("4 KiB random read −15%; link Gen3 x4 (link-limited) accounts for −15% [")


def test_a_normal_unit_has_no_link_factor():
    model = DriveModelFactory()
    runs = population(model, [1, 2, 3, 4, 5])
    assert explained(runs[0].submission)["factors"] == []


def test_percentiles_at_the_lowest_the_highest_and_ties():
    model = DriveModelFactory()
    runs = population(model, [100_000, 200_000, 200_000, 300_000, 400_000])

    lowest, tied, highest = (explained(runs[i].submission) for i in (0, 1, 4))

    assert metric(lowest, "iops_4k_read")["percentile"] == 0.0
    assert metric(highest, "iops_4k_read")["percentile"] == 100.0
    # beats 100k, ties the other 200k: (1 + 0.5) of 4
    assert metric(tied, "iops_4k_read")["percentile"] == 37.5


def test_for_latency_the_lowest_value_is_the_best():
    model = DriveModelFactory()
    runs = [TestRunFactory(drive_model=model, test="lat", headline={"lat_4k_mean": ns}) for ns in (20e3, 30e3, 40e3,
            50e3, 60e3)]  # fmt: skip
    fastest, slowest = explained(runs[0].submission), explained(runs[-1].submission)
    assert metric(fastest, "lat_4k_mean")["percentile"] == 100.0
    assert metric(slowest, "lat_4k_mean")["percentile"] == 0.0
    assert metric(slowest, "lat_4k_mean")["value_display"] == "60.0 µs"


def test_a_unit_tied_with_every_other_is_at_the_middle():
    assert percentile_among(5.0, [5.0, 5.0, 5.0], higher_is_better=True) == 50.0


def test_a_one_unit_population_says_so():
    only = unit_run(DriveModelFactory())
    read = metric(explained(only.submission), "iops_4k_read")
    assert (read["percentile"], read["population_units"]) == (None, 1)
    assert read["position"] == "the only unit of this model measured so far: nothing to compare with"


def test_below_the_threshold_no_percentile_is_given():
    model = DriveModelFactory()
    runs = population(model, [1, 2, 3, 4][: MIN_UNITS - 1])
    read = metric(explained(runs[-1].submission), "iops_4k_read")
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
    assert metric(explained(mine.submission), "iops_4k_read")["population_units"] == 1


def test_less_spare_area_is_named_and_what_moves_with_it_is_said_not_blamed():
    """One unit with no over-provisioning where the others keep 12 %, on another firmware, host CPU and far more
    wear: those move together on one unit, so the model names the first in its order (spare area, a measured
    mechanism) and says the others are not separable from it."""
    model = DriveModelFactory()
    for iops in (500_000, 505_000, 495_000, 502_000):
        unit_run(model, read_iops=iops, percentage_used=2, overprovisioning=0.12)
    odd = unit_run(
        model,
        read_iops=400_000,
        firmware=FirmwareFactory(drive_model=model, revision="OLDFW01"),
        host=HostFactory(cpu_model="Intel(R) Celeron(R) N5105"),
        percentage_used=45,
        overprovisioning=0.0,
    )
    summary = explained(odd.submission)
    assert [f["kind"] for f in summary["factors"]] == ["overprovisioning"]
    spare = factor(summary, "overprovisioning")
    assert spare["reason"] == (
        "Less spare area than the reference unit (spare 0% of user capacity (reference 14%)): spare area sets "
        "sustained write speed."
    )
    assert "not separable from wear, firmware OLDFW01, host CPU Intel(R) Celeron(R) N5105" in spare["lines"][0]


def test_a_unit_like_the_others_has_none_of_those_factors():
    model = DriveModelFactory()
    runs = [unit_run(model, percentage_used=2, overprovisioning=0.12) for _ in range(5)]
    assert explained(runs[0].submission)["factors"] == []


def test_a_lone_unit_on_its_rated_link_is_never_bus_bound_and_its_thermal_line_is_said_once():
    """A bus_bound flag (≥ 90 % of the link moved) on a unit on its rated link is no explanation: nothing shows the
    drive reaching more elsewhere. Throttling is, once, with the drive's thresholds and the tests it hit."""
    model = DriveModelFactory()
    submission, unit = SubmissionFactory(), PhysicalUnitFactory(drive_model=model)
    runs = [
        unit_run(model, test=test, max_temperature_k=358.15, warning_temperature_k=343.15,
                 critical_temperature_k=353.15, submission=submission, unit=unit)
        for test in ("iops", "tp", "lat")
    ]  # fmt: skip
    busy = MeasurementFactory(round__test_run=runs[0], link_utilization=0.97)
    FlagFactory(test_run=runs[0], measurement=busy, kind="bus_bound")
    for run in runs[:2]:
        FlagFactory(
            test_run=run,
            kind="thermal_throttle",
            reason="The drive ran hot: throttle counters grew during the run: thm_temp1_total_time_s +3.",
        )
    FlagFactory(test_run=runs[2], kind="thermal_throttle",
                reason="The drive ran hot: reached 85 °C, at or above the drive's critical threshold.")  # fmt: skip

    summary = explained(submission)

    assert factor(summary, "bus_bound") is None
    (thermal,) = [f for f in summary["factors"] if f["kind"] == "thermal_throttle"]
    assert thermal["reason"] == (
        "The drive throttled: throttle time grew during the IOPS and Throughput tests; it ran hot during the "
        "Latency test; the drive reached 85 °C (warning threshold 70 °C, critical threshold 80 °C)."
    )
    assert thermal["evidence"] == {
        "hottest": "85 °C", "warning_threshold": "70 °C", "critical_threshold": "80 °C",
        "throttle_time_grew_in": "IOPS, Throughput",
    }  # fmt: skip
    assert summary["model_note"] == (
        "Too few units for the factor model: 1 for 1 parameters (the model needs at least 3); the positions are "
        "percentiles only."
    )


def pcie_gb(value):
    from nvmedb_client.units import bandwidth

    return bandwidth(value)


def test_a_submission_without_runs_has_no_summary():
    assert explained(SubmissionFactory()) is None


def test_the_submission_page_places_the_unit_and_names_its_link(client):
    model = DriveModelFactory()
    population(model, [1_000_000, 1_010_000, 990_000, 1_005_000, 995_000])
    gen3 = PcieLinkFactory(speed_gts=8.0, generation=3, below_capability=True, usable_bandwidth_bytes_per_s=GEN3_USABLE)
    slow = unit_run(model, read_iops=850_000, link=gen3)
    MeasurementFactory(round__test_run=slow, link_utilization=0.94)
    refit(slow.submission)

    page = client.get(f"/submissions/{slow.submission.pk}/").content.decode()

    assert "Why is this unit different?" in page
    assert "better than 0% of the 5 other units" in page
    assert "Its link trained at 8 GT/s x4 though the drive and its slot can do 16 GT/s x4." in page
    assert "<li>4 KiB random read −15%; link Gen3 x4, below capability accounts for −15% [" in page
    normalized = page.split('id="position-iops_4k_read"', 1)[1].split("</tr>", 1)[0]
    assert "−15%" in normalized and re.search(r"normalized\">\d\.\d\dM IOPS \[\d", normalized)


def test_the_page_of_a_unit_like_the_others_says_nothing_sets_it_apart(client):
    runs = population(DriveModelFactory(), [1, 2, 3, 4, 5])
    page = client.get(f"/submissions/{runs[2].submission.pk}/").content.decode()
    assert "better than 50% of the 4 other units" in page
    assert "Nothing on record sets this unit apart" in page


def test_a_condition_that_differs_without_an_effect_is_said_to_differ_not_to_match(client):
    model = DriveModelFactory()
    population(model, [1_000_000, 1_010_000, 990_000, 1_005_000, 995_000])
    odd = unit_run(model, read_iops=1_002_000, firmware=FirmwareFactory(drive_model=model, revision="OLDFW01"))

    summary = explained(odd.submission)

    assert summary["factors"] == [] and summary["conditions_without_effect"] == ["firmware"]
    assert "firmware" not in summary["conditions_matching"] and "PCIe link" in summary["conditions_matching"]
    page = client.get(f"/submissions/{odd.submission.pk}/").content.decode()
    assert '<p class="no-factors">Its PCIe link, host CPU match the other units\'.</p>' in page
    assert "Its firmware differs from the other units', with no effect on its figures the factor model" in page


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
    refit(slow.submission)

    answer = APIClient().get(f"/api/v1/submissions/{slow.submission.pk}/").json()

    assert answer["explanation"] == explain_submission(slow.submission)
    assert factor(answer["explanation"], "link_below_capability")["evidence"]["usable_bandwidth"] == "3.60 GB/s"
    assert_matches_contract("submission_explained", answer)


def test_the_openapi_schema_documents_the_explanation(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = schema["components"]["schemas"]
    explanation = components["SubmissionOutput"]["properties"]["explanation"]
    assert "Explanation" in str(explanation)
    assert {"metrics", "factors", "min_units"} <= set(components["Explanation"]["properties"])
    assert {"percentile", "gap", "normalized", "reference", "lines"} <= set(components["MetricPosition"]["properties"])
    assert {"value", "low", "high", "display"} <= set(components["Figure"]["properties"])
    assert "lines" in components["Factor"]["properties"] and "model_note" in components["Explanation"]["properties"]


# The factor model's explanations (issue 20): a crafted population with known factors, two tests per unit.
SEQ, RW = "bw_1m_read", "iops_4k_write"
GEN2_USABLE = 5e9 * 4 * 0.8 / 8 * 256 / 280  # Gen2 x4 at MaxPayload 256: about 1.83 GB/s
WARNING_K, CRITICAL_K = 343.15, 353.15  # 70 °C and 80 °C


def factor_population(*, status_of=None) -> dict:
    """Seven normal units; a unit in a Gen2 x4 slot (the link at capability: the slot is Gen2) on a host whose CPU
    no other unit has; a unit with +25% spare (spare ÷ user capacity); a throttled unit. Each unit runs the
    throughput and IOPS tests; 1 % unit-to-unit noise."""
    rng = random.Random(20)
    model = DriveModelFactory()
    specs = [(f"n{i}", {}, {SEQ: 1.0, RW: 1.0}) for i in range(7)]
    specs += [
        ("gen2", {"link": "gen2", "cpu": "Intel(R) Xeon(R) CPU E5-2620 v2"}, {SEQ: 0.25, RW: 1.0}),
        ("spare", {"overprovisioning": 0.2}, {SEQ: 1.0, RW: 1.3}),
        ("hot", {"throttled": True}, {SEQ: 0.8, RW: 0.8}),
    ]
    submissions = {}
    for name, conditions, ratios in specs:
        submission = SubmissionFactory(status=(status_of or {}).get(name, "published"))
        submissions[name] = submission
        unit_noise = rng.gauss(0, 0.01)
        if conditions.get("link") == "gen2":
            link = PcieLinkFactory(
                capable_speed_gts=5.0, speed_gts=5.0, generation=2, path_speed_gts=5.0,
                usable_bandwidth_bytes_per_s=GEN2_USABLE,
            )  # fmt: skip
        else:
            link = PcieLinkFactory()
        host = HostFactory(cpu_model=conditions.get("cpu", HostFactory.cpu_model))
        unit = None
        for test, key, base in (("tp", SEQ, 6.5e9), ("iops", RW, 2.0e5)):
            run = TestRunFactory(
                submission=submission, drive_model=model, test=test, pcie_link=link, host=host,
                headline={key: base * ratios[key] * (1 + unit_noise + rng.gauss(0, 0.003))},
                max_temperature_k=362.15 if conditions.get("throttled") else 320.0,
                warning_temperature_k=WARNING_K, critical_temperature_k=CRITICAL_K, percentage_used=3,
                overprovisioning=conditions.get("overprovisioning", 0.0), **({"unit": unit} if unit else {}),
            )  # fmt: skip
            unit = run.unit
            if conditions.get("throttled"):
                FlagFactory(
                    submission=submission, test_run=run, kind="thermal_throttle",
                    reason="The drive ran hot: throttle counters grew during the run: thm_temp1_total_time_s +40; "
                    "reached 89 °C, at or above the drive's critical threshold.",
                )  # fmt: skip
    return {"model": model, "submissions": submissions}


def lines_of(summary) -> list[str]:
    return [line for f in summary["factors"] for line in f["lines"]]


def test_normal_units_are_not_bus_bound_nor_blamed_on_a_host_cpu():
    """Their sequential reads fill most of their Gen4 x4 link, the drive's own rating: no link caps them below what
    the drive reaches elsewhere. Their 1-2 % gaps are noise, not a host CPU (theirs is the modal one)."""
    world = factor_population()
    for name in (f"n{i}" for i in range(7)):
        summary = explained(world["submissions"][name])
        assert summary["factors"] == [], name
        assert summary["conditions_without_effect"] == [] and "PCIe link" in summary["conditions_matching"]
        for m in summary["metrics"]:
            assert m["lines"] == [] and abs(m["gap"]) < 0.05 and m["normalized"] is not None


def test_the_gen2_unit_is_explained_by_its_link_not_its_host_cpu():
    world = factor_population()
    summary = explained(world["submissions"]["gen2"])

    assert [f["kind"] for f in summary["factors"]] == ["bus_bound"]
    (line,) = lines_of(summary)
    assert re.fullmatch(
        r"1024 KiB sequential read −7\d%; link Gen2 x4 \(link-limited\) accounts for −7\d% \[−7\d, −7\d\] "
        r"\(1 unit — indicative; not separable from host CPU Intel\(R\) Xeon\(R\) CPU E5-2620 v2\)",
        line,
    )
    assert factor(summary, "host_cpu") is None
    # random write moves 0.8 GB/s, well within Gen2 x4: neither the link nor the host CPU is named for it
    assert metric(summary, RW)["lines"] == []
    # at the reference conditions it reads like the normal units
    seq = metric(summary, SEQ)
    assert seq["gap"] < -0.7 and abs(seq["normalized"]["value"] / seq["reference"]["value"] - 1) < 0.03
    assert seq["normalized"]["low"] < seq["reference"]["value"] < seq["normalized"]["high"]


def test_more_spare_area_is_explained_in_the_positive_direction():
    world = factor_population()
    summary = explained(world["submissions"]["spare"])

    spare = factor(summary, "overprovisioning")
    assert spare["reason"].startswith("More spare area than the reference unit (spare 25% of user capacity")
    (line,) = spare["lines"]
    assert (
        line.startswith("4 KiB random write +3") and "spare 25% of user capacity (reference 0%) accounts for +" in line
    )
    write = metric(summary, RW)
    assert write["gap"] > 0.2 and abs(write["normalized"]["value"] / write["reference"]["value"] - 1) < 0.03


def test_the_throttled_unit_gets_one_thermal_line_with_its_thresholds(client):
    world = factor_population()
    submission = world["submissions"]["hot"]
    summary = explained(submission)

    (thermal,) = summary["factors"]
    assert thermal["kind"] == "thermal_throttle"
    assert thermal["reason"] == (
        "The drive throttled: throttle time grew during the Throughput and IOPS tests; the drive reached 89 °C "
        "(warning threshold 70 °C, critical threshold 80 °C)."
    )
    assert len(thermal["lines"]) == 2 and all("thermal throttling accounts for −" in t for t in thermal["lines"])
    page = client.get(f"/submissions/{submission.pk}/").content.decode()
    assert page.count("The drive throttled") == 1 and page.count("warning threshold 70 °C") == 1


def test_a_held_unit_is_explained_against_the_public_ones_and_stays_out_of_their_fit():
    from analysis.factor_rows import drive_rows

    world = factor_population(status_of={"gen2": "held"})
    held = world["submissions"]["gen2"]

    summary = explained(held)

    assert factor(summary, "bus_bound")["lines"][0].startswith("1024 KiB sequential read −7")
    public_units = {row.unit for row in drive_rows(world["model"]).rows[SEQ]}
    assert held.test_runs.first().unit_id not in public_units and len(public_units) == 9


def test_a_stored_entry_is_numbers_shown_in_their_unit_when_read():
    """The refit stores a unit's normalized figure, the reference level and the gap as numbers; the page formats the
    ones it shows, as the refit did before (an entry stored with its text keeps it)."""
    stored = {"model_units": 5, "reference": {"value": 8e9, "low": 7.9e9, "high": 8.1e9}, "gap": -0.75,
              "normalized": {"value": 6.5e9, "low": 6.41e9, "high": 6.59e9}}  # fmt: skip
    read = explain_model.MetricModel.from_stored(stored, "bytes/s")
    assert read.normalized == {**stored["normalized"], "display": "6.50 GB/s [6.41 GB/s, 6.59 GB/s]"}
    assert read.reference["display"] == "8.00 GB/s [7.90 GB/s, 8.10 GB/s]"
    assert read.gap_display == "−75%" and read.as_dict()["gap_display"] == "−75%"
    assert explain_model.MetricModel.from_stored({**stored, "gap": None}, "bytes/s").gap_display == ""
    as_before = {**stored, "gap_display": "−75% as stored", "reference": {**stored["reference"], "display": "kept"}}
    kept = explain_model.MetricModel.from_stored(as_before, "bytes/s")
    assert (kept.gap_display, kept.reference["display"]) == ("−75% as stored", "kept")
    at_reference = {"normalized": {"value": 4e5, "low": 4e5, "high": 4e5}}
    assert explain_model.MetricModel.from_stored(at_reference, "IOPS").normalized["display"] == "400k IOPS"
    older = {**stored, "normalized": {**stored["normalized"], "display": "as stored"}}
    assert explain_model.MetricModel.from_stored(older, "bytes/s").normalized["display"] == "as stored"


def _unit_row(figures, fit=None, normalized=(None, None, None)):
    low_high = dict(zip(("normalized", "normalized_low", "normalized_high"), normalized, strict=True))
    return FactorUnitFigures(figures=figures, fit=fit, **low_high)


def test_a_row_of_a_fit_stores_only_what_is_its_own_and_reads_as_a_whole_entry():
    """A public row leaves out what its fit holds (units, reference level) and what its columns hold (the normalized
    figure), and every empty part; read back it is the entry the fit gave, rounded as stored before."""
    entry = explain_model.MetricModel(
        model_units=7, reference={"value": 812594.0, "low": 808337.0, "high": 816874.0}, gap=-0.00272609,
        normalized={"value": 808574.0, "low": 802100.0, "high": 815100.0}, differs={"firmware"},
    )  # fmt: skip
    stored = entry.stored(of_a_fit=True)
    assert stored == {"gap": -0.00272609, "differs": ["firmware"]}
    fit = FactorFitSummary(n_units=7, reference_value=812594.1234, reference_low=808337.4, reference_high=816874.3)
    row = _unit_row(stored, fit, normalized=(808574.0001, 802100.2, 815100.1))
    read = explain_model.MetricModel.from_row(row, "IOPS")
    assert read.as_dict() == {**entry.as_dict(), "gap_display": "−0.3%",
                              "reference": {**entry.reference, "display": read.reference["display"]},
                              "normalized": {**entry.normalized, "display": read.normalized["display"]}}  # fmt: skip
    assert read.differs == {"firmware"} and read.normalized["display"].startswith("809k IOPS [")
    # a held unit's own fit is not stored: its row keeps them; a gap of 0 is a figure, kept
    held = entry.stored(of_a_fit=False)
    assert held["model_units"] == 7 and held["reference"] == entry.reference and "normalized" not in held
    assert explain_model.MetricModel(gap=0.0).stored(of_a_fit=True) == {"gap": 0.0}
    assert explain_model.MetricModel.from_row(_unit_row(held, None, (1.0, 1.0, 1.0)), "IOPS").model_units == 7
    # a unit the fit left out has its note and the fit's units, no reference level
    out = explain_model.MetricModel.from_row(_unit_row({"model_note": "not in the fit"}, fit), "IOPS")
    assert (out.model_units, out.reference, out.normalized, out.model_note) == (7, None, None, "not in the fit")
