"""Why is my unit different? The factor model's answer (analysis.factor_model) for one submission's unit.

Per headline metric the drive's public units plus this unit are fitted (a held unit's fit, the public units and it,
is stored apart from the drive's public fit: analysis.factor_effects.refresh_held_figures). The unit gets its gap to the
model's reference level (a typical unit at the reference conditions: capable link, modal firmware, no throttling,
median spare and wear), its normalized figure (what it would do at the reference conditions) with its interval, and
the lines of `FactorFit.explain`: a factor is named only when the unit's level differs from the reference, the
effect's interval excludes no effect and the unit's gap has the effect's sign.

The lines are grouped by factor into the explanation's `factors`: the link-limited factor ("Bus-bound": the link
capped the unit below what the drive reaches on a faster link, never said of a unit on a link that carries what the
drive does elsewhere), a link below capability, spare area in both directions, wear, firmware, host CPU, kernel, I/O
scheduler; and one thermal line, said once, with the drive's thresholds, the hottest temperature and the tests whose
throttle counters grew.

A page reads what the refit tasks stored (analysis.factor_figures calls `unit_model` on their fits): it never fits, so
scipy and statsmodels are never imported by a page view. A held submission's page that finds its figures stale
queues their refit and says they are being refreshed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

from django.db import transaction

from analysis.fit_inputs import current_inputs, inputs_digest, unit_key, unit_number
from analysis.headline import HEADLINES
from analysis.models import FactorUnitFigures, Flag, FlagKind, TestRun
from analysis.tasks import queue_held_figures
from nvmedb_client import units
from submissions.models import SubmissionStatus

# The factor model's keys as the explanation's factor kinds (the kinds the API already answers, plus two).
KINDS = {
    "link_limited": ("bus_bound", "Bus-bound"),
    "link_below_capability": ("link_below_capability", "Link below capability"),
    "throttled": ("thermal_throttle", "Thermal throttling"),
    "spare_fraction": ("overprovisioning", "Over-provisioning"),
    "percentage_used": ("wear", "Wear"),
    "firmware": ("firmware", "Firmware differs"),
    "host_cpu": ("host_cpu", "Host CPU differs"),
    "kernel": ("kernel", "Kernel differs"),
    "scheduler": ("scheduler", "I/O scheduler differs"),
}
COUNTERS_GREW = "throttle counters grew"
REFRESHING = (
    "The factor model's figures are being refreshed (the drive's data changed since its last fit, which runs in the "
    "background)."
)
NOT_KEPT = "The factor model's figures are kept for published and held units only."
NOT_IN_FIT = "This unit is not in the factor model's fit: a factor the model uses is not recorded for it."


@dataclass
class MetricModel:
    """One headline metric's figures from the factor model, as the explanation's metric entry adds them."""

    model_units: int = 0
    model_note: str = ""  # why there are no figures, in one sentence; "" when there are
    reference: dict | None = None  # the model's reference level, with its interval
    gap: float | None = None  # the unit's figure ÷ the reference level − 1
    gap_display: str = ""  # "−75%"
    normalized: dict | None = None  # the unit at the reference conditions, with its interval
    lines: list[dict] = field(default_factory=list)
    differs: set[str] = field(default_factory=set)  # the factors at which the unit is not at the reference

    def stored(self, *, of_a_fit: bool) -> dict:
        """The entry as the refit stores it beside the row's normalized columns (analysis.factor_figures): numbers,
        no text, no empty part, and, for a row of a stored fit (`of_a_fit`), nothing that is the fit's (its units,
        its reference level): MetricModel.from_row puts them back. A refit stores thousands of these at a time."""
        entry = {} if of_a_fit else {"model_units": self.model_units, "reference": self.reference}
        entry.update(model_note=self.model_note, gap=self.gap, lines=self.lines, differs=sorted(self.differs))
        return {key: value for key, value in entry.items() if value not in ("", [], None)}  # a gap of 0 is kept

    @classmethod
    def from_row(cls, row, unit: str) -> MetricModel:
        """A stored FactorUnitFigures row's entry, shown in `unit`: its normalized figure from the row's columns and,
        for a row of a public fit, the fit's units and reference level from the fit (`row.fit`)."""
        data = dict(row.figures)
        if "normalized" not in data and row.normalized is not None:
            data["normalized"] = _rounded(row.normalized, row.normalized_low, row.normalized_high)
        fit = row.fit
        if fit is not None:
            data.setdefault("model_units", fit.n_units)
            if "reference" not in data and data.get("gap") is not None and fit.reference_value is not None:
                data["reference"] = _rounded(fit.reference_value, fit.reference_low, fit.reference_high)
        return cls.from_stored(data, unit)

    @classmethod
    def from_stored(cls, data: dict, unit: str) -> MetricModel:
        """A stored entry, its figures shown in `unit` and its gap as a signed percentage (the refit stores their
        numbers only: a page formats the one unit it shows, where the refit would format every unit of the drive;
        an entry stored with its text keeps it)."""
        model = cls(**{**data, "differs": set(data.get("differs", []))})
        if model.normalized is not None and "display" not in model.normalized:
            model.normalized = {**model.normalized, "display": _display(unit, model.normalized)}
        if model.reference is not None and "display" not in model.reference:
            model.reference = {**model.reference, "display": _display(unit, model.reference)}
        if model.gap is not None and not model.gap_display:
            model.gap_display = _signed(model.gap)
        return model

    def as_dict(self) -> dict:
        return {
            "model_units": self.model_units,
            "model_note": self.model_note,
            "reference": self.reference,
            "gap": self.gap,
            "gap_display": self.gap_display,
            "normalized": self.normalized,
            "lines": self.lines,
        }


