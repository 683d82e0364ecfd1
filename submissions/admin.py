"""Staff moderation: approve a held submission, hide one or reject it with a reason. Credentials are visible, never
their secrets."""

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from submissions import content, first_received, moderation
from submissions.forms import ReasonForm
from submissions.models import (
    ApiToken,
    DataLicenseAcceptance,
    ModerationDecision,
    SigningKey,
    Submission,
    SubmissionEvent,
    SubmissionStatus,
)


class SubmissionEventInline(admin.TabularInline):
    model = SubmissionEvent
    extra = 0
    can_delete = False
    readonly_fields = ["at", "from_status", "to_status", "note"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class ModerationDecisionInline(admin.TabularInline):
    """The moderation log of a submission: read-only, as the log is append-only."""

    model = ModerationDecision
    extra = 0
    can_delete = False
    fields = readonly_fields = ["created_at", "action", "decided_by_name", "reason"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


def _moderate(modeladmin, request: HttpRequest, queryset, *, action: str, verb: str) -> HttpResponse | None:
    if "apply" in request.POST:
        form = ReasonForm(request.POST)
        if form.is_valid():
            service = moderation.submission_hide if action == "hide" else moderation.submission_reject
            for submission in queryset:
                service(submission=submission, reason=form.cleaned_data["reason"], by=request.user)
            modeladmin.message_user(request, f"{verb} {queryset.count()} submission(s).", messages.SUCCESS)
            return None
    else:
        form = ReasonForm()
    context = {
        **modeladmin.admin_site.each_context(request),
        "form": form,
        "submissions": queryset,
        "action": request.POST.get("action"),
        "verb": verb,
        "opts": modeladmin.model._meta,
    }
    return render(request, "submissions/admin_reason.html", context)


@admin.action(description="Hide from everyone but the owner (with a reason)")
def hide_submissions(modeladmin, request, queryset):
    return _moderate(modeladmin, request, queryset, action="hide", verb="Hid")


@admin.action(description="Reject (with a reason)")
def reject_submissions(modeladmin, request, queryset):
    return _moderate(modeladmin, request, queryset, action="reject", verb="Rejected")


@admin.action(description="Approve and publish (held submissions)")
def approve_submissions(modeladmin, request, queryset):
    approved = 0
    for submission in queryset:
        try:
            moderation.submission_approve(submission=submission, by=request.user)
        except moderation.NotApprovable as exc:
            modeladmin.message_user(request, str(exc), messages.ERROR)
        else:
            approved += 1
    if approved:
        modeladmin.message_user(request, f"Published {approved} submission(s).", messages.SUCCESS)


class AwaitingReviewFilter(admin.SimpleListFilter):
    title = "awaiting review"
    parameter_name = "awaiting"

    def lookups(self, request, model_admin):
        return [("review", "New contributor (first submissions)"), ("any", "Any held submission")]

    def queryset(self, request, queryset):
        if self.value() == "review":
            return queryset.filter(status=SubmissionStatus.HELD, report__rule="review")
        if self.value() == "any":
            return queryset.filter(status=SubmissionStatus.HELD)
        return queryset


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["id", "uploader", "status", "hidden", "created", "size", "attempts", "last_error"]
    list_filter = [AwaitingReviewFilter, "status", "hidden"]
    search_fields = ["id", "sha256", "uploader__username"]
    actions = [approve_submissions, hide_submissions, reject_submissions]
    inlines = [SubmissionEventInline, ModerationDecisionInline]
    readonly_fields = [*(f.name for f in Submission._meta.fields), "near_duplicates"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # rows are tombstones; withdraw or reject instead

    @admin.display(description="Near-duplicates")
    def near_duplicates(self, obj: Submission) -> str:
        """Every other submission holding content of this one (the same digest, or measurements equal within the
        near-duplicate tolerance), for the reviewer: who sent it, where it stands, when it was received, and how much
        of this one's measurements it matches (and of its own, this one)."""
        if obj is None or obj.pk is None:
            return "-"
        matches = first_received.content_matches(obj)
        if not matches:
            return "None: no other submission holds these measurements."
        others = Submission.objects.filter(pk__in=list(matches)).select_related("uploader").order_by("created")
        rows = []
        for other in others:
            found = matches[other.pk]
            relation = "received earlier" if (other.created, str(other.pk)) < (obj.created, str(obj.pk)) else "later"
            rows.append(
                (
                    reverse("admin:submissions_submission_change", args=[other.pk]),
                    other.pk,
                    other.uploader,
                    other.get_status_display(),
                    f"{other.created:%Y-%m-%d %H:%M:%S} UTC ({relation})",
                    f"{found.share:.0%}",
                    f"{found.reverse_share:.0%}",
                    len(found.exact_paths),
                )
            )
        body = format_html_join(
            "",
            '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>',
            rows,
        )
        return format_html(
            "<p>Two submissions are near-duplicates when at least {} of either one's measurements match the other's; "
            "the one received first keeps them.</p>"
            "<table><thead><tr><th>Submission</th><th>Account</th><th>Status</th><th>Received</th>"
            "<th>Share of this one's measurements it matches</th><th>Share of its measurements this one matches</th>"
            "<th>Fio outputs of this one with the same digest</th></tr></thead><tbody>{}</tbody></table>",
            f"{content.NEAR_SHARE:.0%}",
            body,
        )


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "user", "created", "last_used", "revoked_at"]
    readonly_fields = ["prefix", "digest", "created", "last_used"]
    search_fields = ["prefix", "user__username"]


@admin.register(SigningKey)
class SigningKeyAdmin(admin.ModelAdmin):
    list_display = ["fingerprint", "name", "user", "created", "revoked_at"]
    readonly_fields = ["fingerprint", "public_key", "created"]
    search_fields = ["fingerprint", "user__username"]


@admin.register(DataLicenseAcceptance)
class DataLicenseAcceptanceAdmin(admin.ModelAdmin):
    """A record of consent: staff may read it, never edit it."""

    list_display = ["user", "license", "via", "accepted_at"]
    list_filter = ["license", "via"]
    search_fields = ["user__username"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(ModerationDecision)
class ModerationDecisionAdmin(admin.ModelAdmin):
    """The moderation log, append-only: staff read it, nobody edits or deletes a decision."""

    list_display = ["created_at", "submission", "action", "decided_by_name", "reason"]
    list_filter = ["action"]
    search_fields = ["submission__id", "decided_by_name", "reason"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
