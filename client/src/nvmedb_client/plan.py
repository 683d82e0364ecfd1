"""The SNIA SSS PTS v2.0.2 test plan as data: editions, profiles, tests, rounds and stop rules.

A plan is built once from the operator's choices (`build_plan`) and never changes while it runs: the runner walks it,
`nvmedb-client plan` prints it and the manifest stores it (`plan_to_dict`). Everything that departs from the
specification (the `quick` profile, a file target, a TC/QD or round-limit override) makes the plan non-compliant and
is listed in `compliance_reasons`.

Each test plans its own blocks (its module in nvmedb_client.pts, found through nvmedb_client.pts.registry); this
module resolves the operator's choices and asks the registry. The plan's types live in nvmedb_client.plan_types, its
estimates in plan_estimates and its JSON form in plan_dict; their public names are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

# re-exported: the plan's public names live here (the CLI, the runner and the server import them from this module)
from nvmedb_client.plan_dict import plan_to_dict, segment_to_dict  # noqa: F401
from nvmedb_client.plan_estimates import (  # noqa: F401
    ASSUMED_RANDOM_WRITE_BYTES_PER_S,
    ASSUMED_RUN_OVERHEAD_S,
    ASSUMED_SEQ_WRITE_BYTES_PER_S,
    FILE_TARGET_SYSTEM_GZIP_BYTES,
    FIO_OUTPUT_GZIP_BYTES,
    MANIFEST_GZIP_BYTES_PER_RUN,
    QUICK_RUN_GZIP_BYTES,
    RUN_EXTRA_GZIP_BYTES,
    SYSTEM_FILES_GZIP_BYTES,
    DurationEstimate,
    bundle_bytes_per_run,
    count_runs,
    estimate_bundle_bytes,
    estimate_duration,
    wipc_bytes,
    wipc_range_bytes,
)
from nvmedb_client.plan_types import (  # noqa: F401
    EDITION_NAMES,
    EDITIONS,
    GIB,
    KIB,
    MIB,
    PROFILE_NAMES,
    QUICK_CELL_ENV,
    RANGE_ALIGNMENT,
    WIPC_BLOCK_SIZE,
    WIPC_PASSES,
    WSAT_CAPACITY_MULTIPLE,
    Block,
    Cell,
    Edition,
    Plan,
    PlanContext,
    Profile,
    Series,
    SkippedCell,
    format_seconds,
    get_profile,
    pts_profile,
    quick_profile,
)
from nvmedb_client.pts import registry
from nvmedb_client.pts.registry import CORE_TESTS, ENTERPRISE_ONLY_TESTS, EXTENSIONS, TESTS  # noqa: F401
from nvmedb_client.steady_state import DEFAULT_MAX_ROUNDS
from nvmedb_client.tracking import series_tracking  # noqa: F401
from nvmedb_client.units import size_both

if TYPE_CHECKING:
    from nvmedb_client.pts.surface import SurfaceOptions

# The other PTS tests (HIR, XSR, ECW, DIRTH and the WSAT optional workloads, nvmedb_client.pts) run only when asked
# for (`--tests`, or `--tests pts` for every PTS test of the edition): each of them can take many hours on a drive.
DEFAULT_TESTS = CORE_TESTS
# the core tests' matrices by their historical names: the site's methodology page (browse.methodology) quotes them
_CORE = {test: registry.module(test) for test in CORE_TESTS}
IOPS_MIXES, IOPS_BLOCK_SIZES = _CORE["iops"].MIXES, _CORE["iops"].BLOCK_SIZES
LAT_MIXES, LAT_BLOCK_SIZES = _CORE["lat"].MIXES, _CORE["lat"].BLOCK_SIZES
TP_BLOCK_SIZES, TP_THREADS, TP_IODEPTH = _CORE["tp"].BLOCK_SIZES, _CORE["tp"].THREADS, _CORE["tp"].IODEPTH
WSAT_BLOCK_SIZE = _CORE["wsat"].BLOCK_SIZE


def edition_tests(edition: str) -> tuple[str, ...]:
    """Every PTS test of `edition` (`--tests pts`): ECW and DIRTH are defined for enterprise drives only."""
    return tuple(
        t for t in TESTS if t not in EXTENSIONS and (edition == "enterprise" or t not in ENTERPRISE_ONLY_TESTS)
    )


def build_plan(
    *,
    tests: Sequence[str] | None = None,
    edition: str = "enterprise",
    profile: str | Profile = "pts",
    capacity_bytes: int,
    target_kind: str = "device",
    threads: int | None = None,
    iodepth: int | None = None,
    max_rounds: int | None = None,
    lba_size_bytes: int | None = None,
    surface: SurfaceOptions | None = None,
) -> Plan:
    """The plan for the chosen tests (always run in PTS order iops, tp, lat, wsat) on a target of `capacity_bytes`.

    `lba_size_bytes` is the namespace's LBA data size when known: with direct I/O no block smaller than one LBA can be
    issued, so such cells (0.5 KiB on a 4096-byte-LBA namespace) are planned as skipped, each with the reason."""
    tests = DEFAULT_TESTS if tests is None else tests
    unknown = [t for t in tests if t not in TESTS]
    if unknown or not tests:
        raise ValueError(f"unknown test {', '.join(unknown) or '(none)'}: choose from {', '.join(TESTS)}")
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}: choose one of {', '.join(EDITION_NAMES)}")
    if target_kind not in ("device", "file"):
        raise ValueError(f"unknown target kind {target_kind!r}")
    prof = get_profile(profile) if isinstance(profile, str) else profile
    ed = EDITIONS[edition]
    tc = ed.threads if threads is None else threads
    qd = ed.iodepth if iodepth is None else iodepth
    rounds = prof.max_rounds if max_rounds is None else max_rounds
    for name, value in (("thread count", tc), ("queue depth", qd), ("max rounds", rounds)):
        if value < 1:
            raise ValueError(f"the {name} must be at least 1, got {value}")

    usable = capacity_bytes if prof.range_cap_bytes is None else min(capacity_bytes, prof.range_cap_bytes)
    active_range = (usable * ed.active_range_pct // 100) // RANGE_ALIGNMENT * RANGE_ALIGNMENT
    if active_range < RANGE_ALIGNMENT * 4:
        raise ValueError(
            f"the target is too small: its {ed.active_range_pct}% active range must hold at least 4 MiB, "
            f"got {active_range} bytes from a capacity of {capacity_bytes} bytes"
        )

    reasons: list[str] = []
    if prof.name == "quick":
        reasons.append("profile quick: short cells, small ranges and few rounds are not the PTS")
    if target_kind == "file":
        reasons.append("file target: a file on a filesystem is measured, not a drive")
    if tc != ed.threads:
        reasons.append(f"thread count overridden: TC {tc} instead of the {ed.name} edition's TC {ed.threads}")
    if qd != ed.iodepth:
        reasons.append(f"queue depth overridden: QD {qd} instead of the {ed.name} edition's QD {ed.iodepth}")
    if ed.name != "enterprise":
        reasons += [f"{t}: an Enterprise (PTS-E) test, run with the {ed.name} edition's settings" for t in tests
                    if t in ENTERPRISE_ONLY_TESTS]  # fmt: skip
    if rounds < DEFAULT_MAX_ROUNDS and prof.name == "pts":
        reasons.append(
            f"max rounds lowered to {rounds}: the PTS allows up to {DEFAULT_MAX_ROUNDS} to reach steady state"
        )

    # the extension's module plans its grid from the operator's options (validated there)
    surface_grid = registry.hook("surface", "plan_grid")(
        surface,
        selected="surface" in tests,
        profile=prof,
        active_range_bytes=active_range,
        lba_size_bytes=lba_size_bytes,
    )
    blocks: list[Block] = []
    skipped: list[SkippedCell] = []

    def runnable(test: str, phase: str, cells: tuple[Cell, ...]) -> tuple[Cell, ...]:
        if not lba_size_bytes:
            return cells
        kept = []
        for cell in cells:
            if cell.block_size_bytes < lba_size_bytes:
                reason = (
                    f"{test} {format_block_size(cell.block_size_bytes)} cells skipped: the namespace's LBA is "
                    f"{lba_size_bytes} bytes, and direct I/O cannot issue a {cell.block_size_bytes}-byte block "
                    "(this cell is not PTS-compliant on this namespace)"
                )
                skipped.append(SkippedCell(test, phase, cell, reason))
            else:
                kept.append(cell)
        return tuple(kept)

    selected = [t for t in TESTS if t in tests]
    ctx = PlanContext(
        profile=prof,
        edition=ed,
        threads=tc,
        iodepth=qd,
        max_rounds=rounds,
        threads_override=threads,
        iodepth_override=iodepth,
        lba_size_bytes=lba_size_bytes,
        active_range_bytes=active_range,
        runnable=runnable,
        surface=surface_grid,
    )
    for test in selected:
        planned = registry.module(test).plan_blocks(test, ctx)
        blocks += planned.blocks
        reasons += planned.reasons

    reasons += list(dict.fromkeys(entry.reason for entry in skipped))
    return Plan(
        tests=tuple(selected),
        edition=ed,
        profile=prof,
        target_kind=target_kind,
        capacity_bytes=capacity_bytes,
        active_range_bytes=active_range,
        threads=tc,
        iodepth=qd,
        max_rounds=rounds,
        wsat_target_bytes=WSAT_CAPACITY_MULTIPLE * usable,
        blocks=tuple(blocks),
        compliance_reasons=tuple(reasons),
        lba_size_bytes=lba_size_bytes,
        skipped_cells=tuple(skipped),
        surface=surface_grid,
    )


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'256MiB' -> 268435456. K/M/G/T/P alone or with iB are powers of 1024; KB/MB/GB/TB are powers of 1000."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"cannot read the size {text!r}: write it like 256MiB, 1GiB, 500GB or 1073741824")
    number, prefix, binary, byte = match.groups()
    power = "kmgtp".find(prefix.lower()) + 1 if prefix else 0
    base = 1000 if (prefix and byte and not binary) else 1024
    value = float(number) * base**power
    if value != int(value) or value <= 0:
        raise ValueError(f"the size {text!r} is not a positive whole number of bytes")
    return int(value)


def format_block_size(value: int) -> str:
    return f"{value / KIB:g} KiB"


def format_bytes(value: float) -> str:
    """Decimal first, binary in parentheses (the formatting rules of `nvmedb_client.units`)."""
    return size_both(value)
