"""Outliers judged on what the recorded factors leave unexplained (issue 20), one voice per independent contributor.

`outlier_flags(test_runs)` votes on each headline metric of a submission being ingested. Its peers are the published,
public runs of the same drive model, profile and edition, of other submissions and other uploaders, from contributors
past review (submissions.review): a handful of fresh accounts cannot make an established result look odd, nor can
the submitter's own uploads.

Per metric the factor model (analysis.factor_model) is fitted on the peers' units plus this unit, and the vote is on
the residual: log(metric) minus what the model predicts at the unit's recorded conditions (link, throttling, spare
area, wear, firmware, host CPU, kernel, scheduler). So a Gen2 unit whose gap its link explains is not an outlier,
while a unit at the reference conditions with the same gap is. A unit alone at a measured condition (its link,
thermal throttling, spare area, wear) has that effect fitted to it exactly: it is published with its explanation ("1
unit — indicative"). A unit alone at a firmware, host CPU, kernel or scheduler is judged as if at the reference
level: one unit cannot tell such a level from its own difference. A peer unit alone at a measured condition has no
residual to give (the fit passes through it), so it is no voice. The residuals are summarised as the raw values
were: a unit's runs are one row of the fit, a contributor's units one voice (their median), and the unit's residual
is compared with those voices by the modified z-score (analysis.aggregates.robust_z, at least MIN_PEERS voices).

Where no model can be fitted (too few units for the factors that vary) or the model cannot place the unit (a factor
it uses is not recorded on the unit's runs), the vote falls back to the raw headline value, as before the model, and
the reason says so. The verdict is a label for readers, never a hold (analysis.services.store_submission).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from analysis import aggregates
from analysis.factor_model import FactorFit, fit
from analysis.factor_model.data import BY_KEY as FACTORS_BY_KEY
from analysis.factor_rows import public_runs, rows_of
from analysis.fit_inputs import unit_key
from analysis.headline import BY_KEY
from analysis.models import TestRun
from analysis.pts import surface
from analysis.selectors import is_trial, trial_q
from nvmedb_client import units
from submissions.models import SubmissionStatus
from submissions.review import established_uploader_ids

FACTOR_LABELS = {key: factor.label for key, factor in FACTORS_BY_KEY.items()}


def outlier_flags(test_runs: Iterable[TestRun]) -> list[tuple[TestRun, str]]:
    """The runs (of one submission) with a headline metric far from their peers after the factor model, each with
    the reason in words; one entry per run and metric."""
    runs = [run for run in test_runs if run.headline and run.test != surface.TEST]
    if not runs:
        return []
    peer_rows, own_rows = _peer_and_own_rows(runs)
    found = rows_of(peer_rows + own_rows)
    by_test = {run.test: run for run in runs}
    flags = []
    for key, rows in found.rows.items():
        run = by_test.get(BY_KEY[key].test)
        value = (run.headline or {}).get(key) if run else None
        if value is None:
            continue
        reason = _vote(BY_KEY[key].label, rows, unit_key(run.unit_id, run.pk), float(value))
        if reason:
            flags.append((run, reason))
    return flags


def _peer_and_own_rows(runs: list[TestRun]) -> tuple[list[dict], list[dict]]:
    """The peers' runs and `runs` (of one submission) as analysis.factor_rows reads them, each in id order, in one
    query. Peers: published, public, other submissions and uploaders, the same drive model, profile and edition,
    contributors past review only; trials only for a trial. No run of the submission is a peer, so each row read is
    one or the other."""
    first = runs[0]
    own_ids = {run.pk for run in runs}
    peers = TestRun.objects.all() if is_trial(first) else TestRun.objects.exclude(trial_q())  # trials are private
    peers = (
        peers.filter(
            test__in=[run.test for run in runs],
            profile=first.profile,
            edition=first.edition,
            submission__status=SubmissionStatus.PUBLISHED,
            submission__hidden=False,
        )
        .exclude(submission_id=first.submission_id)
        .exclude(submission__uploader_id=first.submission.uploader_id)
    )
    rows = public_runs(first.drive_model, peers | TestRun.objects.filter(pk__in=own_ids))
    peer_rows = [row for row in rows if row["id"] not in own_ids]
    established = established_uploader_ids({row["submission__uploader_id"] for row in peer_rows})
    own_rows = [row for row in rows if row["id"] in own_ids]
    return [row for row in peer_rows if row["submission__uploader_id"] in established], own_rows


def _vote(label: str, rows: list, unit: object, value: float) -> str | None:
    """The reason this unit's `label` is an outlier among `rows` (the peers' and its own), or None."""
    fitted = fit(rows, label)
    if fitted.status == "fitted" and unit in fitted.units:
        return _residual_vote(label, fitted, unit)
    why = (
        "too few units for the factors that vary"
        if fitted.status != "fitted"
        else "a factor it uses is unrecorded here"
    )
    return _raw_vote(label, rows, unit, value, why)


def _unproven(column, effect, away: bool) -> bool:
    """A circumstantial level (firmware, host CPU, kernel, scheduler) no other unit shares: one unit cannot tell it
    from its own difference, so it explains nothing yet. A measured condition (link, throttling, spare area, wear)
    alone on one unit still does."""
    return away and effect.status == "indicative" and column.factor.kind == "category"


def _pinned(figures) -> bool:
    """The fit has no residual to give for this unit: it is alone at a measured condition, whose effect is fitted to
    it exactly (residual 0). As a voice it would only shrink the spread the others' residuals show."""
    return any(
        away and effect.status == "indicative" and not _unproven(column, effect, away)
        for column, effect, away, _c in figures.contributions
    )


