"""Things that change the dataset: storing a read submission (its rows: analysis.dataset_rows, analysis.identity_rows),
the runs following a submission's status (analysis.run_status) and the per-model aggregates (analysis.aggregate_refresh).
Nothing here builds a page: what readers see is rebuilt from the committed data by tasks (analysis.drive_changes)."""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

from django.db import transaction

from analysis import columns, dataset_rows, pcie, plausibility
from analysis.aggregate_refresh import refresh_aggregates, refresh_aggregates_for_submission
from analysis.headline import HEADLINES, measurement_value
from analysis.identity_rows import identity_rows, model_link_evidence
from analysis.models import DriveModel, Flag, Measurement, PcieLink, Round, TestRun
from analysis.outliers import outlier_flags
from analysis.pts import demand_intensity as pts_demand_intensity
from analysis.pts import surface
from analysis.pts.store import insert_recovery
from analysis.records import SubmissionRecord
from analysis.run_status import HELD, PUBLISHED, REJECTED, STATUS_MARKS, runs_follow_status
from datasets import export_rows
from nvmedb.bulk import insert_rows, insert_values, insert_values_returning_ids

FLAG_FIELDS = ("submission_id", "test_run_id", "measurement_id", "kind", "reason")


@dataclass(frozen=True)
class StoreResult:
    status: str
    reasons: list[str]


def delete_submission_rows(*, submission) -> None:
    """Remove every dataset row of `submission` (its test runs cascade to rounds, measurements, windows, flags)."""
    link_ids = set(
        TestRun.objects.filter(submission=submission, pcie_link__isnull=False).values_list("pcie_link_id", flat=True)
    )
    Flag.objects.filter(submission=submission).delete()
    TestRun.objects.filter(submission=submission).delete()
    PcieLink.objects.filter(id__in=link_ids, test_runs__isnull=True).delete()


