"""Why is my unit different? Where one submission's unit sits among the other units of its drive model, and the
factors on record that explain a gap.

The population is every public, non-trial PTS run of the same drive model in other submissions and on other physical
units (a unit counts once: the median of its runs). A percentile reads "better than P% of the other units": the share
of other units this run beats, ties counting half, so the lowest unit is at 0, the highest at 100 and a unit tied with
every other one at 50. Below MIN_UNITS units (this one included) no percentile is given: one unit more or less would
move it by 25 points or more.

A file target (`--target-file`) is no unit of any drive: a file on the host's file system says nothing about one, so
it is placed among nothing and has no explanation.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field

from django.db.models import Max

from analysis import aggregates, pcie
from analysis.headline import HEADLINES
from analysis.models import Flag, Measurement, TestRun
from analysis.selectors import TRIAL_TARGET_KIND, extension_q, pts_q, public_pts_runs
from nvmedb_client import units

MIN_UNITS = 5
WEAR_GAP_POINTS = 20  # percentage-used points above the other units' median
OP_GAP = 0.05  # share of raw capacity below the other units' median


@dataclass(frozen=True)
class MetricPosition:
    key: str
    label: str
    unit: str
    value: float
    value_display: str
    higher_is_better: bool
    population_units: int  # this unit included
    percentile: float | None
    position: str


@dataclass(frozen=True)
class Factor:
    kind: str
    label: str
    reason: str
    evidence: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Peer:
    """One other unit of the model: its headline values (averaged over its runs) and its conditions."""

    values: dict[str, list[float]]
    firmware: str
    cpu: str
    overprovisioning: float | None
    percentage_used: int | None
    link: tuple[float | None, int | None]


def percentile_among(value: float, others: list[float], *, higher_is_better: bool) -> float | None:
    """Share of `others` this value beats, ties counting half, in percent; None without others."""
    if not others:
        return None
    beaten = sum(1 for other in others if (other < value if higher_is_better else other > value))
    tied = sum(1 for other in others if other == value)
    return 100 * (beaten + tied / 2) / len(others)


def position_text(percentile: float | None, population_units: int) -> str:
    if population_units <= 1:
        return "the only unit of this model measured so far: nothing to compare with"
    if population_units < MIN_UNITS or percentile is None:
        return f"not enough units: {population_units} units of this model, a percentile needs {MIN_UNITS}"
    return f"better than {percentile:.0f}% of the {population_units - 1} other units"


def _peers(runs: list[TestRun]) -> dict[object, _Peer]:
    first = runs[0]
    rows = (
        public_pts_runs()  # a unit with only a surface run (an nvmedb extension) is no peer
        .filter(drive_model_id=first.drive_model_id)
        .exclude(submission_id=first.submission_id)
        .values_list(
            "pk", "unit_id", "headline", "firmware__revision", "host__cpu_model", "overprovisioning",
            "percentage_used", "pcie_link__speed_gts", "pcie_link__width",
        )
        .order_by("pk")
    )  # fmt: skip
    own_units = {run.unit_id for run in runs if run.unit_id is not None}
    peers: dict[object, _Peer] = {}
    for pk, unit_id, headline, firmware, cpu, op, used, speed, width in rows:
        if unit_id in own_units:
            continue
        key = unit_id if unit_id is not None else f"run-{pk}"
        peer = peers.setdefault(key, _Peer({}, firmware or "", cpu or "", op, used, (speed, width)))
        for metric, value in (headline or {}).items():
            peer.values.setdefault(metric, []).append(float(value))
    return peers


def metric_positions(runs: list[TestRun], peers: dict[object, _Peer]) -> list[MetricPosition]:
    positions = []
    by_test = {run.test: run for run in runs}
    for headline in HEADLINES:
        run = by_test.get(headline.test)
        value = (run.headline or {}).get(headline.key) if run else None
        if value is None:
            continue
        # one value per unit, the median of its runs, as the aggregates count (analysis.aggregates.unit_values)
        others = [aggregates.median(p.values[headline.key]) for p in peers.values() if headline.key in p.values]
        population = len(others) + 1
        percentile = percentile_among(value, others, higher_is_better=headline.higher_is_better)
        shown = percentile if population >= MIN_UNITS else None
        positions.append(
            MetricPosition(
                key=headline.key,
                label=headline.label,
                unit=headline.unit,
                value=float(value),
                value_display=units.by_unit(headline.unit, value),
                higher_is_better=headline.higher_is_better,
                population_units=population,
                percentile=None if shown is None else round(shown, 1),
                position=position_text(shown, population),
            )
        )
    return positions


def _most_common(values: list[str]) -> tuple[str, int]:
    counted = Counter(v for v in values if v)
    return counted.most_common(1)[0] if counted else ("", 0)


def _gts(speed: float | None, width: int | None) -> str:
    return f"{speed:g} GT/s x{width}" if speed is not None and width else "unknown"


def _raw(speed: float | None, width: int | None) -> float | None:
    if speed is None or not width or pcie.generation(speed) is None:
        return None
    return pcie.raw_bandwidth(speed, width)


def _moved(runs: list[TestRun], usable: float | None) -> tuple[str, dict[str, str]]:
    """ ", this run moved P% of it" and its evidence, from the busiest fio run's share of the usable bandwidth."""
    if not usable:
        return "", {}
    busiest = Measurement.objects.filter(test_run__in=runs).aggregate(busiest=Max("link_utilization"))["busiest"]
    evidence = {"usable_bandwidth": units.bandwidth(usable)}
    text = f": usable {units.bandwidth(usable)}"
    if busiest is not None:
        text += f", this run moved {units.percent(busiest)} of it"
        evidence["moved"] = units.bandwidth(busiest * usable)
        evidence["link_utilization"] = units.percent(busiest)
    return text, evidence


