"""Why is my unit different? Where one submission's unit sits among the other units of its drive model, and the
factors that explain a gap: the factor model's (analysis.explain_model), with the unit's normalized figure.

The population is every public, non-trial PTS run of the same drive model in other submissions and on other physical
units (a unit counts once: the median of its runs). A percentile reads "better than P% of the other units": the share
of other units this run beats, ties counting half, so the lowest unit is at 0, the highest at 100 and a unit tied with
every other one at 50. Below MIN_UNITS units (this one included) no percentile is given: one unit more or less would
move it by 25 points or more.

A file target (`--target-file`) is no unit of any drive: a file on the host's file system says nothing about one, so
it is placed among nothing and has no explanation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from operator import itemgetter

from analysis import aggregates
from analysis.explain_model import conditions_apart, metric_models, model_factors
from analysis.fit_inputs import POSITION, current_inputs
from analysis.headline import HEADLINES
from analysis.models import Flag, FlagKind, TestRun
from analysis.selectors import TRIAL_TARGET_KIND, extension_q, pts_q
from nvmedb_client import units

MIN_UNITS = 5


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


_PEER_COLUMNS = itemgetter(
    *(POSITION[name] for name in ("id", "unit_id", "headline", "firmware__revision", "host__cpu_model",
                                  "overprovisioning", "percentage_used", "pcie_link__speed_gts", "pcie_link__width",
                                  "submission_id"))
)  # fmt: skip


def _peers(runs: list[TestRun], public: list[tuple] | None = None) -> dict[object, _Peer]:
    """The other units among the drive's public PTS runs (a unit with only a surface run, an nvmedb extension, is no
    peer): `public` as analysis.fit_inputs.current_inputs reads them, when the caller has them."""
    first = runs[0]
    if public is None:
        public, _ = current_inputs(first.drive_model)
    own_units = {run.unit_id for run in runs if run.unit_id is not None}
    peers: dict[object, _Peer] = {}
    for pk, unit_id, headline, firmware, cpu, op, used, speed, width, submission_id in map(_PEER_COLUMNS, public):
        if unit_id in own_units or submission_id == first.submission_id:
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
    inputs = current_inputs(runs[0].drive_model, submission)  # the drive's runs, read once for both
    peers = _peers(runs, inputs[0])
    flags = list(
        Flag.objects.filter(submission=submission, kind=FlagKind.THERMAL_THROTTLE).exclude(extension_q("test_run__"))
    )
    main = runs[0]
    models = metric_models(submission, runs, inputs)
    compared, unrecorded = conditions_on_record(runs, peers)
    matching, without_effect = conditions_apart(models, compared)
    metrics = [{**asdict(p), **models[p.key].as_dict()} for p in metric_positions(runs, peers)]
    return {
        "drive_model": main.drive_model.name,
        "drive_model_slug": main.drive_model.slug,
        "min_units": MIN_UNITS,
        "population_units": len(peers) + 1,
        "conditions_compared": compared,
        "conditions_unrecorded": unrecorded,
        "conditions_matching": matching,
        "conditions_without_effect": without_effect,
        "model_note": model_note(metrics),
        "metrics": metrics,
        "factors": model_factors(runs, flags, models),
    }


def model_note(metrics: list[dict]) -> str:
    """One sentence when the factor model gives no figure for any metric (too few units): the percentiles stand."""
    if not metrics or any(m["normalized"] is not None for m in metrics):
        return ""
    most = max(metrics, key=lambda m: m["model_units"])
    return (most["model_note"] or "The factor model gives no figure for this unit.")[:-1] + (
        "; the positions are percentiles only."
    )
