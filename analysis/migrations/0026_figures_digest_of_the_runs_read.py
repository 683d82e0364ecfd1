from django.db import migrations, models


def forget_figures_of_the_old_digest(apps, schema_editor):
    """Stored unit figures carry a digest of the rows they were fitted on, which no page compares any more: they are
    removed, and their drives marked as not fitted on known data, so the refit at start (`refresh_factor_effects
    --missing`) stores them again with the digest of the runs read. Until then a submission page says its figures are
    being refreshed, as it does after any change; the drive's effects stay shown."""
    FactorUnitFigures = apps.get_model("analysis", "FactorUnitFigures")
    DriveModel = apps.get_model("analysis", "DriveModel")
    drives = FactorUnitFigures.objects.values("drive_model_id")
    DriveModel.objects.filter(pk__in=drives).update(factors_version=None)
    FactorUnitFigures.objects.all().delete()


class Migration(migrations.Migration):
    """A unit's stored factor figures keep the digest of the runs the fit read (analysis.fit_inputs), which a page
    reads in one query, instead of the digest of the model's rows, which a page had to build from every run of the
    drive (analysis.explain_model.metric_models)."""

    dependencies = [
        ("analysis", "0025_page_summary_lz4_compression"),
    ]

    operations = [
        migrations.AlterField(
            model_name="factorunitfigures",
            name="input_digest",
            field=models.CharField(
                help_text="SHA-256 of the runs the fit read (analysis.fit_inputs): a page compares it.", max_length=64
            ),
        ),
        migrations.RunPython(forget_figures_of_the_old_digest, migrations.RunPython.noop),
    ]
