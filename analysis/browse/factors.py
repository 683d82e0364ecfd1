"""What explains a drive model's spread: the factors its public runs differ by, each with an effect size and the
units behind it.

Plain functions over the rows `queries.factor_runs` reads in one query. For each factor a run is put in a level
(Gen3 / Gen4, firmware revision, …); each unit counts once per level (the median of its runs, so one unit tested ten
times does not outvote ten units); a level's value is the median of its units. The effect is the highest level
median over the lowest, minus one: "+48%" means the best level is 1.48 × the worst. Runs whose level is unknown
are left out. A factor with one known level does not explain anything here: the page names that level and how
many runs record it ("host CPU Cortex-A72: recorded for 2 of 16 runs"), never "the same for every unit", since the
runs that do not record it may differ. Bus-bound and thermal throttling are verdicts on data some runs lack: a run
without a known link bandwidth (or without temperatures) is unknown for them, not "not bus-bound" ("not throttled").
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from analysis.browse import units
from analysis.headline import BY_KEY
from analysis.overprovisioning import spare_vs_user

# Namespace sizes are whole LBAs: a namespace within 0.1% of tnvmcap is the full drive.
FULL_NAMESPACE_TOLERANCE = 0.001
FACTOR_METRICS = ("iops_4k_read", "iops_4k_write", "bw_1m_read", "bw_1m_write")


def op_level(run: dict) -> str | None:
    spare = spare_vs_user(run["overprovisioning"])
    if spare is None:
        return None
    if run["overprovisioning"] <= FULL_NAMESPACE_TOLERANCE:
        return "full namespace"
    return f"{units.significant(spare * 100)}% spare"


def _wear_level(run: dict) -> str | None:
    used = run["percentage_used"]
    if used is None:
        return None
    return "under 10% used" if used < 10 else "10–49% used" if used < 50 else "50% used or more"


def _bus_level(run: dict) -> str | None:
    if run["bus_bound"]:
        return "bus-bound"
    return "not bus-bound" if run.get("pcie_link__usable_bandwidth_bytes_per_s") else None


def _thermal_level(run: dict) -> str | None:
    if run["thermal_throttle"]:
        return "throttled"
    return "not throttled" if run.get("max_temperature_k") is not None else None


def _link_level(run: dict) -> str | None:
    below = run["pcie_link__below_capability"]
    return None if below is None else "below capability" if below else "at capability"


@dataclass(frozen=True)
class Factor:
    key: str
    label: str
    metric: str  # the headline this factor is judged on: the one it is known to move
    level_of: Callable[[dict], str | None]
    why: str


FACTORS: tuple[Factor, ...] = (
    Factor("pcie", "PCIe generation", "bw_1m_read",
           lambda r: f"Gen{g}" if (g := r["pcie_link__generation"]) else None,
           "A slower link caps sequential throughput."),
    Factor("link", "PCIe link state", "bw_1m_read", _link_level,
           "A link trained below what both ends can do caps throughput."),
    Factor("bus", "Bus-bound runs", "bw_1m_read", _bus_level, "The link, not the drive, set these numbers."),
    Factor("firmware", "Firmware", "iops_4k_read", lambda r: r["firmware__revision"] or None,
           "Firmware updates change garbage collection and queueing."),
    Factor("op", "Over-provisioning", "iops_4k_write", op_level,
           "More spare area means less write amplification in steady state."),
    Factor("thermal", "Thermal throttling", "bw_1m_write", _thermal_level,
           "A drive at its thermal limit slows itself down."),
    Factor("wear", "Wear (percentage used)", "iops_4k_write", _wear_level,
           "Worn NAND may need more retries and more garbage collection."),
    Factor("host", "Host CPU", "iops_4k_read", lambda r: r["host__cpu_model"] or None,
           "Small random I/O at high queue depth can be limited by the host."),
)  # fmt: skip


@dataclass
class FactorRow:
    key: str
    label: str
    why: str
    metric: str
    metric_label: str
    levels: list[tuple[str, int, float]]  # (level, units, median in the metric's stored unit), lowest first
    effect_pct: float | None  # highest ÷ lowest level median − 1, in %; None with one level
    n_units: int
    groups: frozenset = frozenset()  # the units of each level: factors that split units alike cannot be told apart
    moves_with: list[str] = field(default_factory=list)
    n_runs_known: int = 0  # runs whose level is known (whatever their metrics)
    n_runs: int = 0  # runs read

    @property
    def recorded(self) -> str:
        """How many runs record this factor, as a reader reads it: "recorded for all 3 runs", "recorded for 2 of 16
        runs", "recorded for none of 3 runs"."""
        runs = f"run{'s' if self.n_runs != 1 else ''}"
        if self.n_runs_known == self.n_runs:
            return f"recorded for all {self.n_runs} {runs}" if self.n_runs > 1 else f"recorded for {self.n_runs} {runs}"
        if self.n_runs_known == 0:
            return f"recorded for none of {self.n_runs} {runs}"
        return f"recorded for {self.n_runs_known} of {self.n_runs} {runs}"

    @property
    def varies(self) -> bool:
        return len(self.levels) >= 2

    @property
    def effect(self) -> str:
        return "—" if self.effect_pct is None else f"+{units.significant(self.effect_pct)}%"

    @property
    def levels_text(self) -> str:
        unit = BY_KEY[self.metric].unit
        return "; ".join(
            f"{level}: {units.by_unit(unit, value)} ({n} unit{'s' if n != 1 else ''})"
            for level, n, value in self.levels
        )


