"""What explains a drive's spread, as its page shows it: the stored effects of the factor model (FactorEffect, fitted
by analysis.factor_effects when the drive's public data changes), read in a few small queries.

The table lists the effects the data measures, each a ratio with its 95 % interval and the units and contributors
behind it, largest share of the explained variance first, at most MAX_ROWS (the rest are in the factor_effects
export). A level held by one unit says "1 unit — indicative"; levels that change together on the same units say
"not separable from …". A drive whose fits have too few units gets a sentence, never a table.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from analysis.headline import BY_KEY, HEADLINES
from analysis.models import FactorEffect, FactorFitSummary
from nvmedb_client import units

MAX_ROWS = 6
SHOWN = ("estimated", "indicative", "not_separable")
FIT_FIELDS = ("pk", "metric", "status", "reason", "n_units", "n_contributors")


@dataclass
class EffectRow:
    metric: str
    label: str
    effect: str  # "−75%", or "—" when not separable
    interval: str  # "[−77, −70]"
    units: str  # "1 unit, 1 contributor"
    status: str  # in words
    share: str  # of the explained variance
    per: str = ""


@dataclass
class Spread:
    rows: list[EffectRow] = field(default_factory=list)
    more: int = 0  # effects not in the table (the export has them)
    sentence: str = ""  # instead of a table
    constant: list[str] = field(default_factory=list)  # factors the same on every unit in the fits
    unrecorded: list[str] = field(default_factory=list)  # factors recorded for too few units to enter them
    differing: list[str] = field(default_factory=list)  # too few units: the factors the units differ in
    n_units: int = 0
    n_contributors: int = 0
    fitted: bool = False  # at least one metric was fitted


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _status(effect: FactorEffect) -> str:
    if effect.note:
        return effect.note
    return "estimated"


def row_of(effect: FactorEffect | _Effect) -> EffectRow:
    estimated = effect.ratio is not None
    return EffectRow(
        metric=BY_KEY[effect.metric].label if effect.metric in BY_KEY else effect.metric,
        label=effect.label,
        effect=units.change(effect.ratio) if estimated else "—",
        interval=f"[{units.change(effect.ci_low, '')}, {units.change(effect.ci_high, '')}]" if estimated else "",
        units=f"{_plural(effect.n_units, 'unit')}, {_plural(effect.n_contributors, 'contributor')}",
        status=_status(effect),
        share="" if effect.variance_share is None else f"{effect.variance_share * 100:.0f}%".replace("-", "−"),
        per=effect.per,
    )


def _order(effect: FactorEffect) -> tuple:
    """Largest share of the explained variance first, then the largest effect; not separable ones last."""
    share = effect.variance_share if effect.variance_share is not None else -math.inf
    size = abs(math.log(effect.ratio)) if effect.ratio else 0.0
    return (effect.ratio is None, -share, -size)


class _Effect(NamedTuple):
    """What the spread reads of an effect, as a tuple: a drive has hundreds of effects, and building a model instance
    and its fit for each was a third of a first drive page's CPU. `row_of` reads the same names."""

    fit_id: int
    metric: str
    factor: str
    level: str
    label: str
    status: str
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    variance_share: float | None
    n_units: int
    n_contributors: int
    note: str
    per: str


def spread_of(drive_id: int) -> Spread:
    """The drive's spread from its stored effects and their fits (every fit has a row per factor)."""
    effects = [
        _Effect(*row)
        for row in FactorEffect.objects.filter(drive_model_id=drive_id).order_by("pk").values_list(*_Effect._fields)
    ]
    spread = Spread()
    if not effects:
        return spread
    fit_ids = {e.fit_id for e in effects}
    fits = list(FactorFitSummary.objects.filter(pk__in=fit_ids).only(*FIT_FIELDS))
    order = {h.key: i for i, h in enumerate(HEADLINES)}
    fits.sort(key=lambda f: (-f.n_units, order.get(f.metric, 99)))
    spread.n_units, spread.n_contributors = fits[0].n_units, fits[0].n_contributors
    fitted = {f.metric for f in fits if f.status == "fitted"}
    spread.fitted = bool(fitted)
    # a factor is named "the same" or "too rarely recorded" only when it is so in every fit of the drive
    statuses: dict[str, set[str]] = {}
    labels: dict[str, str] = {}
    for effect in effects:
        statuses.setdefault(effect.factor, set()).add(effect.status)
        if not effect.level:
            labels.setdefault(effect.factor, effect.label)
    named = {key: labels.get(key, key) for key in statuses}
    spread.constant = sorted(named[key] for key, found in statuses.items() if found == {"constant"})
    spread.unrecorded = sorted(named[key] for key, found in statuses.items() if found == {"unrecorded"})
    if not fitted:
        spread.differing = sorted(named[key] for key, found in statuses.items() if "not_fitted" in found)
        needed = re.search(r"at least (\d+)", fits[0].reason)
        spread.sentence = (
            f"Measured on {_plural(fits[0].n_units, 'unit')} from {_plural(fits[0].n_contributors, 'contributor')}"
            ": too few to tell the effects of the conditions apart"
            + (f" (the model needs at least {needed.group(1)} units here)" if needed and spread.differing else "")
            + (f"; the units differ in {', '.join(spread.differing)}." if spread.differing else ".")
        )
        return spread
    shown = sorted((e for e in effects if e.metric in fitted and e.status in SHOWN), key=_order)
    spread.rows = [row_of(e) for e in shown[:MAX_ROWS]]
    spread.more = max(len(shown) - MAX_ROWS, 0)
    if not spread.rows:
        spread.sentence = (
            f"No recorded condition differs between these {_plural(spread.n_units, 'unit')}: nothing in the data "
            "explains a spread yet."
        )
    return spread