def link_factor(runs: list[TestRun], peers: dict[object, _Peer]) -> Factor | None:
    """A link trained below what the drive supports, or (in a slot that allows no more) slower than most others'."""
    link = next((run.pcie_link for run in runs if run.pcie_link_id), None)
    if link is None:
        return None
    mine = _gts(link.speed_gts, link.width)
    if link.below_capability:
        capable = _gts(link.capable_speed_gts, link.capable_width)
        moved, evidence = _moved(runs, link.usable_bandwidth_bytes_per_s)
        full = sum(1 for p in peers.values() if p.link == (link.capable_speed_gts, link.capable_width))
        if peers:
            evidence["other_units_at_capability"] = f"{full} of {len(peers)}"
        reason = f"Link trained at {mine} though the drive is capable of {capable}{moved}."
        return Factor("link_below_capability", "Link below capability", reason,
                      {"negotiated": mine, "capable": capable, **evidence})  # fmt: skip
    links = Counter(p.link for p in peers.values() if _raw(*p.link) is not None)
    if not links or _raw(link.speed_gts, link.width) is None:
        return None
    (common_speed, common_width), count = links.most_common(1)[0]
    if _raw(link.speed_gts, link.width) >= _raw(common_speed, common_width):
        return None
    common = _gts(common_speed, common_width)
    moved, evidence = _moved(runs, link.usable_bandwidth_bytes_per_s)
    reason = (
        f"Link at {mine}, all its slot allows, where most other units ran at {common} ({count} of {len(peers)}){moved}."
    )
    evidence = {"negotiated": mine, "most_common": common, "units_on_most_common": f"{count} of {len(peers)}",
                **evidence}  # fmt: skip
    return Factor("link_slower_than_others", "Slower link than other units", reason, evidence)


def bus_bound_factor(flags: list[Flag], link) -> Factor | None:
    bound = [flag for flag in flags if flag.kind == "bus_bound"]
    if not bound:
        return None
    busiest = max((f.measurement.link_utilization or 0 for f in bound if f.measurement), default=None)
    evidence = {"bus_bound_fio_runs": str(len(bound))}
    if busiest:
        evidence["busiest"] = units.percent(busiest)
    usable = link.usable_bandwidth_bytes_per_s if link else None
    reason = (
        f"{len(bound)} fio run{'s' if len(bound) != 1 else ''} moved at least "
        f"{units.percent(pcie.BUS_BOUND_UTILIZATION)} of "
        f"{'the ' + units.bandwidth(usable) if usable else 'what'} the link can carry: the bus, not the drive, set "
        f"{'these numbers' if len(bound) != 1 else 'this number'}."
    )
    return Factor("bus_bound", "Bus-bound", reason, evidence)


def thermal_factor(flags: list[Flag], runs: list[TestRun]) -> Factor | None:
    hot = [flag for flag in flags if flag.kind == "thermal_throttle"]
    if not hot:
        return None
    evidence = {}
    hottest = max((run.max_temperature_k for run in runs if run.max_temperature_k is not None), default=None)
    if hottest is not None:
        evidence["hottest"] = units.temperature(hottest)
    reason = "The drive throttled: " + "; ".join(dict.fromkeys(flag.reason.rstrip(".") for flag in hot)) + "."
    return Factor("thermal_throttle", "Thermal throttling", reason, evidence)


def wear_factor(run: TestRun, peers: dict[object, _Peer]) -> Factor | None:
    others = [p.percentage_used for p in peers.values() if p.percentage_used is not None]
    if run.percentage_used is None or not others:
        return None
    median = statistics.median(others)
    if run.percentage_used - median < WEAR_GAP_POINTS:
        return None
    reason = (
        f"The drive had used {run.percentage_used}% of its rated endurance before the test; the other units' median "
        f"is {median:g}%: a worn drive has less spare area and retries more."
    )
    evidence = {"percentage_used": f"{run.percentage_used}%", "others_median": f"{median:g}%"}
    return Factor("wear", "Wear", reason, evidence)


