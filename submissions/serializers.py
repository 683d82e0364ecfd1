"""What the intake API answers about a submission: the uploader's, the public's and a tombstone's view, and the
explanation of its unit (submissions.hooks.explain)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from submissions import hooks
from submissions.models import Submission
from submissions.private import is_private
from submissions.selectors import Visibility


class FigureSerializer(serializers.Serializer):
    value = serializers.FloatField(help_text="In the metric's `unit`.")
    low = serializers.FloatField(help_text="The 95% interval's low end.")
    high = serializers.FloatField()
    display = serializers.CharField(help_text="As the site shows it, with its interval when it has one.")


class ModelLineSerializer(serializers.Serializer):
    metric = serializers.CharField(help_text="The headline metric's label.")
    factor = serializers.CharField(help_text="The factor model's factor key (link_limited, spare_fraction, …).")
    label = serializers.CharField(help_text="The unit's level of the factor, in words.")
    gap = serializers.FloatField(help_text="The unit's figure ÷ the reference level − 1.")
    effect = serializers.FloatField(help_text="The factor's effect on this unit, as a change (−0.74 is −74%).")
    low = serializers.FloatField(help_text="The effect's 95% interval, as changes.")
    high = serializers.FloatField()
    status = serializers.ChoiceField(choices=["estimated", "indicative"], help_text="indicative: one unit behind it.")
    above_reference = serializers.BooleanField(
        allow_null=True, help_text="Spare area and wear: the unit is above the reference; null for other factors."
    )
    text = serializers.CharField()


class MetricPositionSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="Headline metric, e.g. iops_4k_read.")
    label = serializers.CharField()
    unit = serializers.CharField(help_text="Unit of `value`: IOPS, bytes/s or ns.")
    value = serializers.FloatField(help_text="This run's value, in `unit`.")
    value_display = serializers.CharField(help_text="The value as the site shows it, with its unit.")
    higher_is_better = serializers.BooleanField()
    population_units = serializers.IntegerField(help_text="Units of the model with this metric, this one included.")
    percentile = serializers.FloatField(
        allow_null=True,
        help_text="Share of the other units this run beats (ties count half), 0-100; null below `min_units` units.",
    )
    position = serializers.CharField(help_text="The percentile in words, or why there is none.")
    model_units = serializers.IntegerField(help_text="Units in the factor model's fit of this metric.")
    model_note = serializers.CharField(
        allow_blank=True, help_text="Why the factor model gives this unit no figure (too few units); blank otherwise."
    )
    reference = FigureSerializer(
        allow_null=True,
        help_text="The factor model's reference level: a typical unit at the reference conditions (capable link, "
        "modal firmware, no throttling, median spare and wear), with its 95% interval.",
    )
    gap = serializers.FloatField(
        allow_null=True, help_text="This unit's figure (its runs' geometric mean) ÷ the reference level − 1."
    )
    gap_display = serializers.CharField(allow_blank=True, help_text='The gap as a signed percentage ("−75%").')
    normalized = FigureSerializer(
        allow_null=True,
        help_text="What this unit would do at the reference conditions, with the 95% interval of the effects it is "
        "corrected for; null without a fitted model.",
    )
    lines = ModelLineSerializer(
        many=True,
        help_text="The factors that account for the gap: the unit's level is not the reference, the effect's interval "
        "excludes no effect and the gap has the effect's sign. Largest first.",
    )


class FactorSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["link_below_capability", "link_slower_than_others", "bus_bound", "thermal_throttle", "wear",
                 "firmware", "overprovisioning", "host_cpu", "kernel", "scheduler"],
        help_text="bus_bound: the link capped this unit below what the drive reaches on a faster link (never said of "
        "a unit whose link carries what the drive does elsewhere). link_slower_than_others is no longer answered.",
    )  # fmt: skip
    label = serializers.CharField()
    reason = serializers.CharField(help_text="One line: what differs for this unit and why it matters.")
    evidence = serializers.DictField(
        child=serializers.CharField(),
        help_text="The figures behind the reason: per headline metric its gap and the factor's share with its "
        "interval; for thermal throttling the hottest temperature, the drive's thresholds and the tests whose "
        "throttle time grew.",
    )
    lines = serializers.ListField(
        child=serializers.CharField(),
        help_text="The factor model's lines, one per metric: \"1024 KiB sequential read −75%; link Gen2 x4 "
        '(link-limited) accounts for −74% [−77, −70]".',
    )


class ExplanationSerializer(serializers.Serializer):
    """Why is this unit different? Its place among the other public, non-trial units of its drive model."""

    drive_model = serializers.CharField()
    drive_model_slug = serializers.CharField()
    min_units = serializers.IntegerField(help_text="Units (this one included) a percentile needs.")
    population_units = serializers.IntegerField()
    model_note = serializers.CharField(
        allow_blank=True,
        help_text="One sentence when the factor model gives no metric a figure (too few units); blank otherwise.",
    )
    metrics = MetricPositionSerializer(many=True)
    factors = FactorSerializer(many=True)
    conditions_compared = serializers.ListField(
        child=serializers.CharField(),
        help_text="Conditions this unit and at least one other unit both record (link, wear, firmware, …).",
    )
    conditions_unrecorded = serializers.ListField(
        child=serializers.CharField(), help_text="Conditions this unit does not record: nothing is said of them."
    )
    conditions_matching = serializers.ListField(
        child=serializers.CharField(),
        help_text="Compared conditions at which this unit is like the others (the factor model's reference): the "
        "ones said to match.",
    )
    conditions_without_effect = serializers.ListField(
        child=serializers.CharField(),
        help_text="Compared conditions at which this unit differs from the factor model's reference with no effect "
        "the model separates from the noise: never said to match.",
    )


class SubmissionOutputSerializer(serializers.ModelSerializer):
    """What the uploader (and staff) see."""

    url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    explanation = serializers.SerializerMethodField(
        help_text="Where this unit sits among its model's units and what may explain a gap; null until results are "
        "stored."
    )
    trial = serializers.SerializerMethodField(
        help_text="True for a trial run (a file target or the quick profile): published to its contributor alone, "
        "never public, never held for review. False until its results are stored."
    )
    signing_key = serializers.SlugRelatedField(slug_field="fingerprint", read_only=True, allow_null=True)

    class Meta:
        model = Submission
        fields = [
            "id",
            "url",
            "page_url",
            "status",
            "sha256",
            "size",
            "original_name",
            "created",
            "status_changed",
            "finished_at",
            "published_at",
            "withdrawn_at",
            "signing_key",
            "report",
            "hidden",
            "moderation_reason",
            "last_error",
            "trial",
            "explanation",
        ]

    @extend_schema_field(ExplanationSerializer(allow_null=True))
    def get_explanation(self, obj: Submission) -> dict | None:
        return hooks.explain.call(obj)

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_trial(self, obj: Submission) -> bool:
        # the only submissions an app keeps to their contributor are trials (analysis registers them)
        return is_private(obj)

    def get_url(self, obj: Submission) -> str:
        return reverse("submissions-api:detail", args=[obj.pk], request=self.context.get("request"))

    def get_page_url(self, obj: Submission) -> str:
        return reverse("submissions:detail", args=[obj.pk], request=self.context.get("request"))


class SubmissionPublicOutputSerializer(SubmissionOutputSerializer):
    """What anyone sees of a published submission."""

    class Meta(SubmissionOutputSerializer.Meta):
        fields = [
            "id", "url", "page_url", "status", "sha256", "size", "created", "published_at", "report", "explanation",
        ]  # fmt: skip


class SubmissionTombstoneOutputSerializer(SubmissionOutputSerializer):
    """What remains public of a withdrawn submission: that it existed and when it left."""

    class Meta(SubmissionOutputSerializer.Meta):
        fields = ["id", "url", "status", "published_at", "withdrawn_at"]


class SubmissionListItemSerializer(SubmissionOutputSerializer):
    """A submission in the list of one's own: everything but the explanation and whether it is a trial (read each
    submission for them: each costs a query per submission)."""

    class Meta(SubmissionOutputSerializer.Meta):
        fields = [f for f in SubmissionOutputSerializer.Meta.fields if f not in ("explanation", "trial")]


OUTPUT_BY_VISIBILITY = {
    Visibility.OWNER: SubmissionOutputSerializer,
    Visibility.PUBLIC: SubmissionPublicOutputSerializer,
    Visibility.TOMBSTONE: SubmissionTombstoneOutputSerializer,
}
