"""Output shapes of the read API. Field names match the export columns; units are in the names and help texts."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.reverse import reverse

from analysis.headline import BY_KEY
from analysis.models import DriveModel, DriveModelAggregate
from datasets.tables import Table

FIELD_TYPES = {
    "integer": serializers.IntegerField,
    "number": serializers.FloatField,
    "boolean": serializers.BooleanField,
    "string": serializers.CharField,
    "datetime": serializers.DateTimeField,
}


def row_serializer(table: Table) -> type[serializers.Serializer]:
    """A serializer for the table's row tuples (column order), documented column by column for the schema."""
    names = table.column_names

    def to_representation(self, row: tuple) -> dict:
        return dict(zip(names, row, strict=True))

    fields = {
        c.name: FIELD_TYPES[c.type](
            read_only=True, allow_null=True, help_text=f"{c.description}{f' Unit: {c.unit}.' if c.unit else ''}"
        )
        for c in table.columns
    }
    class_name = "".join(part.title() for part in table.name.split("_")) + "Row"
    return type(class_name, (serializers.Serializer,), {**fields, "to_representation": to_representation})


class AggregateSerializer(serializers.ModelSerializer):
    label = serializers.SerializerMethodField(help_text="What the metric is, e.g. '4 KiB random read'.")
    unit = serializers.SerializerMethodField(help_text="Unit of median, q1, q3 and iqr: IOPS, bytes/s or ns.")
    unconfirmed = serializers.BooleanField(
        read_only=True,
        help_text="Backed by a single contributor (n_contributors ≤ 1): no independent upload confirms the figure.",
    )

    class Meta:
        model = DriveModelAggregate
        fields = [
            "metric", "label", "unit", "factor", "level", "median", "q1", "q3", "iqr", "n_runs", "n_units",
            "n_contributors", "unconfirmed",
        ]  # fmt: skip
        extra_kwargs = {
            "median": {"help_text": "Median over physical units, each unit's runs summarised by their median."},
            "n_contributors": {"help_text": "Distinct uploader accounts behind the runs."},
        }

    def get_label(self, obj: DriveModelAggregate) -> str:
        headline = BY_KEY.get(obj.metric)
        return headline.label if headline else obj.metric

    def get_unit(self, obj: DriveModelAggregate) -> str:
        headline = BY_KEY.get(obj.metric)
        return headline.unit if headline else ""


class DriveSerializer(serializers.ModelSerializer):
    vendor = serializers.CharField(source="vendor.name", read_only=True, help_text="Vendor name.")
    vendor_slug = serializers.CharField(source="vendor.slug", read_only=True)
    url = serializers.SerializerMethodField(help_text="This drive in the API.")

    class Meta:
        model = DriveModel
        fields = [
            "slug",
            "url",
            "name",
            "vendor",
            "vendor_slug",
            "model_number",
            "capacity_bytes",
            "interface",
            "form_factor",
            "controller",
            "nand_type",
            "dram",
        ]

    def get_url(self, obj: DriveModel) -> str:
        return reverse("datasets-api:drive", args=[obj.slug], request=self.context.get("request"))


class DriveDetailSerializer(DriveSerializer):
    aggregates = AggregateSerializer(
        many=True,
        read_only=True,
        help_text="Median, quartiles and counts of each headline metric over public runs, overall (factor 'all') "
        "and per factor level (firmware, PCIe generation, PCIe width, edition).",
    )
    public_runs = serializers.IntegerField(
        read_only=True, help_text="Number of public runs of PTS tests of this drive, PTS-compliant or not."
    )
    public_surface_runs = serializers.IntegerField(
        read_only=True, help_text="Number of public surface runs (the nvmedb extension, not a PTS test) of this drive."
    )

    class Meta(DriveSerializer.Meta):
        fields = [*DriveSerializer.Meta.fields, "public_runs", "public_surface_runs", "aggregates"]


class ReleaseFileSerializer(serializers.Serializer):
    name = serializers.CharField()
    url = serializers.URLField()
    bytes = serializers.IntegerField()
    sha256 = serializers.CharField()
    rows = serializers.IntegerField(allow_null=True, help_text="Rows of the table (null for metadata files).")


class ReleaseSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    url = serializers.URLField()
    created = serializers.CharField(help_text="When the release was built (ISO 8601, UTC).")
    total_bytes = serializers.IntegerField()
    citation = serializers.CharField(help_text="A ready-to-copy citation.")
    license = serializers.CharField(help_text="SPDX id of the data licence (CC-BY-4.0).")
    files = ReleaseFileSerializer(many=True)
