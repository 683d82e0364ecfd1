from django.db import migrations, models


def fill_records(apps, schema_editor):
    # the live spelling (datasets.csv_lines) over the historical model: a record is a function of the row's own columns
    from datasets.export_rows import fill_records

    fill_records(apps.get_model("analysis", "ExportMeasurementRow"))


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0022_factors_version"),
    ]

    operations = [
        migrations.AddField(model_name="exportmeasurementrow", name="csv_line", field=models.TextField(null=True)),
        migrations.RunPython(fill_records, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="exportmeasurementrow",
            name="csv_line",
            field=models.TextField(
                help_text="The exported columns as this row's CSV record, without its line end (datasets.csv_lines)."
            ),
        ),
    ]
