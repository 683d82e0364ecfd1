"""Things that change the dataset: storing a read submission, and refreshing the per-model aggregates."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils.text import slugify

from analysis import aggregates, columns, pcie, plausibility
from analysis.browse.summaries import summary_refresh
from analysis.bulk import insert_rows
from analysis.datasets import export_rows
from analysis.factor_effects import queue_factor_effects
from analysis.headline import BY_KEY, HEADLINES, headline_values, measurement_value
from analysis.identity import PCI_VENDORS, drive_slug, serial_hash
from analysis.latency import latency_columns, latency_missing
from analysis.models import (
    DriveModel,
    DriveModelAggregate,
    Firmware,
    Flag,
    Host,
    Measurement,
    PcieLink,
    PhysicalUnit,
    Round,
    SteadyStateWindow,
    TestRun,
    Vendor,
)
from analysis.models.aggregates import Factor
from analysis.pts import demand_intensity as pts_demand_intensity
from analysis.pts import surface
from analysis.pts.store import insert_recovery
from analysis.records import HostRecord, SubmissionRecord
from analysis.selectors import is_trial, pts_q, public_flags, public_test_runs, trial_q, trial_submission_q

PUBLISHED = "published"
HELD = "held"
REJECTED = "rejected"
# the compliance reason a held or rejected submission's runs carry first (runs_follow_status)
STATUS_MARKS = (f"{HELD}: ", f"{REJECTED}: ")


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

    drive_model, firmware, unit = _identity_rows(record)
    if not record.model_gates_applied:
        record.model_gates_applied = True
        plausibility.apply_model_evidence(record, _model_link_evidence(drive_model, submission))
    host = _host_row(record.host) if record.host else None
    link_row = _link_row(record)
    hold_reasons = list(record.hold_reasons)
    flags: list[Flag] = []
    usable = record.link.usable_bandwidth_bytes_per_s if record.link else None

    if record.link and record.link.below_capability:
        flags.append(
            Flag(submission=submission, kind="link_below_capability", reason=record.link.below_capability_reason)
        )
    if record.source != "client":
        flags.append(
            Flag(
                submission=submission,
                kind="imported",
                reason=f"Imported from {record.source} results ({record.source_license or 'license unknown'}); "
                "not signed by a contributor; steady state re-derived here."[:300],
            )
        )

    test_runs = insert_rows(
        [
            _test_run_row(submission, record, test_record, drive_model, firmware, unit, host, link_row)
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
    rounds = {(r.test_run_id, r.phase, r.series, r.number): r for r in round_rows}

    measurement_rows: list[Measurement] = []
    for test_run, test_record in pairs:
        cumulative_write = 0
        for m in test_record.measurements:
            if m.summary is not None:
                cumulative_write += m.summary.write_bytes or 0
            measurement_rows.append(
                _measurement_row(
                    m,
                    test_run,
                    rounds[(test_run.id, m.phase, m.series, m.round_number)],
                    usable,
                    cumulative_write,
                    record,
                )
            )
    measurement_rows = insert_rows(measurement_rows)
    by_key = {(row.test_run_id, row.run_key): row for row in measurement_rows}
    for row in measurement_rows:
        if plausibility.bus_bound_is_plausible(row.link_utilization) and record.link is not None:
            flags.append(
                Flag(
                    submission=submission,
                    test_run_id=row.test_run_id,
                    measurement=row,
                    kind="bus_bound",
                    reason=pcie.bus_bound_reason(row.link_utilization, usable, record.link.device)[:300],
                )
            )

    insert_rows([_window_row(test_run, w) for test_run, test_record in pairs for w in test_record.windows])
    for test_run, test_record in pairs:
        if test_record.surface is not None:
            cells, patterns = surface.surface_rows(test_run, test_record.surface, by_key)
            insert_rows(cells)
            insert_rows(patterns)
    insert_recovery(pairs)  # HIR wait states, XSR groups and their time series
    pts_demand_intensity.store(pairs)

    runs_by_test = {test_run.test: test_run for test_run in test_runs}
    for flag in record.flags:
        test_run = runs_by_test.get(flag.test) if flag.test else None
        measurement = by_key.get((test_run.id, flag.run_key)) if test_run and flag.run_key else None
        flags.append(
            Flag(
                submission=submission,
                test_run=test_run,
                measurement=measurement,
                kind=flag.kind,
                reason=flag.reason[:300],
            )
        )
    # An outlier is a label for readers, never a hold: a crowd that disagrees proves nothing about a unit. Only the
    # plausibility gates and cross-checks (record.hold_reasons) hold a submission.
    for test_run, reason in _outliers(test_runs):
        flags.append(Flag(submission=submission, test_run=test_run, kind="outlier", reason=reason[:300]))
    if hold_reasons:
        flags.append(
            Flag(submission=submission, kind="held_for_review", reason="; ".join(dict.fromkeys(hold_reasons))[:300])
        )
    insert_rows(flags)

    status = HELD if hold_reasons else PUBLISHED
    if status == HELD:
        runs_follow_status(submission=submission, status=HELD, reasons=hold_reasons)
    export_rows.rebuild_for_submission(submission.pk)
    refresh_aggregates(drive_model=drive_model, also_submission=submission if status == PUBLISHED else None)
    for model in DriveModel.objects.filter(id__in=previous_models - {drive_model.id}).order_by("pk"):
        refresh_aggregates(drive_model=model)
    return StoreResult(status, list(dict.fromkeys(hold_reasons)))


def _test_run_row(submission, record, test_record, drive_model, firmware, unit, host, link_row) -> TestRun:
    return TestRun(
        submission=submission,
        drive_model=drive_model,
        firmware=firmware,
        unit=unit,
        host=host,
        pcie_link=link_row,
        test=test_record.test,
        edition=record.edition,
        profile=record.profile,
        # the server's verdict (analysis.compliance); an nvmedb extension is never a PTS result, whatever the rest of
        # its bundle is. A hold lowers `compliant` afterwards (runs_follow_status); approval restores this verdict.
        compliant=_derived_compliant(record, test_record),
        derived_compliant=_derived_compliant(record, test_record),
        compliance_reasons=record.compliance_reasons
        + test_record.compliance_reasons
        + ([surface.NOT_PTS] if test_record.test == surface.TEST else []),
        threads=test_record.threads,
        iodepth=test_record.iodepth,
        target_kind=record.target_kind,
        target_size_bytes=record.target_size_bytes,
        active_range_bytes=record.active_range_bytes,
        namespace_size_bytes=record.namespace_size_bytes,
        overprovisioning=record.overprovisioning,
        write_cache=record.write_cache,
        purge_method=record.purge_method,
        fio_version=test_record.fio_version,
        ioengine=test_record.ioengine,
        scheduler=record.scheduler,
        tool_versions=record.tool_versions,
        source=record.source,
        source_license=record.source_license,
        source_reference=record.source_reference,
        signed=record.signed,
        started_at=test_record.started_at,
        finished_at=test_record.finished_at,
        steady=_all_steady(test_record),
        steady_round=max(w.steady_round for w in test_record.windows) if _all_steady(test_record) else None,
        headline=headline_values(test_record.test, test_record.measurements),
        percentage_used=record.percentage_used,
        power_on_hours=record.power_on_hours,
        data_written_before_bytes=record.data_written_before_bytes,
        warning_temperature_k=record.warning_temperature_k,
        critical_temperature_k=record.critical_temperature_k,
        max_temperature_k=test_record.max_temperature_k,
        missing={**record.missing, **test_record.missing},
        evidence=record.evidence,
    )


def _derived_compliant(record: SubmissionRecord, test_record) -> bool:
    return record.compliant and not test_record.compliance_reasons and test_record.test != surface.TEST


def runs_follow_status(*, submission, status: str, reasons: list[str] | tuple[str, ...] = ()) -> int:
    """A held or rejected submission is never compliant: its runs' `compliant` is lowered, with "held: <reasons>" (or
    "rejected: ...") as their first compliance reason. Any other status (staff approval publishing a held one) gives
    them back the verdict the server derived from the bundle, `derived_compliant`, and drops that reason. Returns the
    number of runs. Called by store_submission and, through submissions.services, on every status change."""
    runs = list(
        TestRun.objects.filter(submission=submission).only("compliant", "derived_compliant", "compliance_reasons")
    )
    held = status in (HELD, REJECTED)
    said = "; ".join(dict.fromkeys(str(r) for r in reasons)) or "see the submission's report"
    for run in runs:
        kept = [r for r in run.compliance_reasons or [] if not str(r).startswith(STATUS_MARKS)]
        run.compliance_reasons = [f"{status}: {said}"[:300], *kept] if held else kept
        run.compliant = run.derived_compliant and not held
    TestRun.objects.bulk_update(runs, ["compliant", "compliance_reasons"])
    export_rows.rebuild_for_submission(submission.pk)
    return len(runs)


def _measurement_row(m, test_run: TestRun, round_row: Round, usable, cumulative_write: int, record) -> Measurement:
    s = m.summary
    missing = dict(m.missing)
    if m.runtime_s is None:
        missing["runtime_s"] = "fio reported no read or write runtime"
    utilization = None
    if s is not None:
        if s.read_bw_bytes_per_s is None and s.write_bw_bytes_per_s is None:
            # unified (mixed) reporting: the total is all fio tells, and at most it all went one way
            utilization = s.total_bw_bytes_per_s / usable if usable else None
        else:
            utilization = pcie.link_utilization(
                read_bw_bytes_per_s=s.read_bw_bytes_per_s,
                write_bw_bytes_per_s=s.write_bw_bytes_per_s,
                usable_bandwidth_bytes_per_s=usable,
            )
        if s.read_iops is None:
            missing["read_iops"] = "fio reported only the mixed total (unified_rw_reporting)"
    missing.update(latency_missing(s))
    if utilization is None:
        missing["link_utilization"] = record.missing.get("pcie_link", "no usable link bandwidth is known")
    return Measurement(
        round=round_row,
        test_run=test_run,
        drive_model_id=test_run.drive_model_id,
        run_key=m.run_key,
        block_size_bytes=m.block_size_bytes,
        read_pct=m.read_pct,
        pattern=m.pattern,
        threads=m.threads,
        iodepth=m.iodepth,
        read_iops=s.read_iops if s else None,
        write_iops=s.write_iops if s else None,
        total_iops=s.total_iops if s else None,
        read_bw_bytes_per_s=s.read_bw_bytes_per_s if s else None,
        write_bw_bytes_per_s=s.write_bw_bytes_per_s if s else None,
        total_bw_bytes_per_s=s.total_bw_bytes_per_s if s else None,
        read_bytes=s.read_bytes if s else None,
        write_bytes=s.write_bytes if s else None,
        cumulative_write_bytes=cumulative_write if s else None,
        **latency_columns(s),
        runtime_s=m.runtime_s,
        temperature_before_k=m.temperature_before_k,
        temperature_after_k=m.temperature_after_k,
        link_utilization=utilization,
        in_steady_window=m.in_steady_window,
        started_at=m.started_at,
        finished_at=m.finished_at,
        raw_file=m.raw_file,
        json_path=m.json_path,
        missing=missing,
    )


def _window_row(test_run: TestRun, w) -> SteadyStateWindow:
    window = w.window or {}
    return SteadyStateWindow(
        test_run=test_run,
        variable=w.variable,
        phase=w.phase,
        metric=w.metric,
        block_size_bytes=w.block_size_bytes,
        read_pct=w.read_pct,
        first_round=window.get("first_round"),
        last_round=window.get("last_round"),
        rounds=list(window.get("rounds") or []),
        values=list(window.get("values") or []),
        average=window.get("average"),
        data_excursion=window.get("data_excursion"),
        data_excursion_limit=window.get("data_excursion_limit"),
        slope=window.get("slope"),
        intercept=window.get("intercept"),
        slope_excursion=window.get("slope_excursion"),
        slope_excursion_limit=window.get("slope_excursion_limit"),
        steady=w.steady,
        steady_round=w.steady_round,
        claimed=_jsonable(w.claimed),
        claimed_steady=w.claimed_steady,
        claim_differs=w.claim_differs,
        note=w.note[:300],
    )


def _all_steady(test_record) -> bool | None:
    if not test_record.windows:
        return None
    return all(w.steady and w.steady_round is not None for w in test_record.windows)


def _jsonable(value):
    return json.loads(json.dumps(value, default=str)) if value is not None else None


def _identity_rows(record: SubmissionRecord) -> tuple[DriveModel, Firmware | None, PhysicalUnit | None]:
    identity = record.identity
    vendor = Vendor.objects.filter(name=identity.vendor).first()
    if vendor is None:
        pci_id = identity.pci_vendor_id
        # the id belongs to the brand only when it names it (a Seagate drive may carry Phison's controller id)
        if PCI_VENDORS.get(pci_id) != identity.vendor or Vendor.objects.filter(pci_vendor_id=pci_id).exists():
            pci_id = None
        vendor, _ = Vendor.objects.get_or_create(
            name=identity.vendor,
            defaults={"slug": _unique_slug(Vendor, slugify(identity.vendor)), "pci_vendor_id": pci_id},
        )
    drive_model = DriveModel.objects.filter(
        vendor=vendor, model_number=identity.model_number, capacity_bytes=identity.capacity_bytes
    ).first()
    if drive_model is None:
        drive_model, _ = DriveModel.objects.get_or_create(
            vendor=vendor,
            model_number=identity.model_number,
            capacity_bytes=identity.capacity_bytes,
            defaults={
                "name": identity.name,
                "slug": _unique_slug(DriveModel, drive_slug(identity.name, identity.capacity_bytes)),
                "interface": record.interface,
            },
        )
    # metadata no command reports (NAND type...) fills blanks only: staff-reviewed edits are never overwritten
    blanks = {k: v for k, v in record.drive_metadata.items() if v and not getattr(drive_model, k, "x")}
    if blanks:
        for key, value in blanks.items():
            setattr(drive_model, key, value)
        drive_model.save(update_fields=list(blanks))
    firmware = None
    if identity.firmware:
        firmware, _ = Firmware.objects.get_or_create(drive_model=drive_model, revision=identity.firmware)
    unit = None
    if identity.serial:
        digest = serial_hash(identity.serial, key=settings.NVMEDB_SERIAL_HASH_KEY, model_number=identity.model_number)
        unit, _ = PhysicalUnit.objects.get_or_create(drive_model=drive_model, serial_hash=digest)
    return drive_model, firmware, unit


def _model_link_evidence(drive_model: DriveModel, submission) -> plausibility.ModelLinkEvidence:
    """What the site knows of the links `drive_model` can have: its recorded form factor, and the fastest and widest
    valid LnkCap of its published, public units, counted as the outlier votes are (other contributors past review
    only, so fresh accounts cannot widen the bound for a later submission)."""
    from submissions.review import established_uploader_ids

    rows = list(
        TestRun.objects.exclude(trial_q())
        .filter(
            drive_model=drive_model,
            submission__status=PUBLISHED,
            submission__hidden=False,
            pcie_link__capable_speed_gts__in=list(pcie.GENERATION_BY_SPEED_GTS),
            pcie_link__capable_width__in=[w for w in pcie.SPEC_WIDTHS if w <= plausibility.NVME_MAX_WIDTH],
        )
        .exclude(submission_id=submission.pk)
        .exclude(submission__uploader_id=submission.uploader_id)
        .values_list("submission__uploader_id", "unit_id", "pcie_link__capable_speed_gts", "pcie_link__capable_width")
        .distinct()
    )
    established = established_uploader_ids({row[0] for row in rows})
    peers = [row for row in rows if row[0] in established]
    return plausibility.ModelLinkEvidence(
        form_factor=drive_model.form_factor,
        peer_units=len({(uploader, unit) for uploader, unit, _, _ in peers}),
        peer_speed_gts=max((speed for _, _, speed, _ in peers), default=None),
        peer_width=max((width for _, _, _, width in peers), default=None),
    )


def _unique_slug(model, base: str) -> str:
    base = base or "unknown"
    slug, counter = base, 2
    while model.objects.filter(slug=slug).exists():
        slug, counter = f"{base}-{counter}", counter + 1
    return slug


def _host_row(host: HostRecord) -> Host:
    description = {
        "cpu_model": host.cpu_model,
        "cpu_count": host.cpu_count,
        "memory_bytes": host.memory_bytes,
        "board_vendor": host.board_vendor,
        "board_name": host.board_name,
        "os_name": host.os_name,
        "kernel": host.kernel,
        "architecture": host.architecture,
    }
    fingerprint = hashlib.sha256(json.dumps(description, sort_keys=True).encode()).hexdigest()
    row, _ = Host.objects.get_or_create(fingerprint=fingerprint, defaults={**description, "missing": host.missing})
    return row


def _link_row(record: SubmissionRecord) -> PcieLink | None:
    link = record.link
    if link is None:
        return None
    device = link.device
    return PcieLink.objects.create(
        pci_address=device.address,
        capable_speed_gts=device.capable_speed_gts,
        capable_width=device.capable_width,
        speed_gts=device.speed_gts,
        width=device.width,
        generation=link.generation,
        status_note=device.status_note,
        max_payload_bytes=device.max_payload_bytes,
        max_read_request_bytes=device.max_read_request_bytes,
        path_speed_gts=link.path_speed_gts,
        path_width=link.path_width,
        raw_bandwidth_bytes_per_s=link.raw_bandwidth_bytes_per_s,
        usable_bandwidth_bytes_per_s=link.usable_bandwidth_bytes_per_s,
        below_capability=link.below_capability,
        source_file=record.link_source_file,
        missing=link.missing,
    )


def _outliers(test_runs: list[TestRun]) -> list[tuple[TestRun, str]]:
    """Results far from the published runs of the same model, test, profile and edition (one query for all).

    One voice per independent contributor: each unit's published runs are summarised first (their median; a run
    with no unit id is its own unit), then each contributor's units (their median), counting only contributors past
    review (submissions.review) and never the submitter themselves. So one account's many uploads or many units are
    one vote, and a handful of fresh accounts cannot make an established result look like an outlier. The verdict is
    a flag for readers; it never holds the submission (store_submission).
    """
    from submissions.review import established_uploader_ids

    runs = [run for run in test_runs if run.headline and run.test != surface.TEST]
    if not runs:
        return []
    first = runs[0]
    uploader_id = first.submission.uploader_id
    peer_runs = TestRun.objects.all() if is_trial(first) else TestRun.objects.exclude(trial_q())  # trials are private
    peers = list(
        peer_runs.filter(
            drive_model_id=first.drive_model_id,
            test__in=[run.test for run in runs],
            profile=first.profile,
            edition=first.edition,
            submission__status=PUBLISHED,
            submission__hidden=False,
        )
        .exclude(submission_id=first.submission_id)
        .exclude(submission__uploader_id=uploader_id)
        .values_list("pk", "test", "headline", "submission__uploader_id", "unit_id")
    )
    established = established_uploader_ids({peer[3] for peer in peers})
    votes: dict[tuple[str, str], list[tuple[float, int, tuple[str, int]]]] = defaultdict(list)
    for pk, test, headline, contributor, unit in peers:
        if contributor not in established:
            continue
        for key, value in (headline or {}).items():
            if value is not None:
                votes[(test, key)].append((float(value), contributor, aggregates.unit_key(unit, pk)))
    peer_values = {metric: aggregates.contributor_values(samples) for metric, samples in votes.items()}
    found = []
    for run in runs:
        for key, value in run.headline.items():
            voters = peer_values.get((run.test, key), [])
            z = aggregates.robust_z(float(value), voters) if value is not None else None
            if z is not None and abs(z) > aggregates.OUTLIER_Z:
                found.append((run, _outlier_sentence(BY_KEY[key].label, float(value), voters, z)))
    return found


def _outlier_sentence(label: str, value: float, voters: list[float], z: float) -> str:
    return (
        f"{label} of {value:.4g} is far from the median {aggregates.median(voters):.4g} of {len(voters)} independent "
        f"contributors to the same drive model (one voice each, the median of their units; robust z-score {z:+.1f}, "
        f"threshold ±{aggregates.OUTLIER_Z}); labelled, not held"
    )


def refresh_aggregates_for_submission(*, submission) -> int:
    """Recompute the aggregates of every drive model `submission` has runs of (after a withdrawal, hiding, or a
    status change made outside ingest). Returns the number of aggregate rows written."""
    models = DriveModel.objects.filter(test_runs__submission=submission).distinct().order_by("pk")
    return sum(refresh_aggregates(drive_model=model) for model in models)


def refresh_aggregates(*, drive_model: DriveModel, also_submission=None) -> int:
    """Recompute the median, IQR and counts of every headline metric of `drive_model`, per factor level, and the
    drive's page summary (analysis.browse.summaries) from the same runs, in the same transaction; once that
    transaction commits, a task refits the drive's factor effects (analysis.factor_effects). The median and
    quartiles are over physical units (each unit's runs summarised by their median, a run without a unit id its own
    unit); n_contributors counts the distinct uploader accounts behind them.

    Only published submissions count; `also_submission` adds one that is being published in this transaction.
    Returns the number of aggregate rows written.

    Ingests of the same model run at once under a worker's concurrency: each would delete the rows it can see and
    insert its own, and the second insert broke `aggregate_once_per_level`. Holding the model's row lock serialises
    the refreshes; the one that waited then reads (READ COMMITTED) every run the other committed, so the last
    refresh counts both. FOR NO KEY UPDATE, because each ingest already holds FOR KEY SHARE on the model through its
    test runs' foreign keys, which FOR UPDATE would wait on (a deadlock between two ingests).
    """
    with transaction.atomic():
        list(DriveModel.objects.select_for_update(no_key=True).filter(pk=drive_model.pk).values_list("pk"))
        # the factor model is refitted once the change is committed, by a task: the write path never waits on a fit
        transaction.on_commit(partial(queue_factor_effects, drive_model.pk))
        return _refresh_aggregates_locked(drive_model, also_submission)


def _refresh_aggregates_locked(drive_model: DriveModel, also_submission) -> int:
    runs = TestRun.objects.filter(drive_model=drive_model)
    public = runs.filter(submission__status=PUBLISHED, submission__hidden=False)
    runs = public | runs.filter(submission=also_submission) if also_submission is not None else public
    runs = runs.exclude(trial_q())  # a trial is its contributor's own: never in a model's statistics
    runs = runs.filter(pts_q())  # nor is an nvmedb extension (the surface) a PTS result, whatever its row holds
    rows = runs.values_list(
        "pk", "headline", "unit_id", "submission__uploader_id", "edition", "firmware__revision",
        "pcie_link__generation", "pcie_link__width",
    )  # fmt: skip
    # (value, unit id, the unit key the median counts by, contributor) per run and metric
    groups: dict[tuple[str, str, str], list[tuple[float, int | None, tuple[str, int], int]]] = defaultdict(list)
    for pk, headline, unit_id, contributor, edition, firmware, generation, width in rows:
        levels = {
            Factor.ALL: "",
            Factor.FIRMWARE: firmware or "unknown",
            Factor.PCIE_GENERATION: f"Gen{generation}" if generation else "unknown",
            Factor.PCIE_WIDTH: f"x{width}" if width else "unknown",
            Factor.EDITION: edition or "unknown",
        }
        for key, value in (headline or {}).items():
            if value is None:
                continue
            for factor, level in levels.items():
                groups[(key, factor, level)].append(
                    (float(value), unit_id, aggregates.unit_key(unit_id, pk), contributor)
                )
    DriveModelAggregate.objects.filter(drive_model=drive_model).delete()
    created = DriveModelAggregate.objects.bulk_create(
        [
            DriveModelAggregate(
                drive_model=drive_model,
                metric=key,
                factor=factor,
                level=level,
                # one value per physical unit (the median of its runs): repeating a unit's upload moves nothing
                median=(spread := aggregates.spread(aggregates.unit_values((v, k) for v, _, k, _ in values))).median,
                q1=spread.q1,
                q3=spread.q3,
                iqr=spread.iqr,
                n_runs=len(values),
                n_units=len({u for _, u, _, _ in values if u is not None}),
                n_contributors=len({c for _, _, _, c in values if c is not None}),
            )
            for (key, factor, level), values in groups.items()
        ]
    )
    runs_of, flags_of = public_test_runs(), public_flags()
    if also_submission is not None:  # not published yet: its runs and flags count as they will once it is
        runs_of = runs_of | TestRun.objects.filter(submission=also_submission).exclude(trial_q())
        flags_of = flags_of | Flag.objects.filter(submission=also_submission).exclude(
            trial_submission_q(ref="submission_id")
        )
    summary_refresh(drive_model=drive_model, runs_of=runs_of, flags_of=flags_of)
    return len(created)


__all__ = [
    "HEADLINES",
    "delete_submission_rows",
    "measurement_value",
    "refresh_aggregates",
    "refresh_aggregates_for_submission",
    "runs_follow_status",
    "store_submission",
]