@dataclass
class Overprovisioning:
    """Both over-provisioning figures of each distinct namespace size seen, and whether any was shrunk."""

    figures: list[tuple[float, float, int]] = field(default_factory=list)  # (hidden share, spare vs user, units)
    below_capacity: bool = False
    unknown_units: int = 0


def unit_key(run: dict) -> object:
    return run["unit_id"] if run["unit_id"] is not None else f"run-{run['id']}"


def factor_row(factor: Factor, runs: list[dict]) -> FactorRow:
    metric = factor.metric
    column = f"m_{metric}"
    per_unit: dict[str, dict[object, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        value, level = run.get(column), factor.level_of(run)
        if value is not None and level is not None:
            per_unit[level][unit_key(run)].append(value)
    levels = sorted(
        (
            (level, len(by_unit), statistics.median(statistics.median(v) for v in by_unit.values()))
            for level, by_unit in per_unit.items()
        ),
        key=lambda item: item[2],
    )
    effect = None
    if len(levels) >= 2 and levels[0][2] > 0:
        effect = (levels[-1][2] / levels[0][2] - 1) * 100
    n_units = len({u for by_unit in per_unit.values() for u in by_unit})
    groups = frozenset(frozenset(by_unit) for by_unit in per_unit.values())
    known = sum(1 for run in runs if factor.level_of(run) is not None)
    return FactorRow(
        factor.key, factor.label, factor.why, metric, BY_KEY[metric].label, levels, effect, n_units, groups,
        n_runs_known=known, n_runs=len(runs),
    )  # fmt: skip


def factor_rows(runs: list[dict]) -> list[FactorRow]:
    """Every factor: those that vary first (largest effect first), then those with one known level, then those no
    run records (no level), each with how many runs record it."""
    rows = [factor_row(f, runs) for f in FACTORS]
    varying = sorted((r for r in rows if r.varies), key=lambda r: -(r.effect_pct or 0))
    for row in varying:
        row.moves_with = [o.label for o in varying if o is not row and o.groups == row.groups]
    unrecorded = [r for r in rows if not r.levels and not r.n_runs_known]
    return varying + [r for r in rows if not r.varies and r.levels] + unrecorded


def confounded_groups(rows: list[FactorRow]) -> list[list[str]]:
    """The labels of factors that split the units into the same groups, each group once."""
    groups: dict[frozenset, list[str]] = {}
    for row in rows:
        if row.varies and row.moves_with:
            groups.setdefault(frozenset([row.label, *row.moves_with]), [row.label, *row.moves_with])
    return list(groups.values())


def overprovisioning_summary(runs: list[dict]) -> Overprovisioning:
    by_share: dict[float, set] = defaultdict(set)
    unknown: set = set()
    for run in runs:
        share = run["overprovisioning"]
        if share is None:
            unknown.add(unit_key(run))
        else:
            by_share[round(share, 4)].add(unit_key(run))
    summary = Overprovisioning(unknown_units=len(unknown - {u for us in by_share.values() for u in us}))
    for share in sorted(by_share):
        summary.figures.append((share, spare_vs_user(share), len(by_share[share])))
    summary.below_capacity = any(share > FULL_NAMESPACE_TOLERANCE for share in by_share)
    return summary


def op_breakdown(runs: list[dict]) -> list[tuple[str, str, str, int]]:
    """Where units differ in over-provisioning: each headline metric's median per OP level, as (metric, level,
    median, units). Empty when every unit has the same OP (or none is known)."""
    rows = []
    for metric in FACTOR_METRICS:
        row = factor_row(Factor("op", "Over-provisioning", metric, op_level, ""), runs)
        if row.varies:
            unit = BY_KEY[metric].unit
            rows.extend((row.metric_label, level, units.by_unit(unit, value), n) for level, n, value in row.levels)
    return rows
