"""Trial runs (a file target or the quick profile) never count in a drive model's aggregates: recompute the
aggregates of every model that has one, from its published, unhidden, non-trial runs (the rule of
analysis.services.refresh_aggregates, restated on the historical models so this migration never depends on code that
changes later). A model made only of trial runs is left with none, so it appears nowhere public."""

from collections import defaultdict

from django.db import migrations
from django.db.models import Q

from analysis.aggregates import spread  # a pure function of a list of numbers


def recompute(apps, schema_editor):
    TestRun = apps.get_model("analysis", "TestRun")
    DriveModelAggregate = apps.get_model("analysis", "DriveModelAggregate")
    trial = Q(target_kind="file") | Q(profile="quick")
    model_ids = set(TestRun.objects.filter(trial).values_list("drive_model_id", flat=True))
    for model_id in sorted(model_ids):
        rows = (
            TestRun.objects.filter(drive_model_id=model_id, submission__status="published", submission__hidden=False)
            .exclude(trial)
            .values_list(
                "headline", "unit_id", "edition", "firmware__revision", "pcie_link__generation", "pcie_link__width"
            )
        )
        groups = defaultdict(list)
        for headline, unit_id, edition, firmware, generation, width in rows:
            levels = {
                "all": "",
                "firmware": firmware or "unknown",
                "pcie_generation": f"Gen{generation}" if generation else "unknown",
                "pcie_width": f"x{width}" if width else "unknown",
                "edition": edition or "unknown",
            }
            for key, value in (headline or {}).items():
                if value is None:
                    continue
                for factor, level in levels.items():
                    groups[(key, factor, level)].append((float(value), unit_id))
        DriveModelAggregate.objects.filter(drive_model_id=model_id).delete()
        new = []
        for (key, factor, level), values in groups.items():
            found = spread([v for v, _ in values])
            new.append(
                DriveModelAggregate(
                    drive_model_id=model_id, metric=key, factor=factor, level=level, median=found.median,
                    q1=found.q1, q3=found.q3, iqr=found.iqr, n_runs=len(values),
                    n_units=len({u for _, u in values if u is not None}),
                )
            )  # fmt: skip
        DriveModelAggregate.objects.bulk_create(new)


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0003_measure_total_latency"),
        ("submissions", "0001_initial"),
    ]

    operations = [migrations.RunPython(recompute, migrations.RunPython.noop)]
