"""Staff views of the dataset: everything is read-only here except the drive metadata no tool can collect."""

from django.contrib import admin

from analysis.models import (
    DriveMetadataProposal,
    DriveModel,
    DriveModelAggregate,
    Firmware,
    Flag,
    Host,
    Measurement,
    PcieLink,
    PhysicalUnit,
    ProposalStatus,
    SteadyStateWindow,
    TestRun,
    Vendor,
)
from browse import metadata
from datasets import export_rows


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written by ingest are evidence: staff may look, not edit (fix the data by re-ingesting)."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Vendor)
class VendorAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "pci_vendor_id"]
    search_fields = ["name"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "name" in form.changed_data:  # the measurements CSV's rows carry the vendor's name
            for drive_model_id in obj.drive_models.values_list("pk", flat=True):
                export_rows.rebuild_for_drive_model(drive_model_id)


@admin.register(DriveModel)
class DriveModelAdmin(admin.ModelAdmin):
    list_display = ["name", "vendor", "capacity_bytes", "interface", "form_factor"]
    list_filter = ["interface", "vendor"]
    search_fields = ["name", "model_number", "slug"]
    readonly_fields = ["vendor", "model_number", "capacity_bytes", "slug", "created"]
    fields = [
        "name",
        "vendor",
        "model_number",
        "slug",
        "capacity_bytes",
        "interface",
        "form_factor",
        "controller",
        "nand_type",
        "dram",
        "created",
    ]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "name" in form.changed_data:  # the measurements CSV's rows carry the drive's name
            export_rows.rebuild_for_drive_model(obj.pk)


@admin.register(Firmware)
class FirmwareAdmin(ReadOnlyAdmin):
    list_display = ["revision", "drive_model"]
    search_fields = ["revision", "drive_model__name"]


@admin.register(PhysicalUnit)
class PhysicalUnitAdmin(ReadOnlyAdmin):
    list_display = ["serial_hash", "drive_model", "first_seen"]
    search_fields = ["serial_hash", "drive_model__name"]


@admin.register(Host)
class HostAdmin(ReadOnlyAdmin):
    list_display = ["cpu_model", "kernel", "os_name", "memory_bytes"]
    search_fields = ["cpu_model", "kernel"]


@admin.register(PcieLink)
class PcieLinkAdmin(ReadOnlyAdmin):
    list_display = ["pci_address", "generation", "width", "capable_speed_gts", "capable_width", "below_capability"]
    list_filter = ["generation", "width", "below_capability"]


class SteadyStateWindowInline(admin.TabularInline):
    model = SteadyStateWindow
    extra = 0
    can_delete = False
    fields = ["variable", "steady", "steady_round", "first_round", "last_round", "average", "claim_differs", "note"]
    readonly_fields = fields


class FlagInline(admin.TabularInline):
    model = Flag
    fk_name = "test_run"
    extra = 0
    can_delete = False
    fields = ["kind", "reason", "measurement"]
    readonly_fields = fields


@admin.register(TestRun)
class TestRunAdmin(ReadOnlyAdmin):
    list_display = ["submission", "test", "drive_model", "firmware", "profile", "edition", "source", "steady"]
    list_filter = ["test", "profile", "edition", "source", "compliant", "steady"]
    search_fields = ["drive_model__name", "submission__id"]
    list_select_related = ["drive_model", "firmware", "submission"]
    inlines = [SteadyStateWindowInline, FlagInline]


@admin.register(Measurement)
class MeasurementAdmin(ReadOnlyAdmin):
    list_display = [
        "run_key",
        "test_run",
        "block_size_bytes",
        "read_pct",
        "total_iops",
        "total_bw_bytes_per_s",
        "lat_mean_ns",
        "in_steady_window",
        "raw_file",
    ]
    list_filter = ["in_steady_window", "block_size_bytes", "read_pct"]
    search_fields = ["run_key", "raw_file"]
    list_select_related = ["test_run"]


@admin.register(Flag)
class FlagAdmin(ReadOnlyAdmin):
    list_display = ["kind", "reason", "submission", "test_run"]
    list_filter = ["kind"]
    search_fields = ["reason"]


@admin.register(DriveModelAggregate)
class DriveModelAggregateAdmin(ReadOnlyAdmin):
    list_display = ["drive_model", "metric", "factor", "level", "median", "iqr", "n_runs", "n_units", "n_contributors"]
    list_filter = ["metric", "factor"]


@admin.action(description="Approve: copy the proposed values onto the drive model")
def approve_proposals(modeladmin, request, queryset):
    approved = 0
    for proposal in queryset.filter(status=ProposalStatus.PENDING):
        metadata.proposal_approve(proposal=proposal, reviewer=request.user)
        approved += 1
    modeladmin.message_user(request, f"Approved {approved} proposal(s).")


@admin.action(description="Reject")
def reject_proposals(modeladmin, request, queryset):
    rejected = 0
    for proposal in queryset.filter(status=ProposalStatus.PENDING):
        metadata.proposal_reject(proposal=proposal, reviewer=request.user)
        rejected += 1
    modeladmin.message_user(request, f"Rejected {rejected} proposal(s).")


@admin.register(DriveMetadataProposal)
class DriveMetadataProposalAdmin(admin.ModelAdmin):
    """Proposals are reviewed, not edited: staff approve or reject them with the actions."""

    list_display = ["drive_model", "controller", "nand_type", "dram", "form_factor", "source_url", "proposer", "status"]
    list_filter = ["status"]
    search_fields = ["drive_model__name", "controller", "nand_type"]
    list_select_related = ["drive_model", "proposer"]
    actions = [approve_proposals, reject_proposals]
    readonly_fields = [f.name for f in DriveMetadataProposal._meta.fields]

    def has_add_permission(self, request):
        return False
