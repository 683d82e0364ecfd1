"""Running a block's segments (HIR bursts and baselines, XSR groups) with the runner's checkpointed fio runs."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from nvmedb_client import fio_jobs
from nvmedb_client.plan_types import Block, Cell
from nvmedb_client.pts import dirth_run
from nvmedb_client.pts.segments import LOG_DIR, LOG_PREFIX_ENV, Segment

# fio records the expanded log prefix in its JSON output: it is always a relative path, so no directory of the
# user's is recorded. Logs are written beside fio's working directory and moved into the run's files afterwards.
SCRATCH_DIR = ".nvmedb-logs"


@dataclass
class LogPlace:
    run_id: str
    files: Path  # the run directory's files/
    cwd: str  # fio's working directory
    env: dict = field(default_factory=dict)

    @classmethod
    def for_run(cls, runner, run_id: str) -> LogPlace:
        cwd = Path(runner.fio_cwd) if runner.fio_cwd else runner.files
        scratch = SCRATCH_DIR if runner.fio_cwd else LOG_DIR
        place = cls(run_id, runner.files, str(cwd), {LOG_PREFIX_ENV: f"{scratch}/{run_id}"})
        place.discard()
        (cwd / scratch).mkdir(parents=True, exist_ok=True)
        return place

    def _written(self) -> list[Path]:
        prefix = Path(self.cwd) / self.env[LOG_PREFIX_ENV]
        return sorted(prefix.parent.glob(f"{prefix.name}_*.log"))

    def discard(self) -> None:
        """Remove what an earlier, unfinished attempt of this run left."""
        if self.env:
            for path in self._written():
                path.unlink()
        for path in (self.files / LOG_DIR).glob(f"{self.run_id}_*.log"):
            path.unlink()

    def collect(self) -> list[str]:
        """Move the logs into files/logs and return their paths relative to files/."""
        target = self.files / LOG_DIR
        target.mkdir(parents=True, exist_ok=True)
        out = []
        for path in self._written():
            destination = target / path.name
            if path != destination:
                shutil.move(str(path), destination)
            with open(destination, "rb") as handle:
                os.fsync(handle.fileno())
            out.append(f"{LOG_DIR}/{path.name}")
        scratch = Path(self.cwd) / SCRATCH_DIR
        if scratch.is_dir() and not any(scratch.iterdir()):
            scratch.rmdir()
        return out


def run_after_series(runner, block: Block) -> None:
    """The timed runs after a block's series: HIR/XSR segments, DIRTH's operating-point captures."""
    run_segments(runner, block)
    if block.captures:
        dirth_run.run_captures(runner, block)


def run_segments(runner, block: Block) -> None:
    engine = runner.state["ioengine"]
    for number, segment in enumerate(block.segments, start=1):
        runner.context.round, runner.context.cell_index = number, 1
        runner._position(block=block.label, stage="segments", phase=segment.phase, round=number, round_complete=False)
        if segment.run_id in runner.completed:
            continue
        runner._update(
            test=segment.test,
            phase=segment.phase,
            round=number,
            max_rounds=len(block.segments),
            cell=segment.run_id,
            cell_index=1,
            cells=1,
        )
        job = fio_jobs.render_segment(
            name=segment.run_id,
            filename=runner.recorded_target,
            segment=segment,
            range_bytes=runner.plan.active_range_bytes,
            ioengine=engine["engine"],
            engine_note=engine["note"],
        )
        runner._run_fio(
            run_id=segment.run_id,
            test=segment.test,
            phase=segment.phase,
            round_number=segment.index,
            cell=_cell(segment),
            threads=segment.threads,
            iodepth=segment.iodepth,
            runtime_s=segment.runtime_s,
            job_text=job,
            logs=LogPlace.for_run(runner, segment.run_id),
        )


def _cell(segment: Segment) -> Cell:
    return Cell(segment.pattern, segment.block_size_bytes, 0)