def _residual(fitted: FactorFit, unit: object) -> float:
    """log(observed) − log(predicted at the unit's conditions) = log(normalized ÷ the reference level), less the
    effects of its unproven levels."""
    figures = fitted.units[unit]
    unproven = sum(math.log(c.value) for column, e, away, c in figures.contributions if _unproven(column, e, away))
    return math.log(figures.normalized.value / fitted.reference_level.value) + unproven


def _residual_vote(label: str, fitted: FactorFit, unit: object) -> str | None:
    samples = [
        (_residual(fitted, other), contributor, other)
        for other, figures in fitted.units.items()
        if other != unit and not _pinned(figures)
        for contributor in figures.unit.contributors
    ]
    voters = aggregates.contributor_values(samples)
    residual = _residual(fitted, unit)
    z = aggregates.robust_z(residual, voters)
    if z is None or abs(z) <= aggregates.OUTLIER_Z:
        return None
    figures = fitted.units[unit]
    unproven = _unproven_of(figures)
    skipped = {column.factor.key for column in unproven}
    named = [
        f"{FACTOR_LABELS[line.factor]} {units.change(line.contribution.value)}"
        for line in fitted.explain(unit)
        if line.factor not in skipped
    ]
    named += [f"{column.name} (this unit only, not counted)" for column in unproven]
    gap, after = figures.observed / fitted.reference_level.value, math.exp(residual)
    return (
        f"{label} {units.change(gap)} from the factor model's reference level, {units.change(after)} after the "
        f"recorded factors; robust z {z:+.1f} (threshold ±{aggregates.OUTLIER_Z}) among {len(voters)} independent "
        f"contributors' units (one voice each); labelled, not held. Factors: {'; '.join(named) or 'none explains it'}"
    )


def _unproven_of(figures) -> list:
    return [column for column, effect, away, _c in figures.contributions if _unproven(column, effect, away)]


def _raw_vote(label: str, rows: list, unit: object, value: float, why: str) -> str | None:
    """The vote before the factor model: the raw value against one voice per contributor (the median of their
    units, each unit the median of its runs)."""
    samples = [(float(row.value), row.contributor, row.unit) for row in rows if row.unit != unit]
    voters = aggregates.contributor_values(samples)
    z = aggregates.robust_z(value, voters)
    if z is None or abs(z) <= aggregates.OUTLIER_Z:
        return None
    return (
        f"{label} of {value:.4g} is far from the median {aggregates.median(voters):.4g} of {len(voters)} independent "
        f"contributors (one voice each; robust z {z:+.1f}, threshold ±{aggregates.OUTLIER_Z}); judged on the raw "
        f"value, no factor model ({why}); labelled, not held"
    )
