from django.db import migrations


def refit_figures_of_the_repr_digest(apps, schema_editor):
    """Stored unit figures carry a digest of the runs' repr, which a page no longer computes (analysis.fit_inputs
    now hashes orjson's text): their drives are marked as not fitted on known data, so the refit at start
    (`refresh_factor_effects --missing`) stores them again with the new digest. Until then a submission page says its
    figures are being refreshed, as it does after any change; the drive's effects stay shown."""
    FactorUnitFigures = apps.get_model("analysis", "FactorUnitFigures")
    DriveModel = apps.get_model("analysis", "DriveModel")
    DriveModel.objects.filter(pk__in=FactorUnitFigures.objects.values("drive_model_id")).update(factors_version=None)


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0027_factor_unit_figures_indexes"),
    ]

    operations = [
        migrations.RunPython(refit_figures_of_the_repr_digest, migrations.RunPython.noop),
    ]
