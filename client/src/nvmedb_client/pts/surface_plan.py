"""The surface (an nvmedb extension) as the plan registry sees it: its grid from the options, its block with the
surface's own run ids, its figures in the manifest. The grid, its cells and its figures live in
nvmedb_client.pts.surface and surface_figures."""

from __future__ import annotations

import dataclasses

from nvmedb_client.plan_types import Block, Cell, PlanContext, Planned, Profile, Series, format_seconds
from nvmedb_client.pts import surface, surface_figures
from nvmedb_client.units import size_both

TEST = surface.TEST
MANIFEST_FIGURES = surface_figures.MANIFEST_FIGURES


def run_id(series: Series, round_number: int, cell: Cell) -> str:
    return surface.run_id(
        series.phase, cell.pattern, cell.block_size_bytes, cell.iodepth or series.iodepth, round_number
    )


def plan_grid(
    options: surface.SurfaceOptions | None,
    *,
    selected: bool,
    profile: Profile,
    active_range_bytes: int,
    lba_size_bytes: int | None,
) -> surface.SurfacePlan | None:
    """The grid when the surface test is selected (its options validated); options without the test are an error."""
    if not selected:
        if options is not None:
            raise ValueError("surface options were given but the surface test is not selected (add it to --tests)")
        return None
    options = options or surface.default_options(profile.name)
    surface.validate(options, active_range_bytes=active_range_bytes, lba_size_bytes=lba_size_bytes)
    return surface.plan_surface(options, profile_name=profile.name, profile_cell_s=profile.cell_runtime_s)


def plan_blocks(test: str, ctx: PlanContext) -> Planned:
    block: Block = surface.build_block(ctx.surface, wipc_threads=ctx.threads)
    named = tuple(dataclasses.replace(series, namer=run_id) for series in block.series)
    return Planned((dataclasses.replace(block, series=named),))


def describe_extension(surface: dict) -> list[str]:
    """The `nvmedb-client plan` lines of the grid (the plan's `extensions.surface`)."""
    lines = [
        "",
        f"surface ({surface['label']}): queue depth x block size, one job, "
        f"{surface['cell_runtime_s']:g} s per cell, {surface.get('repetitions', 1)} repetition(s) of every cell "
        f"({surface.get('interleaving', 'one pass')}; no steady-state rounds)",
        f"  patterns: {', '.join(surface['patterns'])}",
        f"  block sizes: {', '.join(_kib(b) for b in surface['block_sizes_bytes'])}",
        f"  queue depths: {', '.join(str(q) for q in surface['iodepths'])}",
        f"  {len(surface['cells'])} cells, {len(surface['skipped_cells'])} skipped (bs x QD above "
        f"{size_both(surface['options']['max_inflight_bytes'])} in flight)",
    ]
    pc = surface.get("random_write_preconditioning")
    if pc:
        lines.append(
            f"  random writes follow a random-write preconditioning run: {_kib(pc['block_size_bytes'])}, QD "
            f"{pc['iodepth']}, {format_seconds(pc['runtime_s'])}"
        )
    if not surface.get("repeatable"):
        lines.append("  not repeatable: fewer than 3 repetitions per cell (a trial; the surface page says so)")
    if surface.get("target_note"):
        lines.append(f"  {surface['target_note']}")
    return lines


def _kib(value: int) -> str:
    return f"{value / 1024:g} KiB"
