"""The surface (an nvmedb extension) as the plan registry sees it: its grid from the options, its block with the
surface's own run ids. The grid, its cells and its figures live in nvmedb_client.pts.surface and surface_figures."""

from __future__ import annotations

import dataclasses

from nvmedb_client.plan_types import Block, Cell, PlanContext, Planned, Profile, Series
from nvmedb_client.pts import surface

TEST = surface.TEST


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
