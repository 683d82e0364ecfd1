from django.db import migrations, models


def fill_max_latency(apps, schema_editor):
    Signature = apps.get_model("submissions", "MeasurementSignature")
    if schema_editor.connection.vendor == "postgresql":
        table = schema_editor.quote_name(Signature._meta.db_table)
        schema_editor.execute(f'UPDATE {table} SET max_latency_ns = ("values" ->> 6)::float8')
        return
    changed = []
    for signature in Signature.objects.only("id", "values").iterator(chunk_size=2000):
        values = signature.values
        signature.max_latency_ns = float(values[6]) if len(values) > 6 and values[6] is not None else None
        changed.append(signature)
    Signature.objects.bulk_update(changed, ["max_latency_ns"], batch_size=2000)


class Migration(migrations.Migration):
    """A second figure in the index of near-duplicate candidates: the largest latency. Bandwidth and bytes follow the IOPS,
    the runtime is the job's and, at a fixed queue depth, the mean latencies nearly follow the IOPS; the largest
    latency varies by ~20 % from round to round (docs/methodology.md). With the IOPS alone, one bundle among 1,000 seeded
    submissions of its drive read 13,892 candidates that could never match; the index checks the latency on its
    entries, so they are no longer read. It is the seventh figure of each signature's stored values."""

    dependencies = [
        ("submissions", "0008_signature_iops_ranges"),
    ]

    operations = [
        migrations.AddField(
            model_name="measurementsignature",
            name="max_latency_ns",
            field=models.FloatField(
                help_text="The direction's largest total latency, the seventh of `values`; null where it has none.",
                null=True,
            ),
        ),
        migrations.RunPython(fill_max_latency, migrations.RunPython.noop),
        migrations.RemoveIndex(
            model_name="measurementsignature",
            name="signature_iops",
        ),
        migrations.AddIndex(
            model_name="measurementsignature",
            index=models.Index(fields=["direction", "iops", "max_latency_ns"], name="signature_iops_latency"),
        ),
    ]