def _numbers(estimate) -> dict:
    return _rounded(estimate.value, estimate.low, estimate.high)


def _rounded(value: float, low: float, high: float) -> dict:
    return {"value": _round(value), "low": _round(low), "high": _round(high)}


def _display(unit: str, figure: dict) -> str:
    """An estimate's numbers as the site shows them ("6.50 GB/s [6.41 GB/s, 6.59 GB/s]")."""
    low_text, high_text = units.by_unit(unit, figure["low"]), units.by_unit(unit, figure["high"])
    display = units.by_unit(unit, figure["value"])
    if low_text != high_text:  # a unit at the reference conditions is its own figure, with no interval to quote
        display += f" [{low_text}, {high_text}]"
    return display


def _round(value: float) -> float:
    """6 significant digits: the fit's last bits differ between BLAS builds; the API answers the same everywhere.
    Every number of a stored figures document passes here, so a fit that gave no finite figure is refused here: JSON
    has no NaN (orjson, which writes the documents, would write it as null, a figure silently missing)."""
    rounded = float(f"{float(value):.6g}")
    if not math.isfinite(rounded):
        raise ValueError(f"the factor model gave a figure that is not a finite number: {rounded}")
    return rounded


def unit_model(fitted, headline, key) -> MetricModel:
    """The explanation's figures and lines for unit `key` from a fit (analysis.factor_model.FactorFit) of one
    headline metric: what the refit task stores (analysis.factor_figures) and a page reads (the normalized figure as
    numbers, shown in its unit by MetricModel.from_stored)."""
    return unit_models(fitted, headline, [key])[0]


def unit_models(fitted, headline, keys) -> list[MetricModel]:
    """unit_model of each of `keys`, what is the same for every unit of the fit worked out once: the units whose
    lines `explain` is asked for (FactorFit.explainable: a refit's hundreds of units, most with none) and the factors
    each unit is away from the reference in."""
    if fitted.status != "fitted" or fitted.reference_level is None:
        note = fitted.reason.replace("too few units: ", "Too few units for the factor model: ") + "."
        return [MetricModel(model_units=fitted.n_units, model_note=note) for _ in keys]
    reference = _numbers(fitted.reference_level)  # the same for each unit; shown in its unit when read
    explainable = fitted.explainable().tolist()
    differs = _differs_by_unit(fitted)
    models = []
    for key in keys:
        model = MetricModel(model_units=fitted.n_units)
        models.append(model)
        figures = fitted.units.get(key)
        if figures is None:
            model.model_note = NOT_IN_FIT
            continue
        model.reference = dict(reference)
        model.gap = _round(figures.observed / fitted.reference_level.value - 1)  # a percentage when read
        model.normalized = _numbers(figures.normalized)  # shown in its unit when read (MetricModel.from_stored)
        model.differs = differs[figures.index]
        if explainable[figures.index]:
            model.lines = _lines(fitted, headline, key, figures)
    return models