def firmware_factor(run: TestRun, peers: dict[object, _Peer]) -> Factor | None:
    common, count = _most_common([p.firmware for p in peers.values()])
    mine = run.firmware.revision if run.firmware_id else ""
    if not mine or not common or mine == common:
        return None
    reason = (
        f"Firmware {mine}; the model's most common firmware is {common} ({count} of {len(peers)} other units): "
        f"firmware changes garbage collection and caching."
    )
    evidence = {"firmware": mine, "most_common": common, "units_on_most_common": f"{count} of {len(peers)}"}
    return Factor("firmware", "Firmware differs", reason, evidence)


def overprovisioning_factor(run: TestRun, peers: dict[object, _Peer]) -> Factor | None:
    others = [p.overprovisioning for p in peers.values() if p.overprovisioning is not None]
    if run.overprovisioning is None or not others:
        return None
    median = statistics.median(others)
    if median - run.overprovisioning < OP_GAP:
        return None
    reason = (
        f"{units.percent(run.overprovisioning)} of raw capacity held back as over-provisioning against a median of "
        f"{units.percent(median)} for the other units: less spare area slows sustained random writes."
    )
    evidence = {"overprovisioning": units.percent(run.overprovisioning), "others_median": units.percent(median)}
    return Factor("overprovisioning", "Over-provisioning below others", reason, evidence)


def host_cpu_factor(run: TestRun, peers: dict[object, _Peer]) -> Factor | None:
    mine = run.host.cpu_model if run.host_id else ""
    cpus = [p.cpu for p in peers.values()]
    common, count = _most_common(cpus)
    if not mine or not common or mine in cpus:
        return None
    reason = (
        f"Host CPU {mine}; no other unit was measured on it, most ran on {common} ({count} of {len(peers)}): "
        f"the host can cap IOPS at high queue depths."
    )
    evidence = {"cpu": mine, "most_common": common, "units_on_most_common": f"{count} of {len(peers)}"}
    return Factor("host_cpu", "Host CPU differs", reason, evidence)


def conditions_on_record(runs: list[TestRun], peers: dict[object, _Peer]) -> tuple[list[str], list[str]]:
    """The conditions this unit and at least one other unit both record (so "they match" can be said of them), and
    those this unit does not record at all (nothing can be said of them)."""
    main = runs[0]
    own = {
        "PCIe link": main.pcie_link_id is not None and main.pcie_link.speed_gts is not None,
        "temperature": any(run.max_temperature_k is not None for run in runs),
        "wear": main.percentage_used is not None,
        "firmware": main.firmware_id is not None,
        "over-provisioning": main.overprovisioning is not None,
        "host CPU": main.host_id is not None and bool(main.host.cpu_model),
    }
    others = {
        "PCIe link": any(peer.link[0] is not None for peer in peers.values()),
        "temperature": False,  # explained by a throttle flag of its own, never by comparison with other units
        "wear": any(peer.percentage_used is not None for peer in peers.values()),
        "firmware": any(peer.firmware for peer in peers.values()),
        "over-provisioning": any(peer.overprovisioning is not None for peer in peers.values()),
        "host CPU": any(peer.cpu for peer in peers.values()),
    }
    compared = [name for name, known in own.items() if known and others[name]]
    unrecorded = [name for name, known in own.items() if not known]
    return compared, unrecorded


def explain_submission(submission) -> dict | None:
    """The summary for a submission's page and API, or None when it holds no PTS test run (the surface, an nvmedb
    extension, has no headline to place and its fio runs explain no PTS figure) or measured a file, not a drive."""
    runs = list(
        TestRun.objects.filter(pts_q(), submission=submission)
        .select_related("drive_model", "firmware", "host", "pcie_link")
        .order_by("test")
    )
    if not runs or any(run.target_kind == TRIAL_TARGET_KIND for run in runs):
        return None
    peers = _peers(runs)
    flags = list(
        Flag.objects.filter(submission=submission).exclude(extension_q("test_run__")).select_related("measurement")
    )
    main = runs[0]
    factors = [
        link_factor(runs, peers),
        bus_bound_factor(flags, main.pcie_link),
        thermal_factor(flags, runs),
        wear_factor(main, peers),
        firmware_factor(main, peers),
        overprovisioning_factor(main, peers),
        host_cpu_factor(main, peers),
    ]
    compared, unrecorded = conditions_on_record(runs, peers)
    return {
        "drive_model": main.drive_model.name,
        "drive_model_slug": main.drive_model.slug,
        "min_units": MIN_UNITS,
        "population_units": len(peers) + 1,
        "conditions_compared": compared,
        "conditions_unrecorded": unrecorded,
        "metrics": [asdict(p) for p in metric_positions(runs, peers)],
        "factors": [asdict(f) for f in factors if f is not None],
    }
