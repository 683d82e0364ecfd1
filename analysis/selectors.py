"""Things that read the dataset. Only published, unhidden submissions are public."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from analysis.models import DriveModel, DriveModelAggregate, Flag, Measurement, SteadyStateWindow, TestRun

PUBLIC_STATUS = "published"


def public_test_runs() -> QuerySet[TestRun]:
    return TestRun.objects.filter(submission__status=PUBLIC_STATUS, submission__hidden=False)


def public_measurements() -> QuerySet[Measurement]:
    return Measurement.objects.filter(test_run__submission__status=PUBLIC_STATUS, test_run__submission__hidden=False)


def public_flags() -> QuerySet[Flag]:
    return Flag.objects.filter(submission__status=PUBLIC_STATUS, submission__hidden=False)


def drive_models_with_data() -> QuerySet[DriveModel]:
    """Drive models that have at least one public run, with their overall aggregates prefetched."""
    return (
        DriveModel.objects.filter(test_runs__in=public_test_runs())
        .distinct()
        .select_related("vendor")
        .prefetch_related(
            Prefetch("aggregates", queryset=DriveModelAggregate.objects.filter(factor="all"), to_attr="overall")
        )
    )


def headline_aggregates(*, drive_model: DriveModel) -> dict[str, dict[str, DriveModelAggregate]]:
    """metric -> factor level label ("" for all runs, "firmware=…", "pcie_generation=Gen4", …) -> aggregate."""
    result: dict[str, dict[str, DriveModelAggregate]] = {}
    for aggregate in drive_model.aggregates.all():
        label = "" if aggregate.factor == "all" else f"{aggregate.factor}={aggregate.level}"
        result.setdefault(aggregate.metric, {})[label] = aggregate
    return result


def run_detail(*, test_run: TestRun) -> dict:
    """One run with its rounds' measurements, windows and flags, in as few queries as the page needs."""
    return {
        "run": test_run,
        "measurements": list(
            Measurement.objects.filter(test_run=test_run).select_related("round").order_by("round__number", "id")
        ),
        "windows": list(SteadyStateWindow.objects.filter(test_run=test_run)),
        "flags": list(Flag.objects.filter(test_run=test_run).select_related("measurement")),
    }
