"""Physical bounds and evidence gates that every ingested submission passes through (`apply`).

Each rule is one function returning `GateFailure`s; `RULES` lists them with the sentence the methodology page shows.
A value outside its physical bound is rejected, or held with the reason where a genuine but exotic setup could
explain it; it is never published with an informational flag. Any failure also makes the run non-compliant, so the
"PTS-compliant" label means every gate and every piece of evidence passed. Severities:

- reject: impossible for the hardware described; the submission is rejected with the reason.
- hold: impossible for the link or drive lspci and the smart-log describe, but explainable by the snapshot being
  stale or by firmware quirks; stored for staff review, never published without one.
- not_compliant: the result may be published, but not as a PTS result.

Non-finite numbers are treated as implausible everywhere, whatever the JSON parser accepted.
"""

from __future__ import annotations

from collections.abc import Iterable

from analysis import pcie
from analysis.plan_cells import PlanCells
from analysis.plausibility.evidence import check_compliance_claim, check_sizes, reference_plan
from analysis.plausibility.limits import (
    CLOCK_SLACK_S,
    FASTEST_LINK_BYTES_PER_S,
    HOLD,
    LINK_MARGIN,
    LITTLE_MARGIN,
    MIN_DEVICE_LATENCY_NS,
    MIN_TRANSFER_BYTES,
    NOT_COMPLIANT,
    REJECT,
    RUNTIME_TOLERANCE,
    GateFailure,
    LinkBounds,
    epoch,
    link_bounds,
)
from analysis.plausibility.link import (
    NVME_MAX_WIDTH,
    ModelLinkEvidence,
    check_link,
    check_model_link,
    form_factor_width,
)
from analysis.plausibility.measurement import (
    check_cell_runtime,
    check_finite_non_negative,
    check_latency_floor,
    check_link_bandwidth,
    check_link_iops,
    check_littles_law,
    check_run_window,
    check_transfer_size,
    planned_runtime_s,
    run_window_s,
)
from analysis.plausibility.smart import (
    MAX_TEMPERATURE_K,
    MIN_TEMPERATURE_K,
    SmartLogs,
    check_power_on_clock,
    check_smart_logs_present,
    check_smart_progress,
    check_smart_values,
)
from analysis.records import FlagRecord, MeasurementRecord, SubmissionRecord

__all__ = [
    "CLOCK_SLACK_S",
    "FASTEST_LINK_BYTES_PER_S",
    "HOLD",
    "LINK_MARGIN",
    "LITTLE_MARGIN",
    "MAX_TEMPERATURE_K",
    "MIN_DEVICE_LATENCY_NS",
    "MIN_TEMPERATURE_K",
    "MIN_TRANSFER_BYTES",
    "NOT_COMPLIANT",
    "NVME_MAX_WIDTH",
    "REJECT",
    "RULES",
    "RUNTIME_TOLERANCE",
    "GateFailure",
    "LinkBounds",
    "ModelLinkEvidence",
    "apply",
    "apply_model_evidence",
    "bus_bound_is_plausible",
    "check_cell_runtime",
    "check_compliance_claim",
    "check_finite_non_negative",
    "check_latency_floor",
    "check_link",
    "check_model_link",
    "check_link_bandwidth",
    "check_link_iops",
    "check_littles_law",
    "check_power_on_clock",
    "check_run_window",
    "check_sizes",
    "check_smart_logs_present",
    "check_smart_progress",
    "check_smart_values",
    "check_transfer_size",
    "form_factor_width",
    "link_bounds",
    "planned_runtime_s",
    "reference_plan",
    "rule_names",
    "submission_failures",
    "summarised",
]

REASONS_PER_RULE = 5

RULES = {
    "pcie_link": "a device's lspci link is one PCIe allows: 2.5-64 GT/s, x1-x32, negotiated ≤ capable; the drive's "
    f"capability at most x{NVME_MAX_WIDTH}, its form factor's width and its model's published units' fastest LnkCap",
    "finite_non_negative": "every fio figure is a finite number ≥ 0",
    "link_bandwidth": f"bandwidth per direction ≤ the link's usable bandwidth × {1 + LINK_MARGIN:g}",
    "link_iops": f"IOPS × block size (≥ {MIN_TRANSFER_BYTES} B) ≤ the link's usable bandwidth × {1 + LINK_MARGIN:g}",
    "transfer_size": "bandwidth ÷ IOPS is the block size (a mix: at least 512 B on a device)",
    "sizes": "the target's size and active range are finite, ≥ 0, and the range lies inside the target",
    "latency_floor": "mean latency > 0, ≤ its maximum, ≥ one block's transfer time; ≥ 1 µs on a device",
    "littles_law": f"IOPS × mean latency ≤ threads × iodepth × {1 + LITTLE_MARGIN:g}",
    "cell_runtime": f"fio ran each cell at least the planned time × {1 - RUNTIME_TOLERANCE:g}",
    "run_window": "fio's runtime fits between the run's start and finish",
    "smart_values": "smart-log counters finite and ≥ 0; temperature within a working drive's range",
    "smart_progress": "counters never go backwards; data units grow no faster than the link; power-on hours no "
    "faster than the clock",
    "power_on_clock": "power-on hours advance with the wall clock over the whole bundle",
    "smart_logs_missing": "a device run has smart-logs around every fio run",
    "compliance_evidence": "a compliance claim is backed by the pts profile, a device, the PTS plan and a purge",
}


