"""The cells of a declared PTS plan's series, listed once for all the runs of a bundle that are looked up in them."""

from __future__ import annotations

from collections.abc import Mapping


class PlanCells:
    """Each plan series' cells as (pattern, block size, read %, threads, depth), listed once per series: every run
    of a bundle (hundreds) is looked up in the same few series of tens of cells. Lists, not sets: a hostile plan's
    values need not be hashable. Make one per read of a plan (the plan must not change while it is used)."""

    def __init__(self) -> None:
        self._by_series: dict[int, tuple[Mapping, list[tuple], list[tuple]]] = {}  # the series is held: ids stay

    def _listed(self, series: Mapping) -> tuple[Mapping, list[tuple], list[tuple]]:
        held = self._by_series.get(id(series))
        if held is None:
            cells = [
                (c.get("pattern"), c.get("block_size_bytes"), c.get("read_pct"), c.get("threads"), c.get("iodepth"))
                for c in _objects(series.get("cells"))
            ]
            held = self._by_series[id(series)] = (series, cells, [cell[:3] for cell in cells])
        return held

    def with_depth(self, series: Mapping) -> list[tuple]:
        return self._listed(series)[1]

    def without_depth(self, series: Mapping) -> list[tuple]:
        return self._listed(series)[2]


def _objects(value) -> list[Mapping]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []
