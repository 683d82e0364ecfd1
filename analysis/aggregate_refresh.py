"""The per-model aggregates: the median, quartiles and counts of every headline metric of a drive model, per factor
level, rewritten whenever the model's public data changes (publish, withdraw, hide, reject, approve, re-derive).

The refresh also records the change (analysis.drive_changes): what is derived for readers (the drive's page summary,
its factor effects) is rebuilt by tasks once the transaction commits, never inside it.
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction

from analysis import aggregates
from analysis.drive_changes import mark_drive_changed
from analysis.models import DriveModel, DriveModelAggregate, TestRun
from analysis.models.aggregates import Factor
from analysis.run_status import PUBLISHED
from analysis.selectors import pts_q, trial_q


def refresh_aggregates_for_submission(*, submission) -> int:
    """Recompute the aggregates of every drive model `submission` has runs of (after a withdrawal, hiding, or a
    status change made outside ingest). Returns the number of aggregate rows written."""
    models = DriveModel.objects.filter(test_runs__submission=submission).distinct().order_by("pk")
    return sum(refresh_aggregates(drive_model=model) for model in models)


def refresh_aggregates(*, drive_model: DriveModel, also_submission=None) -> int:
    """Recompute the median, IQR and counts of every headline metric of `drive_model`, per factor level, and record
    that the drive's public data changed (analysis.drive_changes). Once the transaction commits, tasks rebuild the
    drive's page summary (browse.summaries) and refit its factor effects (analysis.factor_effects): the
    write path never builds a page nor waits on a fit. The median and
    quartiles are over physical units (each unit's runs summarised by their median, a run without a unit id its own
    unit); n_contributors counts the distinct uploader accounts behind them.

    Only published submissions count; `also_submission` adds one that is being published in this transaction.
    Returns the number of aggregate rows written.

    Ingests of the same model run at once under a worker's concurrency: each would delete the rows it can see and
    insert its own, and the second insert broke `aggregate_once_per_level`. Holding the model's row lock serialises
    the refreshes; the one that waited then reads (READ COMMITTED) every run the other committed, so the last
    refresh counts both. FOR NO KEY UPDATE, because each ingest already holds FOR KEY SHARE on the model through its
    test runs' foreign keys, which FOR UPDATE would wait on (a deadlock between two ingests).
    """
    with transaction.atomic():
        list(DriveModel.objects.select_for_update(no_key=True).filter(pk=drive_model.pk).values_list("pk"))
        mark_drive_changed(drive_model.pk)
        return _refresh_aggregates_locked(drive_model, also_submission)


def _refresh_aggregates_locked(drive_model: DriveModel, also_submission) -> int:
    runs = TestRun.objects.filter(drive_model=drive_model)
    public = runs.filter(submission__status=PUBLISHED, submission__hidden=False)
    runs = public | runs.filter(submission=also_submission) if also_submission is not None else public
    runs = runs.exclude(trial_q())  # a trial is its contributor's own: never in a model's statistics
    runs = runs.filter(pts_q())  # nor is an nvmedb extension (the surface) a PTS result, whatever its row holds
    rows = runs.order_by().values_list(  # no order: every statistic below sorts its own values
        "pk", "headline", "unit_id", "submission__uploader_id", "edition", "firmware__revision",
        "pcie_link__generation", "pcie_link__width",
    )  # fmt: skip
    # (value, unit id, the unit key the median counts by, contributor) per metric and combination of levels: a
    # drive's runs share a few combinations, so each sample is appended once, not once per factor
    by_levels: dict[tuple[str, tuple[str, ...]], list[tuple[float, int | None, tuple[str, int], int]]] = {}
    levels_of: dict[tuple, tuple[str, ...]] = {}
    for pk, headline, unit_id, contributor, edition, firmware, generation, width in rows:
        raw = (firmware, generation, width, edition)
        if (levels := levels_of.get(raw)) is None:
            levels = levels_of[raw] = _levels(*raw)
        unit = aggregates.unit_key(unit_id, pk)
        for key, value in (headline or {}).items():
            if value is not None:
                by_levels.setdefault((key, levels), []).append((float(value), unit_id, unit, contributor))
    # each factor level's samples: the combinations' lists joined (order matters to none of the statistics)
    groups: dict[tuple[str, str, str], list[tuple]] = defaultdict(list)
    for (key, levels), samples in by_levels.items():
        groups[(key, Factor.ALL, "")].extend(samples)
        for factor, level in zip(LEVEL_FACTORS, levels, strict=True):
            groups[(key, factor, level)].extend(samples)
    DriveModelAggregate.objects.filter(drive_model=drive_model).delete()
    created = DriveModelAggregate.objects.bulk_create(
        [_aggregate(drive_model, key, factor, level, samples) for (key, factor, level), samples in groups.items()]
    )
    return len(created)


LEVEL_FACTORS = (Factor.FIRMWARE, Factor.PCIE_GENERATION, Factor.PCIE_WIDTH, Factor.EDITION)


def _levels(firmware, generation, width, edition) -> tuple[str, ...]:
    """A run's level of each of LEVEL_FACTORS."""
    return (
        firmware or "unknown",
        f"Gen{generation}" if generation else "unknown",
        f"x{width}" if width else "unknown",
        edition or "unknown",
    )


def _aggregate(drive_model, key: str, factor: str, level: str, samples: list[tuple]) -> DriveModelAggregate:
    """One row from a group's (value, unit id, unit key, contributor) samples; the columns taken apart in C, as a
    big drive's thousands of runs are recounted inside each publish or withdrawal."""
    values, unit_ids, units, contributors = zip(*samples, strict=True)
    # one value per physical unit (the median of its runs): repeating a unit's upload moves nothing. When every
    # sample is its own unit, the per-unit medians are the values themselves.
    per_unit = (
        list(values) if len(set(units)) == len(units) else aggregates.unit_values(zip(values, units, strict=True))
    )
    spread = aggregates.spread(per_unit)
    return DriveModelAggregate(
        drive_model=drive_model,
        metric=key,
        factor=factor,
        level=level,
        median=spread.median,
        q1=spread.q1,
        q3=spread.q3,
        iqr=spread.iqr,
        n_runs=len(samples),
        n_units=len(set(unit_ids) - {None}),
        n_contributors=len(set(contributors) - {None}),
    )
