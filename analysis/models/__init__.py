"""The dataset: what was measured (drives, units, hosts, links), how (test runs, rounds) and what came out."""

from analysis.models.aggregates import DriveModelAggregate
from analysis.models.demand_intensity import (
    DemandIntensityCurve,
    DemandIntensityPoint,
    HistogramBucket,
    OperatingPoint,
)
from analysis.models.export_rows import ExportMeasurementRow
from analysis.models.factor_effects import EffectStatus, FactorEffect, FactorFitSummary, FactorUnitFigures
from analysis.models.hardware import DriveModel, Firmware, Host, PcieLink, PhysicalUnit, Vendor
from analysis.models.metadata import DriveMetadataProposal, ProposalStatus
from analysis.models.recovery import HirWaitState, RecoveryPoint, XsrGroup
from analysis.models.results import (
    Flag,
    FlagKind,
    Measurement,
    MeasurementFlagKinds,
    Round,
    SteadyStateWindow,
    TestRun,
    TestRunFlagKinds,
)
from analysis.models.summaries import DrivePageSummary
from analysis.models.surface import SurfaceCell, SurfacePattern

__all__ = [
    "DemandIntensityCurve",
    "DemandIntensityPoint",
    "HirWaitState",
    "OperatingPoint",
    "RecoveryPoint",
    "XsrGroup",
    "DriveMetadataProposal",
    "DriveModel",
    "DriveModelAggregate",
    "DrivePageSummary",
    "EffectStatus",
    "ExportMeasurementRow",
    "FactorEffect",
    "FactorFitSummary",
    "FactorUnitFigures",
    "HistogramBucket",
    "Firmware",
    "Flag",
    "FlagKind",
    "Host",
    "Measurement",
    "MeasurementFlagKinds",
    "PcieLink",
    "PhysicalUnit",
    "ProposalStatus",
    "Round",
    "SteadyStateWindow",
    "SurfaceCell",
    "SurfacePattern",
    "TestRun",
    "TestRunFlagKinds",
    "Vendor",
]
