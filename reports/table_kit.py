"""What several export tables share: a column's declaration, the columns naming a drive and describing a run (as seen
from a table whose rows reach the run), and the runs table's columns (the surface_runs table reuses them)."""

from __future__ import annotations

from django.db.models import ExpressionWrapper, F, FloatField

from reports.table_types import Column


def column(name, type_, description, source=None, unit="") -> Column:
    """A column whose row query selects `source` (by default the field of its own name)."""
    return Column(name=name, type=type_, description=description, source=source or name, unit=unit)


def spare_vs_user_expression() -> ExpressionWrapper:
    """p / (1 − p) in SQL (null when p is); p < 1 always, since a namespace has a size (analysis.overprovisioning)."""
    return ExpressionWrapper(F("overprovisioning") / (1.0 - F("overprovisioning")), output_field=FloatField())


def drive_columns(prefix: str) -> tuple[Column, ...]:
    return (
        column("drive_slug", "string", "The drive model's stable identifier (used in URLs).", f"{prefix}slug"),
        column("drive_name", "string", "Canonical model name, e.g. 'Samsung SSD 970 EVO Plus 500GB'.", f"{prefix}name"),
        column("vendor", "string", "Vendor name.", f"{prefix}vendor__name"),
    )


def run_columns(run: str) -> tuple[Column, ...]:
    """Facts about the run, the unit, the host and the PCIe link, as seen from a table whose rows reach the run at
    lookup prefix `run` ('' for the runs table itself)."""
    return (
        column(
            "unit_serial_hash",
            "string",
            "Keyed hash of the unit's serial number (the serial is never published).",
            f"{run}unit__serial_hash",
        ),
        column("firmware", "string", "Firmware revision during the run.", f"{run}firmware__revision"),
        column(
            "test",
            "string",
            "PTS test: iops, tp (throughput), lat (latency), wsat (write saturation), hir (host idle recovery), "
            "xsr (cross stimulus recovery), ecw (enterprise composite workload), dirth (demand intensity / response "
            "time histogram) or a WSAT optional workload: ws-oltp, ws-vod, ws-meta, ws-comp; in the surface tables "
            "only: surface, the nvmedb queue-depth × block-size extension (not a PTS test, never compliant).",
            f"{run}test",
        ),
        column("edition", "string", "PTS edition: enterprise (PTS-E) or client (PTS-C).", f"{run}edition"),
        column("profile", "string", "pts (full PTS), quick (shortened, not compliant) or imported.", f"{run}profile"),
        column(
            "compliant",
            "boolean",
            "The run followed the PTS exactly (see the run's compliance reasons).",
            f"{run}compliant",
        ),
        column(
            "source",
            "string",
            "Where the results came from: client (nvmedb client), ssspt or py-sss-pts (imported).",
            f"{run}source",
        ),
        column("host_cpu_model", "string", "Host CPU model.", f"{run}host__cpu_model"),
        column("host_cpu_count", "integer", "Host logical CPU count.", f"{run}host__cpu_count"),
        column("host_memory_bytes", "integer", "Host memory.", f"{run}host__memory_bytes", "bytes"),
        column("host_os", "string", "Host operating system.", f"{run}host__os_name"),
        column("host_kernel", "string", "Host kernel release.", f"{run}host__kernel"),
        column(
            "pcie_generation", "integer", "PCIe generation of the negotiated link speed.", f"{run}pcie_link__generation"
        ),
        column("pcie_width", "integer", "Negotiated PCIe link width (lanes).", f"{run}pcie_link__width"),
        column(
            "pcie_speed_gt_per_s",
            "number",
            "Negotiated PCIe link speed per lane.",
            f"{run}pcie_link__speed_gts",
            "GT/s",
        ),
        column(
            "pcie_usable_bw_bytes_per_s",
            "number",
            "Link bandwidth left after line encoding and TLP overhead at the negotiated MaxPayload.",
            f"{run}pcie_link__usable_bandwidth_bytes_per_s",
            "bytes/s",
        ),
    )


RUN_COLUMNS: tuple[Column, ...] = (
    column("run_id", "integer", "This run's stable id.", "pk"),
    column("submission_id", "string", "The submission (bundle) the run came from (UUID)."),
    *drive_columns("drive_model__"),
    *run_columns(""),
    column("threads", "integer", "Thread count (TC)."),
    column("iodepth", "integer", "Outstanding I/O per thread (QD)."),
    column("target_kind", "string", "device or file."),
    column("active_range_bytes", "integer", "Active range of the test.", unit="bytes"),
    column("overprovisioning", "number", "Share of raw capacity not exposed to the host, 0..1."),
    column("namespace_size_bytes", "integer", "Size of the tested namespace (what the host can address).", unit="bytes"),
    column("spare_vs_user", "number", "Over-provisioning as vendors state it: hidden capacity ÷ user (namespace) "
       "capacity, from overprovisioning p as p / (1 − p); 0.28 for a 1.28 TB drive sold as 1 TB.",
       spare_vs_user_expression()),
    column("write_cache", "string", "Volatile write cache during the run: enabled, disabled, or empty if unknown."),
    column("purge_method", "string", "How the drive was purged before the test."),
    column("fio_version", "string", "fio version."),
    column("ioengine", "string", "fio I/O engine."),
    column("signed", "boolean", "The bundle was signed with the contributor's key."),
    column("steady", "boolean", "Every tracking variable reached steady state (nvmedb's verdict)."),
    column("steady_round", "integer", "Round at which steady state was reached."),
    column("percentage_used", "integer", "Drive wear before the test (smart-log percentage used).", unit="%"),
    column("power_on_hours", "integer", "Drive power-on hours before the test.", unit="h"),
    column("data_written_before_bytes", "integer", "Data written to the drive before the test.", unit="bytes"),
    column("started_at", "datetime", "When the run started (UTC)."),
    column("finished_at", "datetime", "When the run finished (UTC)."),
    column("flag_kinds", "string", "Kinds of flags on the whole run or its submission (not those on single "
       "measurements, see measurements.flag_kinds), ';'-separated and sorted. Formerly named flags (renamed: pandas' "
       "DataFrame.flags shadowed it).",
       "flag_kinds__kinds"),
    column("source_license", "string", "License of imported results."),
    column("source_reference", "string", "Where imported results came from."),
)  # fmt: skip
