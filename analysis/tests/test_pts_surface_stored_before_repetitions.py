"""Surfaces stored before repeated cells (migration 0018): every cell ran once, and the rows say so."""

import importlib

import pytest
from django.apps import apps

from analysis.models import SurfaceCell, SurfacePattern
from analysis.tests.surface_factory import surface_run

migration = importlib.import_module("analysis.migrations.0018_surface_repetitions")


@pytest.mark.django_db
def test_the_migration_gives_each_old_cell_one_repetition_and_the_reason_its_spread_is_missing():
    run = surface_run(latency=True, repetitions=1, patterns=("read", "write"))
    # the rows as the schema before 0018 left them: the new columns at their defaults
    SurfaceCell.objects.update(spread_reason="", repetitions=[])
    SurfacePattern.objects.update(knee_by_repetition=[], knee_agreeing_repetitions=None)
    migration.one_pass_surfaces(apps, None)
    for cell in SurfaceCell.objects.filter(test_run=run).select_related("measurement"):
        assert cell.spread_reason == migration.ONE_REPETITION and cell.n_repetitions == 1
        assert (cell.bw_min_bytes_per_s, cell.bw_max_bytes_per_s, cell.bw_cv, cell.noisy) == (None, None, None, None)
        assert cell.repetitions == [
            {"repetition": 1, "run_id": cell.measurement.run_key, "bw_bytes_per_s": cell.bw_bytes_per_s,
             "iops": cell.iops}
        ]  # fmt: skip
    for pattern in SurfacePattern.objects.filter(test_run=run):
        assert pattern.knee_agreeing_repetitions == 1 and not pattern.repeatable
        assert pattern.knee_by_repetition[0]["iodepth"] == pattern.knee_iodepth
