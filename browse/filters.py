"""The drive list's filters as the browse pages apply them: from the drives' page summaries, not every public run."""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.filters import DriveFilter


class DriveListFilter(DriveFilter):
    """The same parameters, choices and sort orders as analysis.filters.DriveFilter (the read API and exports), with
    the run conditions read from each drive's page summary (browse.summaries), written with its data: a drive
    is listed while it has a summary (exactly while it has a public run), and a run condition is a substring test
    on the summary's list of PCIe generations or run kinds of its public runs. The list then costs the same for a
    thousand submissions as for one."""

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        queryset = super(DriveFilter, self).filter_queryset(queryset)  # the field filters; not DriveFilter's run pass
        data = self.form.cleaned_data
        queryset = queryset.filter(page_summary__isnull=False)
        if data.get("pcie_generation"):
            queryset = queryset.filter(page_summary__pcie_generations__contains=f",{int(data['pcie_generation'])},")
        if data.get("compliance"):
            queryset = queryset.filter(page_summary__run_kinds__contains=f",{data['compliance']},")
        return queryset