def _lines(fitted, headline, key, figures) -> list[dict]:
    lines = []
    for line in fitted.explain(key, headline.label):
        c = line.contribution
        above = _above_reference(fitted, figures, line.factor)
        lines.append(
            {"metric": headline.label, "factor": line.factor, "label": line.label, "gap": _round(line.gap),
             "effect": _round(c.value - 1), "low": _round(c.low - 1), "high": _round(c.high - 1),
             "status": line.status, "text": line.text, "above_reference": above}
        )  # fmt: skip
    return lines


def metric_models(submission, runs: list[TestRun], inputs=None) -> dict[str, MetricModel]:
    """Per headline metric this submission measured: the factor model's figures and lines for its unit, as the refit
    task stored them (analysis.factor_figures; a page never fits). Figures fitted on other runs than the ones a fit
    would read now (the drive's data changed since) are not shown: the page says they are being refreshed. The runs
    are compared by their digest (analysis.fit_inputs), read in one query (`inputs`, when the caller read them with
    current_inputs): no rows are built."""
    public, own = inputs if inputs is not None else current_inputs(runs[0].drive_model, submission)
    digest, not_public = inputs_digest(public + own), bool(own)
    by_test = {run.test: run for run in runs}
    stored = {
        (f.metric, f.unit_key): f
        for f in FactorUnitFigures.objects.select_related("fit").filter(
            drive_model=runs[0].drive_model,
            submission=submission if not_public else None,
            unit_key__in={unit_number(unit_key(run.unit_id, run.pk)) for run in by_test.values()},
        )  # this submission's units only: a drive's public fit holds a row per unit of every submission
    }
    out: dict[str, MetricModel] = {}
    for headline in HEADLINES:
        run = by_test.get(headline.test)
        if run is None or (run.headline or {}).get(headline.key) is None:
            continue
        record = stored.get((headline.key, unit_number(unit_key(run.unit_id, run.pk))))
        if not_public and submission.status != SubmissionStatus.HELD:
            out[headline.key] = MetricModel(model_note=NOT_KEPT)
        elif record is None or record.input_digest != digest:
            out[headline.key] = MetricModel(model_note=REFRESHING)
        else:
            out[headline.key] = MetricModel.from_row(record, headline.unit)
    if (
        not_public
        and submission.status == SubmissionStatus.HELD
        and any(model.model_note == REFRESHING for model in out.values())
    ):
        # a held unit's figures are refit when it is viewed, not on every change of the drive (analysis.factor_effects)
        transaction.on_commit(partial(queue_held_figures, submission.pk))
    return out


def _differs_by_unit(fitted) -> list[set[str]]:
    """Per unit of the fit (UnitFigures.index): the factors at which it is away from the reference, as the model's
    columns count it, read from the fit's levels per unit (FactorFit.unit_levels): a continuous factor's mean at half
    a step or more from the reference, a flag set on any run, a category level other than the reference on any run."""
    return [set(keys) for keys in _differs_sorted(fitted)]


def _differs_sorted(fitted) -> list[list[str]]:
    """_differs_by_unit, each unit's factors as the sorted list a stored entry holds (MetricModel.stored), counted
    on the levels' arrays (numpy's, so no per-unit Python)."""
    # why: the factor_model package loads numpy and statsmodels; a page view reads stored fits without them
    from analysis.factor_model.data import BY_KEY

    away: list[list[str]] = [[] for _ in range(fitted.n_units)]
    for key in sorted(fitted.reference):  # so each unit's list is sorted as it grows
        reference, spec, levels = fitted.reference[key], BY_KEY[key], fitted.unit_levels[key]
        if spec.kind == "continuous":
            marked = abs(levels.means - reference) >= spec.step / 2
        elif spec.kind == "bool":
            marked = levels.set_counts > 0
        else:
            others = [i for i, level in enumerate(levels.levels) if level != reference]
            if not others:
                continue
            marked = levels.counts[:, others].any(axis=1)
        for unit in marked.nonzero()[0].tolist():
            away[unit].append(key)
    return away


