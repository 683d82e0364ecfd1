"""The drive list's filters and sort orders, shared by the browse pages and the read API.

Query parameters (all optional; names are stable, the API documents them):

    q                 search in the drive's name and model number (case-insensitive substring)
    vendor            vendor slug
    capacity_min_gb   raw capacity at least this many GB (10^9 bytes)
    capacity_max_gb   raw capacity at most this many GB (10^9 bytes)
    interface         nvme, sata, sas, unknown
    form_factor       exact form factor, e.g. "M.2 2280"
    pcie_generation   1..7: has a public run on a link negotiated at this generation
    compliance        pts (a PTS-compliant run), imported (an imported run); quick-profile runs are trials, never
                      public, so the drive list and the read API offer no choice for them
    sort              name, -name, or a headline metric key (ascending) / -key (descending), e.g. -iops_4k_read

Only drive models with at least one public run (published, not hidden submission) are listed, and only public runs
of PTS tests count for the run-based filters and the metric sort orders (a surface run, an nvmedb extension, lists
its drive but meets no run condition).
"""

from __future__ import annotations

import django_filters
from django.db.models import Case, F, IntegerField, Max, OuterRef, Q, QuerySet, Subquery, When

from analysis.headline import HEADLINES
from analysis.models import DriveModel, DriveModelAggregate, Vendor
from analysis.models.hardware import Interface
from analysis.selectors import pts_q, public_test_runs

GB = 10**9
COMPLIANCE_CHOICES = (
    ("pts", "PTS-compliant"),
    ("imported", "Imported"),
)
SORT_CHOICES = (
    ("name", "Name (A→Z)"),
    ("-name", "Name (Z→A)"),
    *(
        choice
        for h in HEADLINES
        for choice in (
            (f"-{h.key}", f"{h.label}: highest first"),
            (h.key, f"{h.label}: lowest first"),
        )
    ),
)
METRIC_KEYS = frozenset(h.key for h in HEADLINES)
COMPLIANCE_RUNS = {
    # compliant is set only when every plausibility gate and evidence check passed (analysis.plausibility);
    # a file target is never a PTS result, whatever an older row says
    "pts": Q(profile="pts", compliant=True, target_kind="device"),
    "imported": ~Q(source="client"),
}


def sort_annotation(key: str) -> Subquery:
    """The drive's all-runs median of headline metric `key` (None when it has none)."""
    return Subquery(
        DriveModelAggregate.objects.filter(drive_model=OuterRef("pk"), metric=key, factor="all")
        .order_by()
        .values("median")[:1]
    )


class DriveFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="filter_q", max_length=100, label="Search")
    vendor = django_filters.ModelChoiceFilter(
        field_name="vendor", queryset=Vendor.objects.all(), to_field_name="slug", label="Vendor"
    )
    capacity_min_gb = django_filters.NumberFilter(
        method="filter_capacity_min", min_value=0, max_value=10**7, label="Capacity at least (GB)"
    )
    capacity_max_gb = django_filters.NumberFilter(
        method="filter_capacity_max", min_value=0, max_value=10**7, label="Capacity at most (GB)"
    )
    interface = django_filters.ChoiceFilter(choices=Interface.choices, label="Interface")
    form_factor = django_filters.CharFilter(field_name="form_factor", max_length=50, label="Form factor")
    pcie_generation = django_filters.ChoiceFilter(
        method="filter_pcie_generation", choices=[(str(g), f"Gen{g}") for g in range(1, 8)], label="PCIe generation"
    )
    compliance = django_filters.ChoiceFilter(method="filter_compliance", choices=COMPLIANCE_CHOICES, label="Runs")
    sort = django_filters.ChoiceFilter(method="filter_sort", choices=SORT_CHOICES, label="Sort by", empty_label=None)

    class Meta:
        model = DriveModel
        fields: list[str] = []

    def filter_q(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(Q(name__icontains=value) | Q(model_number__icontains=value))

    def filter_capacity_min(self, queryset: QuerySet, name: str, value) -> QuerySet:
        return queryset.filter(capacity_bytes__gte=int(value * GB))

    def filter_capacity_max(self, queryset: QuerySet, name: str, value) -> QuerySet:
        return queryset.filter(capacity_bytes__lte=int(value * GB))

    # The run conditions (PCIe generation, compliance) are applied together in filter_queryset.
    def filter_pcie_generation(self, queryset: QuerySet, name: str, value) -> QuerySet:
        return queryset

    def filter_compliance(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        """Every filter, then: only drive models with a public run, and for each run condition a public run meeting
        it. All of that in one pass over the public runs, grouped by drive model (IN, not a correlated EXISTS, so
        PostgreSQL reads the runs once rather than once per drive model)."""
        queryset = super().filter_queryset(queryset)
        data = self.form.cleaned_data
        conditions: list[Q] = []
        if data.get("pcie_generation"):
            conditions.append(Q(pcie_link__generation=int(data["pcie_generation"])))
        if data.get("compliance"):
            conditions.append(COMPLIANCE_RUNS[data["compliance"]])
        runs = public_test_runs().order_by().values("drive_model_id")
        if conditions:
            runs = runs.filter(pts_q())  # a run condition is met by a PTS run, never by the surface (an extension)
            met = {
                f"meets_{i}": Max(Case(When(condition, then=1), default=0, output_field=IntegerField()))
                for i, condition in enumerate(conditions)
            }
            runs = runs.annotate(**met).filter(**{name: 1 for name in met}).values("drive_model_id")
        return queryset.filter(pk__in=runs)

    def filter_sort(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return apply_sort(queryset, value)

    @property
    def qs(self) -> QuerySet:
        queryset = super().qs
        if not (self.form.is_bound and self.form.is_valid() and self.form.cleaned_data.get("sort")):
            queryset = apply_sort(queryset, "name")
        return queryset


def apply_sort(queryset: QuerySet, value: str) -> QuerySet:
    descending = value.startswith("-")
    key = value.lstrip("-")
    if key == "name":
        return queryset.order_by("-name" if descending else "name", "pk")
    if key not in METRIC_KEYS:
        raise ValueError(f"unknown sort order {value!r}")
    queryset = queryset.annotate(sort_value=sort_annotation(key))
    order = F("sort_value").desc(nulls_last=True) if descending else F("sort_value").asc(nulls_last=True)
    return queryset.order_by(order, "name", "pk")
