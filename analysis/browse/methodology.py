"""The numbers the methodology page quotes, read from the code that applies them (so the page cannot drift)."""

from __future__ import annotations

from analysis import aggregates, crosscheck, pcie, plausibility, unwritten
from analysis.browse import units
from analysis.headline import HEADLINES
from nvmedb_client import plan, steady_state, tracking


def methodology_context() -> dict:
    return {
        "window_rounds": steady_state.WINDOW_ROUNDS,
        "max_data_excursion_pct": round(steady_state.MAX_DATA_EXCURSION * 100),
        "max_slope_excursion_pct": round(steady_state.MAX_SLOPE_EXCURSION * 100),
        "max_rounds": steady_state.DEFAULT_MAX_ROUNDS,
        "iops_mixes": [units.mix(m) for m in plan.IOPS_MIXES],
        "iops_block_sizes": [units.block_size(b) for b in plan.IOPS_BLOCK_SIZES],
        "lat_mixes": [units.mix(m) for m in plan.LAT_MIXES],
        "lat_block_sizes": [units.block_size(b) for b in plan.LAT_BLOCK_SIZES],
        "tp_block_sizes": {k: [units.block_size(b) for b in v] for k, v in plan.TP_BLOCK_SIZES.items()},
        "iops_tracked": [f"{units.block_size(bs)} {units.mix(mix)}" for mix, bs in tracking.IOPS_VARIABLES],
        "lat_tracked": [f"{units.block_size(bs)} {units.mix(mix)}" for mix, bs in tracking.LAT_VARIABLES],
        "wsat_block_size": units.block_size(plan.WSAT_BLOCK_SIZE),
        "wsat_capacity_multiple": plan.WSAT_CAPACITY_MULTIPLE,
        "wipc_block_size": units.block_size(plan.WIPC_BLOCK_SIZE),
        "wipc_passes": plan.WIPC_PASSES,
        "editions": list(plan.EDITIONS.values()),
        "pts_profile": plan.pts_profile(),
        "headlines": HEADLINES,
        "bus_bound_pct": round(pcie.BUS_BOUND_UTILIZATION * 100),
        "default_max_payload": pcie.DEFAULT_MAX_PAYLOAD_BYTES,
        "outlier_z": aggregates.OUTLIER_Z,
        "min_peers": aggregates.MIN_PEERS,
        "arithmetic_tolerance_pct": round(crosscheck.ARITHMETIC_TOLERANCE * 100),
        "runtime_tolerance_pct": round(crosscheck.RUNTIME_TOLERANCE * 100),
        "min_coverage_pct": round(unwritten.MIN_COVERAGE * 100),
        "plausibility_rules": list(plausibility.RULES.items()),
        "link_margin_pct": round(plausibility.LINK_MARGIN * 100),
    }
