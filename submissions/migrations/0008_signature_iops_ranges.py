import math

from django.db import migrations, models


def fill_iops(apps, schema_editor):
    Signature = apps.get_model("submissions", "MeasurementSignature")
    if schema_editor.connection.vendor == "postgresql":
        table = schema_editor.quote_name(Signature._meta.db_table)
        schema_editor.execute(f'UPDATE {table} SET iops = ("values" ->> 1)::float8')
        return
    changed = []
    for signature in Signature.objects.only("id", "values").iterator(chunk_size=2000):
        signature.iops = float(signature.values[1])
        changed.append(signature)
        if len(changed) == 2000:
            Signature.objects.bulk_update(changed, ["iops"])
            changed = []
    Signature.objects.bulk_update(changed, ["iops"])


def fill_keys(apps, schema_editor):
    """Back to the buckets of 0005 (ln(1 + 1e-3) wide, of the IOPS), for a migration backwards."""
    Signature = apps.get_model("submissions", "MeasurementSignature")
    bucket = math.log1p(1e-3)
    changed = []
    for signature in Signature.objects.only("id", "direction", "iops").iterator(chunk_size=2000):
        signature.key = f"{signature.direction}:{math.floor(math.log(signature.iops) / bucket)}"
        changed.append(signature)
    Signature.objects.bulk_update(changed, ["key"], batch_size=2000)


class Migration(migrations.Migration):
    """Candidates for a near-duplicate match by IOPS range, not by bucket. A bucket (0.1 % of IOPS) and its two
    neighbours held every signature of a popular drive's honest submissions within ~0.3 % of one's own IOPS, so each
    ingest read and locked some 150,000 rows (1,000 submissions of one drive) that could never match; a range as wide
    as the tolerance (0.01 %) holds eleven times fewer. The IOPS are the second figure of each signature's values."""

    dependencies = [
        ("submissions", "0007_plain_indexes_for_equality_lookups"),
    ]

    operations = [
        migrations.AddField(
            model_name="measurementsignature",
            name="iops",
            field=models.FloatField(null=True),
        ),
        migrations.RunPython(fill_iops, fill_keys),
        migrations.AlterField(
            model_name="measurementsignature",
            name="iops",
            field=models.FloatField(
                help_text="The direction's IOPS: the second of `values`, indexed for range lookups."
            ),
        ),
        migrations.RemoveIndex(
            model_name="measurementsignature",
            name="signature_key",
        ),
        migrations.AlterField(  # so that going back can add the column again to rows that have one
            model_name="measurementsignature",
            name="key",
            field=models.CharField(max_length=40, default=""),
        ),
        migrations.RemoveField(
            model_name="measurementsignature",
            name="key",
        ),
        migrations.AddIndex(
            model_name="measurementsignature",
            index=models.Index(fields=["direction", "iops"], name="signature_iops"),
        ),
    ]
