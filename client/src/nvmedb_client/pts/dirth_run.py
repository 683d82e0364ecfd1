"""Running DIRTH's captures with the runner's checkpointed fio runs: per operating point its pre-write and its capture
(the plans are in dirth_prewrite and dirth_capture; the pre-write before each round of the sweep is in
dirth_prewrite)."""

from __future__ import annotations

from nvmedb_client.pts import demand_intensity, dirth_prewrite
from nvmedb_client.pts.dirth_capture import PHASE as CAPTURE_PHASE
from nvmedb_client.resume import ALLOWED_GAP_S


def run_point_prewrite(runner, block, point: str, threads: int, iodepth: int, number: int) -> None:
    """Before a capture: its point's pre-write at the point's TC/QD, unless done (or none is planned)."""
    prewrite = next((p for p in block.prewrites if p.point == point), None)
    if prewrite is not None and prewrite.run_id not in runner.completed:
        dirth_prewrite.run(runner, prewrite, threads, iodepth, number=number, of=len(block.captures))


def run_captures(runner, block) -> None:
    """The runner's hook: derive the operating points from the sweep's outputs, then run each point's capture.
    A point the sweep cannot give (no TC 1/QD 1 measurement) gets no capture; the derivation records why."""
    load = demand_intensity.parsing(lambda rel: (runner.files / rel).read_bytes())
    entry = demand_intensity.derive(block.test, runner.state["runs"], load)
    _note_long_gaps(runner, block)
    points = {op["name"]: op for op in (entry or {}).get("operating_points", [])}
    for number, capture in enumerate(block.captures, start=1):
        runner.context.round, runner.context.cell_index = number, 1
        runner._position(block=block.label, stage="captures", phase=CAPTURE_PHASE, round=number, round_complete=False)
        if capture.run_id in runner.completed:
            continue
        point = points.get(capture.point) or {"missing": "the sweep has no operating points"}
        if "threads" not in point:
            runner._message(f"no {capture.point} capture: {point.get('missing')}")
            continue
        threads, iodepth = point["threads"], point["iodepth"]
        run_point_prewrite(runner, block, capture.point, threads, iodepth, number)
        cell = _sweep_cell(block, threads, iodepth)
        runner._update(test=capture.test, phase=CAPTURE_PHASE, round=number, max_rounds=len(block.captures),
                       cell=capture.run_id, cell_index=1, cells=1)  # fmt: skip
        runner.run_cell(run_id=capture.run_id, test=capture.test, phase=CAPTURE_PHASE, round_number=1, cell=cell,
                        threads=threads, iodepth=iodepth, runtime_s=capture.runtime_s)  # fmt: skip


def _sweep_cell(block, threads: int, iodepth: int):
    """The sweep's own cell at this TC/QD: the capture issues exactly the stimulus the point was measured with."""
    return next(c for series in block.series for c in series.cells if (c.threads, c.iodepth) == (threads, iodepth))


def _note_long_gaps(runner, block) -> None:
    """A capture after a long interruption follows idle time the PTS does not allow: the test is not compliant."""
    for gap in runner.state.get("interruptions") or []:
        if gap.get("block") == block.label and gap.get("stage") == "captures" and gap["length_s"] > ALLOWED_GAP_S:
            runner._test_non_compliant(
                block.label,
                f"interrupted for {gap['length_s']:g} s during the operating-point captures: the captures after "
                f"the gap follow more than {ALLOWED_GAP_S:g} s of idle time",
            )
