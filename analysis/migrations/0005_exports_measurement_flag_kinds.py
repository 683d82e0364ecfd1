"""A view of the flag kinds per flagged measurement, which the measurements export joins (aggregated once) instead
of running a subquery for every row."""

from django.db import migrations, models

VIEW = "analysis_measurement_flag_kinds"
AGGREGATE = {
    "postgresql": "STRING_AGG(DISTINCT kind, ';' ORDER BY kind)",
    # SQLite has no ORDER BY in an aggregate: order the rows first (they are fed to GROUP_CONCAT in that order).
    "sqlite": "REPLACE(GROUP_CONCAT(DISTINCT kind), ',', ';')",
}


def create_view(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    source = "analysis_flag" if vendor == "postgresql" else "(SELECT * FROM analysis_flag ORDER BY kind)"
    schema_editor.execute(
        f"CREATE VIEW {VIEW} AS SELECT measurement_id, {AGGREGATE[vendor]} AS kinds FROM {source} "
        "WHERE measurement_id IS NOT NULL GROUP BY measurement_id"
    )


def drop_view(apps, schema_editor):
    schema_editor.execute(f"DROP VIEW IF EXISTS {VIEW}")


class Migration(migrations.Migration):
    dependencies = [("analysis", "0004_honest_trial_runs_leave_aggregates")]

    operations = [
        migrations.CreateModel(
            name="MeasurementFlagKinds",
            fields=[
                (
                    "measurement",
                    models.OneToOneField(
                        db_column="measurement_id",
                        on_delete=models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="flag_kinds",
                        serialize=False,
                        to="analysis.measurement",
                    ),
                ),
                ("kinds", models.TextField()),
            ],
            options={"db_table": VIEW, "managed": False},
        ),
        migrations.RunPython(create_view, drop_view),
    ]
