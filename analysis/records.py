"""What a submission says once read and checked, before it touches the database.

Readers (a client bundle, an SSSPT or py-sss-pts directory) produce a `SubmissionRecord`; `analysis.services`
stores it. Keeping this free of Django makes every reader and every check testable on its own and keeps the
transaction short: everything slow (decompressing, parsing, checking) happens before it opens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from analysis.identity import DriveIdentity
from analysis.pcie import LinkAssessment
from nvmedb_client.fio_output import FioSummary


@dataclass
class FlagRecord:
    kind: str
    reason: str
    run_key: str | None = None  # the measurement it belongs to, if any
    test: str | None = None  # the test run it belongs to, if any


@dataclass
class MeasurementRecord:
    run_key: str
    test: str
    phase: str
    series: str
    round_number: int
    block_size_bytes: int
    read_pct: int
    summary: FioSummary | None
    raw_file: str
    json_path: str
    threads: int | None = None
    iodepth: int | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    temperature_before_k: float | None = None
    temperature_after_k: float | None = None
    smart_before: dict | None = None
    smart_after: dict | None = None
    pattern: str = ""
    declared_runtime_s: float | None = None
    runtime_s: float | None = None  # wall clock, from the raw output (crosscheck.direction_runtime_s)
    in_steady_window: bool = False
    missing: dict[str, str] = field(default_factory=dict)


@dataclass
class WindowRecord:
    """One tracking variable's steady-state verdict, as re-derived here, and what the client or tool claimed."""

    variable: str
    phase: str
    metric: str
    block_size_bytes: int
    read_pct: int
    steady: bool
    steady_round: int | None
    window: dict | None  # WindowVerdict.to_dict() of the measurement window, None with fewer than 5 rounds
    claimed: dict | None = None
    claimed_steady: bool | None = None
    note: str = ""

    @classmethod
    def from_evaluation(cls, entry: dict, *, claimed: dict | None, claimed_steady: bool | None) -> WindowRecord:
        """From an entry of nvmedb_client.tracking.evaluate_runs (the server's own verdict) and what was claimed."""
        return cls(
            variable=entry["variable"],
            phase=entry["phase"],
            metric=entry["metric"],
            block_size_bytes=entry["block_size_bytes"],
            read_pct=entry["read_pct"],
            steady=bool(entry["steady"]),
            steady_round=entry["steady_round"],
            window=entry["window"],
            claimed=claimed,
            claimed_steady=claimed_steady,
            note=str(entry.get("reason") or ""),
        )

    @property
    def claim_differs(self) -> bool:
        if self.claimed is None or self.claimed_steady is None:
            return False
        claimed_round = self.claimed.get("steady_round")
        return self.claimed_steady != self.steady or (self.steady and claimed_round not in (None, self.steady_round))


@dataclass
class TestRunRecord:
    __test__ = False  # not a pytest class

    test: str
    measurements: list[MeasurementRecord] = field(default_factory=list)
    windows: list[WindowRecord] = field(default_factory=list)
    threads: int | None = None
    iodepth: int | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    fio_version: str = ""
    ioengine: str = ""
    max_temperature_k: float | None = None
    throttled: bool = False
    missing: dict[str, str] = field(default_factory=dict)
    surface: object | None = None  # analysis.pts.surface.SurfaceOutcome of a surface run
    recovery: dict | None = None  # HIR/XSR re-derived by the server (nvmedb_client.pts), with the client's claim
    demand_intensity: dict | None = None  # ECW, DIRTH: the server's derivation (analysis.pts.demand_intensity)
    demand_intensity_claim: dict | None = None
    demand_intensity_note: str = ""
    # why this test alone is not a PTS result (cells, rounds or stop rule short of its plan: analysis.compliance)
    compliance_reasons: list[str] = field(default_factory=list)


@dataclass
class HostRecord:
    cpu_model: str = ""
    cpu_count: int | None = None
    memory_bytes: int | None = None
    board_vendor: str = ""
    board_name: str = ""
    os_name: str = ""
    kernel: str = ""
    architecture: str = ""
    missing: dict[str, str] = field(default_factory=dict)


@dataclass
class SubmissionRecord:
    source: str  # client | ssspt | py-sss-pts
    identity: DriveIdentity
    interface: str = "nvme"
    profile: str = ""
    edition: str = ""
    compliant: bool = False
    compliance_reasons: list[str] = field(default_factory=list)
    target_kind: str = ""
    target_size_bytes: int | None = None
    active_range_bytes: int | None = None
    namespace_size_bytes: int | None = None
    overprovisioning: float | None = None
    write_cache: str = ""
    purge_method: str = ""
    scheduler: str = ""
    tool_versions: dict = field(default_factory=dict)
    source_license: str = ""
    source_reference: str = ""
    signed: bool = False
    host: HostRecord | None = None
    link: LinkAssessment | None = None
    link_source_file: str = ""
    warning_temperature_k: float | None = None
    critical_temperature_k: float | None = None
    percentage_used: int | None = None
    power_on_hours: int | None = None
    data_written_before_bytes: int | None = None
    drive_metadata: dict[str, str] = field(default_factory=dict)  # controller, nand_type, dram, form_factor if known
    test_runs: list[TestRunRecord] = field(default_factory=list)
    flags: list[FlagRecord] = field(default_factory=list)
    reject_reasons: list[str] = field(default_factory=list)
    hold_reasons: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)  # imports: field -> where the source states it
    plan: dict = field(default_factory=dict)  # the bundle's declared plan (client bundles), for the evidence gates
    gates_applied: bool = False  # analysis.plausibility.apply ran on this record
    model_gates_applied: bool = False  # analysis.plausibility.apply_model_evidence ran on this record