def stored_entries(fitted, headline, keys) -> list[dict]:
    """What a public fit's row of each of `keys` stores, unit_model(fitted, headline, key).stored(of_a_fit=True),
    without making each unit's MetricModel: a refit stores thousands, most of them a gap and the factors the unit
    differs in. The numbers are rounded and refused as unit_models does; a fit with a number it would refuse goes
    through unit_models, to fail as it does."""
    if fitted.status != "fitted" or fitted.reference_level is None:
        return [model.stored(of_a_fit=True) for model in unit_models(fitted, headline, keys)]
    _numbers(fitted.reference_level)  # refused if not finite, as unit_models does
    reference = fitted.reference_level.value
    explainable = fitted.explainable().tolist()
    differs = _differs_sorted(fitted)
    figures_of = [fitted.units.get(key) for key in keys]
    in_fit = [figures for figures in figures_of if figures is not None]
    gaps = [float(f"{figures.observed / reference - 1:.6g}") for figures in in_fit]  # _round, inline
    normalized = [number for f in in_fit for number in (f.normalized.value, f.normalized.low, f.normalized.high)]
    if not (all(map(math.isfinite, gaps)) and all(abs(number) < 1e308 for number in normalized)):
        # what _round would refuse (a number below 1e308 rounds to at most 1e308): unit_models refuses it as it does
        return [model.stored(of_a_fit=True) for model in unit_models(fitted, headline, keys)]
    gap_of = iter(gaps)
    out = []
    for key, figures in zip(keys, figures_of, strict=True):
        if figures is None:
            out.append({"model_note": NOT_IN_FIT})
            continue
        entry = {"gap": next(gap_of)}
        if explainable[figures.index] and (lines := _lines(fitted, headline, key, figures)):
            entry["lines"] = lines
        if away := differs[figures.index]:
            entry["differs"] = list(away)
        out.append(entry)
    return out


# The factor model's factors as the conditions the explanation names (conditions_on_record)
CONDITIONS = {
    "link_limited": "PCIe link", "link_below_capability": "PCIe link", "throttled": "temperature",
    "spare_fraction": "over-provisioning", "percentage_used": "wear", "firmware": "firmware", "host_cpu": "host CPU",
}  # fmt: skip


def conditions_apart(models: dict[str, MetricModel], compared: list[str]) -> tuple[list[str], list[str]]:
    """Of the compared conditions: those at which this unit is at the model's reference in every fitted metric (the
    ones that "match"), and those at which it differs though no line names them (no effect beyond the noise)."""
    named = {CONDITIONS.get(line["factor"]) for m in models.values() for line in m.lines}
    differ = {CONDITIONS.get(key) for m in models.values() for key in m.differs}
    matching = [name for name in compared if name not in differ]
    return matching, [name for name in compared if name in differ and name not in named]


def _above_reference(fitted, figures, factor: str) -> bool | None:
    """A continuous factor (spare, wear): whether the unit is above the reference; None for the others."""
    # why: the factor_model package loads numpy and statsmodels; a page view reads stored fits without them
    from analysis.factor_model.data import BY_KEY

    spec = BY_KEY[factor]
    if spec.kind != "continuous":
        return None
    values = [float(v) for v in figures.unit.values(spec)]
    return sum(values) / len(values) > fitted.reference[factor]


def _link(run: TestRun, capable: bool = False) -> str:
    link = run.pcie_link
    if link is None:
        return ""
    speed, width = (link.capable_speed_gts, link.capable_width) if capable else (link.speed_gts, link.width)
    return f"{speed:g} GT/s x{width}" if speed and width else ""


def _link_evidence(run: TestRun, *, capable: bool) -> dict[str, str]:
    link, evidence = run.pcie_link, {"negotiated": _link(run)}
    if capable:
        evidence["capable"] = _link(run, capable=True)
    if link.usable_bandwidth_bytes_per_s:
        evidence["usable_bandwidth"] = units.bandwidth(link.usable_bandwidth_bytes_per_s)
    return {k: v for k, v in evidence.items() if v}