def measurement_failures(
    m: MeasurementRecord,
    record: SubmissionRecord,
    bounds: LinkBounds,
    cells: PlanCells | None = None,
    logs: SmartLogs | None = None,
) -> list[GateFailure]:
    logs = logs or SmartLogs()
    failures = check_finite_non_negative(m)
    if any(f.severity == REJECT for f in failures):
        return failures  # the other bounds would only repeat the same broken number
    failures += check_link_bandwidth(m, bounds)
    failures += check_link_iops(m, bounds)
    failures += check_transfer_size(m, device=record.target_kind == "device")
    failures += check_latency_floor(m, bounds, device=record.target_kind == "device")
    failures += check_littles_law(m)
    if record.source == "client":
        failures += check_cell_runtime(m, record.plan, cells)
    failures += check_run_window(m)
    for side, smart in (("before", m.smart_before), ("after", m.smart_after)):
        failures += logs.values_failures(smart, f"run {m.run_key} smart-log {side}")
    failures += check_smart_progress(
        m.smart_before, m.smart_after, window_s=run_window_s(m), bounds=bounds, label=f"run {m.run_key}", logs=logs
    )
    return failures


def submission_failures(record: SubmissionRecord) -> list[GateFailure]:
    """Every gate over every measurement and the submission's evidence, in a stable order."""
    bounds = link_bounds(record)
    measurements = [m for tr in record.test_runs for m in tr.measurements]
    failures = check_link(record)
    failures += check_sizes(record)
    cells, logs = PlanCells(), SmartLogs()
    for m in measurements:
        failures += measurement_failures(m, record, bounds, cells, logs)
    ordered = sorted(
        (m for m in measurements if m.smart_before or m.smart_after),
        key=lambda m: (epoch(m.started_at) is None, epoch(m.started_at) or 0.0),
    )
    snapshots = [(t, s) for m in ordered for t, s in ((m.started_at, m.smart_before), (m.finished_at, m.smart_after))]
    snapshots = [(t, s) for t, s in snapshots if s]
    for (_, earlier), (_, later) in zip(snapshots, snapshots[1:], strict=False):
        if earlier is later:  # one run's log after, the next one's before: no counter moved from it to itself
            continue
        failures += check_smart_progress(
            earlier, later, window_s=None, bounds=bounds, label="from one smart-log to the next", logs=logs
        )
    busy_s = sum(w for w in (run_window_s(m) for m in ordered) if w is not None and w > 0)
    failures += check_power_on_clock(snapshots, busy_s=busy_s)
    failures += check_smart_logs_present(record)
    failures += check_compliance_claim(record)
    return list(dict.fromkeys(failures))


def bus_bound_is_plausible(utilization: float | None) -> bool:
    """The informational bus_bound flag applies from pcie.BUS_BOUND_UTILIZATION to 100 % × the margin; beyond
    that the result failed the link gates instead."""
    return pcie.is_bus_bound(utilization) and utilization <= 1 + LINK_MARGIN


def apply(record: SubmissionRecord) -> list[GateFailure]:
    """Run every gate once on `record` and record the outcome: rejections, holds (with a flag), and for any failure
    the run is not compliant, with the reason. Safe to call twice (the second call does nothing)."""
    if record.gates_applied:
        return []
    record.gates_applied = True
    failures = submission_failures(record)
    _record(record, failures)
    return failures


def apply_model_evidence(record: SubmissionRecord, evidence: ModelLinkEvidence) -> list[GateFailure]:
    """The gate that needs the database (`check_model_link`: the link against the drive model's form factor and
    published units), recorded like `apply`'s; its failures are holds."""
    failures = list(dict.fromkeys(check_model_link(record, evidence)))
    _record(record, failures)
    return failures


def _record(record: SubmissionRecord, failures: list[GateFailure]) -> None:
    for failure in summarised(failures):
        reason = f"{failure.rule}: {failure.reason}"[:300]
        if failure.severity == REJECT:
            record.reject_reasons.append(reason)
        elif failure.severity == HOLD:
            record.hold_reasons.append(reason)
            record.flags.append(FlagRecord("crosscheck", reason))
        if record.compliant:
            record.compliant = False
        if reason not in record.compliance_reasons:
            record.compliance_reasons.append(reason)


def summarised(failures: list[GateFailure]) -> list[GateFailure]:
    """At most REASONS_PER_RULE failures of each rule and severity, then one line counting the rest: a bundle of 435
    runs can fail one rule 435 times, and the report must stay readable."""
    kept: list[GateFailure] = []
    extra: dict[tuple[str, str], int] = {}
    for failure in failures:
        key = (failure.rule, failure.severity)
        if sum(1 for k in kept if (k.rule, k.severity) == key) < REASONS_PER_RULE:
            kept.append(failure)
        else:
            extra[key] = extra.get(key, 0) + 1
    kept += [GateFailure(rule, severity, f"and {n} more like the above") for (rule, severity), n in extra.items()]
    return kept


def rule_names(failures: Iterable[GateFailure]) -> set[str]:
    return {f.rule for f in failures}
