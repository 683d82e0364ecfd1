"""The per-model aggregates: the median, quartiles and counts of every headline metric of a drive model, per factor
level, rewritten whenever the model's public data changes (publish, withdraw, hide, reject, approve, re-derive).

The refresh also records the change (analysis.drive_changes): what is derived for readers (the drive's page summary,
its factor effects) is rebuilt by tasks once the transaction commits, never inside it.
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from analysis import aggregates
from analysis.drive_changes import mark_drive_changed
from analysis.models import DriveModel, DriveModelAggregate, TestRun
from analysis.models.aggregates import Factor
from analysis.run_status import PUBLISHED
from analysis.selectors import pts_q, trial_q
from nvmedb.bulk import insert_values


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
    runs = runs.exclude(headline={})  # no metric to count (a WSAT run's): a quarter of a drive's rows, not read
    rows = runs.order_by().values_list(  # no order: every statistic below sorts its own values
        "pk", "headline", "unit_id", "submission__uploader_id", "edition", "firmware__revision",
        "pcie_link__generation", "pcie_link__width",
    )  # fmt: skip
    # per metric and combination of levels: each unit's values (by the unit key the median counts by) and the
    # contributors. A drive's runs share a few combinations, so each sample is grouped by unit once, not once per
    # factor level it counts in (the level groups join the combinations' units instead: fewer units than samples).
    combos: dict[tuple[str, tuple[str, ...]], tuple[dict[tuple[str, int], list[float]], set]] = {}
    of_levels: dict[tuple[str, ...], dict[str, tuple[dict, set]]] = {}  # the same combinations, by levels then metric
    levels_of: dict[tuple, tuple[str, ...]] = {}
    for pk, headline, unit_id, contributor, edition, firmware, generation, width in rows:
        raw = (firmware, generation, width, edition)
        if (levels := levels_of.get(raw)) is None:
            levels = levels_of[raw] = _levels(*raw)
            of_levels.setdefault(levels, {})
        by_metric = of_levels[levels]
        unit = aggregates.unit_key(unit_id, pk)
        for key, value in (headline or {}).items():
            if value is not None:
                if (combo := by_metric.get(key)) is None:
                    combo = by_metric[key] = combos[(key, levels)] = ({}, set())
                if (values := combo[0].get(unit)) is None:
                    combo[0][unit] = [float(value)]
                else:
                    values.append(float(value))
                combo[1].add(contributor)
    # each factor level's combinations (order matters to none of the statistics)
    groups: dict[tuple[str, str, str], list[tuple[str, ...]]] = defaultdict(list)
    for key, levels in combos:
        groups[(key, Factor.ALL, "")].append(levels)
        for factor, level in zip(LEVEL_FACTORS, levels, strict=True):
            groups[(key, factor, level)].append(levels)
    counted = {
        # (its units' values, contributors, runs, units without an id: each is one run, so of one combination)
        combo: (by_unit, contributors, sum(map(len, by_unit.values())), sum(1 for kind, _ in by_unit if kind == "run"))
        for combo, (by_unit, contributors) in combos.items()
    }
    DriveModelAggregate.objects.filter(drive_model=drive_model).delete()
    # levels that hold the same combinations (a drive with one PCIe width: every x4 level is the whole drive) have
    # the same statistics, worked out once
    figures: dict[tuple[str, frozenset], tuple] = {}
    rows_out = []
    for (key, factor, level), of_group in groups.items():
        same = (key, frozenset(of_group))
        if (figure := figures.get(same)) is None:
            figure = figures[same] = _figures([counted[(key, levels)] for levels in of_group])
        rows_out.append((drive_model.pk, key, factor, level, *figure))
    # one COPY, one time for the refresh (bulk_create read the clock once per row, and built a model instance each)
    updated = timezone.now()
    insert_values(DriveModelAggregate, AGGREGATE_FIELDS, [(*row, updated) for row in rows_out])
    return len(rows_out)


# the columns written, in the order of a row: the group, its _figures, the time of the refresh
AGGREGATE_FIELDS = (
    "drive_model_id", "metric", "factor", "level",
    "median", "q1", "q3", "iqr", "n_runs", "n_units", "n_contributors", "updated",
)  # fmt: skip
LEVEL_FACTORS = (Factor.FIRMWARE, Factor.PCIE_GENERATION, Factor.PCIE_WIDTH, Factor.EDITION)


def _levels(firmware, generation, width, edition) -> tuple[str, ...]:
    """A run's level of each of LEVEL_FACTORS."""
    return (
        firmware or "unknown",
        f"Gen{generation}" if generation else "unknown",
        f"x{width}" if width else "unknown",
        edition or "unknown",
    )


def _figures(combos: list[tuple[dict, set, int, int]]) -> tuple:
    """The statistics of one group from its combinations' (values of each unit key, contributors, runs, runs without
    a unit id): median, q1, q3, iqr, n_runs, n_units, n_contributors (AGGREGATE_FIELDS' order)."""
    if len(combos) == 1:
        by_unit = combos[0][0]
    else:
        by_unit = {}
        for units, *_counts in combos:
            for unit, values in units.items():
                # a new list where a unit's runs span combinations: the combinations' own lists stay as they are
                by_unit[unit] = values if (have := by_unit.get(unit)) is None else have + values
    # one value per physical unit (the median of its runs): repeating a unit's upload moves nothing
    spread = aggregates.spread([values[0] if len(values) == 1 else _median(values) for values in by_unit.values()])
    return (
        spread.median,
        spread.q1,
        spread.q3,
        spread.iqr,
        sum(combo[2] for combo in combos),  # n_runs
        len(by_unit) - sum(combo[3] for combo in combos),  # n_units: a unit key per unit id, and the "run" keys
        len(set().union(*(combo[1] for combo in combos)) - {None}),  # n_contributors
    )


def _median(values: list[float]) -> float:
    """aggregates.median, the two-run unit (most units with more than one) spelled out: the same expression."""
    if len(values) == 2:
        low, high = values
        if high < low:
            low, high = high, low
        return low + (high - low) * 0.5
    return aggregates.median(values)
