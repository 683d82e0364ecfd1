"""Views of the flag kinds per flagged measurement and per flagged run, which the measurements and runs exports join
(aggregated once) instead of running a subquery for every row."""

from django.db import migrations, models

AGGREGATE = {
    "postgresql": "STRING_AGG(DISTINCT kind, ';' ORDER BY kind)",
    # SQLite has no ORDER BY in an aggregate: the rows are ordered first (GROUP_CONCAT takes them in that order).
    "sqlite": "REPLACE(GROUP_CONCAT(DISTINCT kind), ',', ';')",
}
MEASUREMENT_FLAGS = "SELECT measurement_id, kind FROM analysis_flag WHERE measurement_id IS NOT NULL"
# A run's own flags (not on one of its measurements) and its submission's (on no run in particular).
RUN_FLAGS = (
    "SELECT test_run_id, kind FROM analysis_flag WHERE test_run_id IS NOT NULL AND measurement_id IS NULL "
    "UNION ALL SELECT t.id, f.kind FROM analysis_flag f JOIN analysis_testrun t ON t.submission_id = f.submission_id "
    "WHERE f.test_run_id IS NULL"
)
VIEWS = {
    "analysis_measurement_flag_kinds": ("measurement_id", MEASUREMENT_FLAGS),
    "analysis_testrun_flag_kinds": ("test_run_id", RUN_FLAGS),
}


def create_views(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for view, (key, rows) in VIEWS.items():
        source = f"({rows}) AS flags" if vendor == "postgresql" else f"(SELECT * FROM ({rows}) ORDER BY kind)"
        schema_editor.execute(
            f"CREATE VIEW {view} AS SELECT {key}, {AGGREGATE[vendor]} AS kinds FROM {source} GROUP BY {key}"
        )


def drop_views(apps, schema_editor):
    for view in VIEWS:
        schema_editor.execute(f"DROP VIEW IF EXISTS {view}")


def _view_model(name: str, field: str, to: str, view: str):
    return migrations.CreateModel(
        name=name,
        fields=[
            (
                field,
                models.OneToOneField(
                    db_column=f"{field}_id",
                    on_delete=models.deletion.DO_NOTHING,
                    primary_key=True,
                    related_name="flag_kinds",
                    serialize=False,
                    to=to,
                ),
            ),
            ("kinds", models.TextField()),
        ],
        options={"db_table": view, "managed": False},
    )


class Migration(migrations.Migration):
    dependencies = [("analysis", "0005_drivepage_spec_sheet_figures")]

    operations = [
        _view_model("MeasurementFlagKinds", "measurement", "analysis.measurement", "analysis_measurement_flag_kinds"),
        _view_model("TestRunFlagKinds", "test_run", "analysis.testrun", "analysis_testrun_flag_kinds"),
        migrations.RunPython(create_views, drop_views),
    ]
