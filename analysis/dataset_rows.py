"""The dataset rows of one stored submission, built from its reader's record (analysis.records): a test run per
test, its measurements and steady-state windows, the host and the PCIe link. analysis.services.store_submission
writes them in batches; nothing here touches the database except the host and link rows it looks up or creates."""

from __future__ import annotations

import hashlib
import json

from analysis import pcie
from analysis.headline import headline_values
from analysis.latency import latency_columns, latency_missing
from analysis.models import Host, PcieLink, SteadyStateWindow, TestRun
from analysis.pts import surface
from analysis.records import HostRecord, SubmissionRecord


def test_run_row(submission, record, test_record, drive_model, firmware, unit, host, link) -> TestRun:
    return TestRun(
        submission=submission,
        drive_model=drive_model,
        firmware=firmware,
        unit=unit,
        host=host,
        pcie_link=link,
        test=test_record.test,
        edition=record.edition,
        profile=record.profile,
        # the server's verdict (analysis.compliance); an nvmedb extension is never a PTS result, whatever the rest of
        # its bundle is. A hold lowers `compliant` afterwards (runs_follow_status); approval restores this verdict.
        compliant=derived_compliant(record, test_record),
        derived_compliant=derived_compliant(record, test_record),
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
        steady=all_steady(test_record),
        steady_round=max(w.steady_round for w in test_record.windows) if all_steady(test_record) else None,
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


def derived_compliant(record: SubmissionRecord, test_record) -> bool:
    return record.compliant and not test_record.compliance_reasons and test_record.test != surface.TEST


def measurement_values(m, test_run: TestRun, round_id: int, usable, cumulative_write: int, record) -> dict:
    """A Measurement row's values by attribute name, every field of the model but its id. No instance is made: the
    ~430 Measurement instances of a bundle took longer to make than to copy into the table (nvmedb.bulk)."""
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
    return dict(
        round_id=round_id,
        test_run_id=test_run.id,
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


def window_row(test_run: TestRun, w) -> SteadyStateWindow:
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
        claimed=jsonable(w.claimed),
        claimed_steady=w.claimed_steady,
        claim_differs=w.claim_differs,
        note=w.note[:300],
    )


def all_steady(test_record) -> bool | None:
    if not test_record.windows:
        return None
    return all(w.steady and w.steady_round is not None for w in test_record.windows)


def jsonable(value):
    return json.loads(json.dumps(value, default=str)) if value is not None else None


def host_row(host: HostRecord) -> Host:
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


def link_row(record: SubmissionRecord) -> PcieLink | None:
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