@transaction.atomic
def store_submission(*, submission, record: SubmissionRecord) -> StoreResult:
    """Replace every dataset row of `submission` with those of `record`, in one transaction; say what to do with it.

    Rows are written in a fixed number of statements whatever the bundle's size: test runs, rounds, measurements,
    windows and flags each in one batch.
    """
    previous_models = set(TestRun.objects.filter(submission=submission).values_list("drive_model_id", flat=True))
    if previous_models or Flag.objects.filter(submission=submission).exists():
        delete_submission_rows(submission=submission)
    plausibility.apply(record)  # every reader's record passes the same gates (a no-op when its reader ran them)
    if not record.reject_reasons:
        record.reject_reasons.extend(columns.record_problems(record))  # same verdict on SQLite and PostgreSQL
    if record.reject_reasons:
        for model in DriveModel.objects.filter(id__in=previous_models).order_by("pk"):  # one lock order everywhere
            refresh_aggregates(drive_model=model)
        return StoreResult(REJECTED, list(dict.fromkeys(record.reject_reasons)))

    drive_model, firmware, unit = identity_rows(record)
    if not record.model_gates_applied:
        record.model_gates_applied = True
        plausibility.apply_model_evidence(record, model_link_evidence(drive_model, submission))
    host = dataset_rows.host_row(record.host) if record.host else None
    link_row = dataset_rows.link_row(record)
    hold_reasons = list(record.hold_reasons)
    # flags as (submission_id, test_run_id, measurement_id, kind, reason): no one reads their ids
    flags: list[tuple] = []
    usable = record.link.usable_bandwidth_bytes_per_s if record.link else None

    if record.link and record.link.below_capability:
        flags.append((submission.pk, None, None, "link_below_capability", record.link.below_capability_reason))
    if record.source != "client":
        reason = (
            f"Imported from {record.source} results ({record.source_license or 'license unknown'}); "
            "not signed by a contributor; steady state re-derived here."[:300]
        )
        flags.append((submission.pk, None, None, "imported", reason))

    test_runs = insert_rows(
        [
            dataset_rows.test_run_row(submission, record, test_record, drive_model, firmware, unit, host, link_row)
            for test_record in record.test_runs
        ]
    )
    pairs = list(zip(test_runs, record.test_runs, strict=True))

    round_rows = insert_rows(
        [
            Round(test_run=test_run, phase=phase, series=series, number=number)
            for test_run, test_record in pairs
            for (phase, series, number) in dict.fromkeys(
                (m.phase, m.series, m.round_number) for m in test_record.measurements
            )
        ]
    )
    rounds = {(r.test_run_id, r.phase, r.series, r.number): r.id for r in round_rows}

    measurements: list[dict] = []
    for test_run, test_record in pairs:
        cumulative_write = 0
        for m in test_record.measurements:
            if m.summary is not None:
                cumulative_write += m.summary.write_bytes or 0
            round_id = rounds[(test_run.id, m.phase, m.series, m.round_number)]
            measurements.append(
                dataset_rows.measurement_values(m, test_run, round_id, usable, cumulative_write, record)
            )
    names = list(measurements[0]) if measurements else []
    values = map(itemgetter(*names), measurements) if measurements else []
    measurement_ids = insert_values_returning_ids(Measurement, names, values)
    by_key = {(row["test_run_id"], row["run_key"]): pk for row, pk in zip(measurements, measurement_ids, strict=True)}
    for row, pk in zip(measurements, measurement_ids, strict=True):
        if plausibility.bus_bound_is_plausible(row["link_utilization"]) and record.link is not None:
            reason = pcie.bus_bound_reason(row["link_utilization"], usable, record.link.device)[:300]
            flags.append((submission.pk, row["test_run_id"], pk, "bus_bound", reason))

    insert_rows([dataset_rows.window_row(test_run, w) for test_run, test_record in pairs for w in test_record.windows])
    for test_run, test_record in pairs:
        if test_record.surface is not None:
            # the cells refer to their measurements, known here by id alone
            of_run = {key: Measurement(pk=pk) for key, pk in by_key.items() if key[0] == test_run.id}
            cells, patterns = surface.surface_rows(test_run, test_record.surface, of_run)
            insert_rows(cells)
            insert_rows(patterns)
    insert_recovery(pairs)  # HIR wait states, XSR groups and their time series
    pts_demand_intensity.store(pairs)

    runs_by_test = {test_run.test: test_run for test_run in test_runs}
    for flag in record.flags:
        test_run = runs_by_test.get(flag.test) if flag.test else None
        measurement_id = by_key.get((test_run.id, flag.run_key)) if test_run and flag.run_key else None
        flags.append((submission.pk, test_run.id if test_run else None, measurement_id, flag.kind, flag.reason[:300]))
    # An outlier is a label for readers, never a hold: a crowd that disagrees proves nothing about a unit. Only the
    # plausibility gates and cross-checks (record.hold_reasons) hold a submission. The vote (analysis.outliers) reads
    # the flags above from the database (thermal throttling is a factor), so they are written first.
    insert_values(Flag, FLAG_FIELDS, flags)
    flags = [(submission.pk, run.id, None, "outlier", why[:300]) for run, why in outlier_flags(test_runs)]
    if hold_reasons:
        flags.append((submission.pk, None, None, "held_for_review", "; ".join(dict.fromkeys(hold_reasons))[:300]))
    insert_values(Flag, FLAG_FIELDS, flags)

    status = HELD if hold_reasons else PUBLISHED
    if status == HELD:
        runs_follow_status(submission=submission, status=HELD, reasons=hold_reasons)  # writes the export rows too
    else:
        export_rows.rebuild_for_submission(submission.pk)
    refresh_aggregates(drive_model=drive_model, also_submission=submission if status == PUBLISHED else None)
    for model in DriveModel.objects.filter(id__in=previous_models - {drive_model.id}).order_by("pk"):
        refresh_aggregates(drive_model=model)
    return StoreResult(status, list(dict.fromkeys(hold_reasons)))


__all__ = [
    "HEADLINES",
    "HELD",
    "PUBLISHED",
    "REJECTED",
    "STATUS_MARKS",
    "delete_submission_rows",
    "measurement_value",
    "refresh_aggregates",
    "refresh_aggregates_for_submission",
    "runs_follow_status",
    "store_submission",
]