def _intro(kind: str, lines: list[dict], main: TestRun) -> str:
    """The factor's first sentence: what differs for this unit."""
    line = lines[0]
    if kind == "link_limited":
        link = line["label"].split(" (")[0].removeprefix("link ")
        figures = "these figures" if len(lines) > 1 else "this figure"
        return (
            f"Its link ({link}) capped it below what the drive reaches on a faster link: the bus, not the drive, set "
            f"{figures}."
        )
    if kind == "link_below_capability":
        capable = _link(main, capable=True)
        return f"Its link trained at {_link(main) or 'less'} though the drive and its slot can do {capable or 'more'}."
    if kind == "spare_fraction":
        more = "More" if line["above_reference"] else "Less"
        return f"{more} spare area than the reference unit ({line['label']}): spare area sets sustained write speed."
    if kind == "percentage_used":
        more = "More" if line["above_reference"] else "Less"
        return f"{more} worn before the test than the reference unit ({line['label']}): wear costs spare area."
    return f"Its {line['label']}."


def thermal_sentence(runs: list[TestRun], flags: list[Flag]) -> tuple[str, dict[str, str]]:
    """One sentence: the tests whose throttle counters grew (or that ran hot), the hottest temperature and the
    drive's warning and critical thresholds."""
    by_run = {run.pk: run for run in runs}
    grew, hot = {}, {}
    for flag in flags:
        run = by_run.get(flag.test_run_id)
        name = run.get_test_display() if run else "the submission"
        (grew if COUNTERS_GREW in flag.reason else hot)[name] = True
    hottest = max((r.max_temperature_k for r in runs if r.max_temperature_k is not None), default=None)
    warning = next((r.warning_temperature_k for r in runs if r.warning_temperature_k), None)
    critical = next((r.critical_temperature_k for r in runs if r.critical_temperature_k), None)
    parts = []
    if grew:
        parts.append(f"throttle time grew during the {_and(list(grew))} test{'s' if len(grew) > 1 else ''}")
    if hot:
        parts.append(f"it ran hot during the {_and(list(hot))} test{'s' if len(hot) > 1 else ''}")
    evidence = {}
    if hottest is not None:
        reached = f"the drive reached {units.temperature(hottest)}"
        thresholds = (("warning", warning), ("critical", critical))
        limits = [f"{name} threshold {units.temperature(k)}" for name, k in thresholds if k]
        parts.append(reached + (f" ({', '.join(limits)})" if limits else ", its thresholds are not recorded"))
        evidence["hottest"] = units.temperature(hottest)
    if warning:
        evidence["warning_threshold"] = units.temperature(warning)
    if critical:
        evidence["critical_threshold"] = units.temperature(critical)
    if grew:
        evidence["throttle_time_grew_in"] = ", ".join(grew)
    return "The drive throttled: " + "; ".join(parts) + ".", evidence


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def model_factors(runs: list[TestRun], flags: list[Flag], models: dict[str, MetricModel]) -> list[dict]:
    """The explanation's factors: the model's lines grouped by factor (largest effect first), the thermal one said
    once with its thresholds even where the model separates no effect of it from the noise."""
    main = runs[0]
    grouped: dict[str, list[dict]] = {}
    for model in models.values():
        for line in model.lines:
            grouped.setdefault(line["factor"], []).append(line)
    hot = [flag for flag in flags if flag.kind == FlagKind.THERMAL_THROTTLE]
    if hot:
        grouped.setdefault("throttled", [])
    factors = []
    for key, lines in grouped.items():
        kind, label = KINDS.get(key, (key, key))
        lines = sorted(lines, key=lambda line: -abs(line["effect"]))
        evidence = {
            line["metric"]: f"gap {_signed(line['gap'])}, accounts for {_signed(line['effect'])} "
            f"[{_signed(line['low'], '')}, {_signed(line['high'], '')}]"
            for line in lines
        }
        if key == "throttled":
            reason, thermal = thermal_sentence(runs, hot)
            evidence = {**thermal, **evidence}
            if not lines and any(m.reference for m in models.values()):
                reason += " The factor model separates no effect of it on a headline figure from the noise."
        else:
            reason = _intro(key, lines, main)
            if key in ("link_limited", "link_below_capability") and main.pcie_link is not None:
                evidence = {**_link_evidence(main, capable=key == "link_below_capability"), **evidence}
        largest = max((abs(line["effect"]) for line in lines), default=0)
        entry = {"kind": kind, "label": label, "reason": reason, "evidence": evidence}
        factors.append((largest, {**entry, "lines": [line["text"] for line in lines]}))
    return [entry for _largest, entry in sorted(factors, key=lambda pair: -pair[0])]


def _signed(change: float, unit: str = "%") -> str:
    return units.change(1 + change, unit)
