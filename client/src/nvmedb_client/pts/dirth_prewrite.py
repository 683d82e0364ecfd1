"""DIRTH's pre-writes, as the ADATA PTS 2.0 port runs them: random writes (R/W 0/100) at the DIRTH block size, 5
minutes at TC 32/QD 32 before each round of the TC x QD sweep, and 60 minutes at each operating point's TC/QD before
that point's capture. They are plain fio runs recorded like any run, under their own phase, and are no cells of the
sweep: the demand-intensity curve, the tracking variable and the operating points never read them. Running one takes
the Runner, whose checkpointed fio runs it orders (nvmedb_client.pts.dirth_run runs the captures)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from nvmedb_client.plan_types import Cell
from nvmedb_client.pts import dirth, dirth_capture

PHASE = "prewrite"
PATTERN = "randwrite"
READ_PCT = 0
ROUND_PREWRITE_S = 300  # before each round, at the sweep's highest TC/QD (TC 32/QD 32)
POINT_PREWRITE_S = 3600  # before each operating point's capture, at that point's TC/QD
# quick profile: a round's pre-write lasts one sweep cell, a point's two, so every quick test still fits in minutes
QUICK_ROUND_CELLS = 1
QUICK_POINT_CELLS = 2


@dataclass(frozen=True)
class Prewrite:
    """One planned pre-write: before a round of the sweep (`round`) or before an operating point's capture
    (`point`, whose TC/QD is known only after the sweep)."""

    run_id: str
    test: str
    runtime_s: float
    threads: int | None
    iodepth: int | None
    round: int | None = None
    point: str | None = None
    pattern: str = PATTERN
    block_size_bytes: int = dirth.BLOCK_SIZE
    read_pct: int = READ_PCT

    def to_dict(self) -> dict:
        data = {"phase": PHASE, **asdict(self)}
        if self.point is not None:
            data["decided"] = dirth_capture.DECIDED
        return data


def round_run_id(round_number: int) -> str:
    return f"dirth-r{round_number:02d}-prewrite"


def point_run_id(point: str) -> str:
    return f"dirth-prewrite-{point}"


def plan_prewrites(profile, *, max_rounds: int, threads: int, iodepth: int) -> tuple[Prewrite, ...]:
    """One pre-write before each round the sweep may run (at its highest TC/QD), one before each capture."""
    quick = profile.name == "quick"
    round_s = profile.cell_runtime_s * QUICK_ROUND_CELLS if quick else ROUND_PREWRITE_S
    point_s = profile.cell_runtime_s * QUICK_POINT_CELLS if quick else POINT_PREWRITE_S
    rounds = tuple(
        Prewrite(round_run_id(number), "dirth", round_s, threads, iodepth, round=number)
        for number in range(1, max_rounds + 1)
    )
    points = tuple(
        Prewrite(point_run_id(name), "dirth", point_s, None, None, point=name) for name in dirth.OPERATING_POINTS
    )
    return rounds + points


def describe(prewrites: Sequence[Mapping]) -> list[str]:
    """The `nvmedb-client plan` lines of a block's pre-writes."""
    rounds = [p for p in prewrites if p.get("round") is not None]
    points = [p for p in prewrites if p.get("point") is not None]
    lines = []
    if rounds:
        first = rounds[0]
        lines.append(
            f"  pre-writes: before each round, {first['runtime_s']:g} s of random writes (R/W 0/100, "
            f"{first['block_size_bytes'] / 1024:g} KiB) at TC {first['threads']}/QD {first['iodepth']} "
            f"({len(rounds)} at most); not cells of the sweep"
        )
    if points:
        names = ", ".join(f"{p['point']} ({p['runtime_s']:g} s)" for p in points)
        lines.append(
            f"  pre-writes: before each capture, random writes (R/W 0/100, "
            f"{points[0]['block_size_bytes'] / 1024:g} KiB) at the point's TC/QD: {names}"
        )
    return lines


def run_before_round(runner, block, round_number: int) -> None:
    """Before each round of a sweep: the round's pre-write, unless done (or none is planned)."""
    prewrite = next((p for p in block.prewrites if p.round == round_number), None)
    if prewrite is None or prewrite.run_id in runner.completed:
        return
    # an interruption here re-runs this pre-write: the round after it follows writes, not the idle time
    runner._position(block=block.label, stage="prewrite", phase=PHASE, round=round_number, round_complete=False)
    run(runner, prewrite, prewrite.threads, prewrite.iodepth, number=round_number, of=len(block.prewrites))


def run(runner, prewrite: Prewrite, threads: int, iodepth: int, *, number: int, of: int) -> None:
    cell = Cell(prewrite.pattern, prewrite.block_size_bytes, prewrite.read_pct)
    runner._update(test=prewrite.test, phase=PHASE, round=number, max_rounds=of, cell=prewrite.run_id,
                   cell_index=1, cells=1)  # fmt: skip
    runner.run_cell(run_id=prewrite.run_id, test=prewrite.test, phase=PHASE, round_number=prewrite.round or 1,
                    cell=cell, threads=threads, iodepth=iodepth, runtime_s=prewrite.runtime_s)  # fmt: skip
