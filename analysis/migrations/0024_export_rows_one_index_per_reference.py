from django.db import migrations


class Migration(migrations.Migration):
    """Each of these indexes repeated the one Django makes for the foreign key itself: two indexes to update for
    every export row written, one ever read."""

    dependencies = [
        ("analysis", "0023_export_row_csv_line"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="exportmeasurementrow", name="analysis_ex_submiss_8b7eb1_idx"),
        migrations.RemoveIndex(model_name="exportmeasurementrow", name="analysis_ex_drive_m_de1713_idx"),
    ]
