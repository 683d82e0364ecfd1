"""How the runner walks a plan's series: rounds until the tracking variables are steady (the PTS stop rule),
throughput's interleaved write/read rounds, and the write-saturation time series (WSAT and its optional workloads)
stopped by the bytes written or the time limit. Each takes the Runner, whose checkpointed fio runs it orders."""

from __future__ import annotations

from nvmedb_client import fio_jobs, steady_state
from nvmedb_client.plan_types import WSAT_CAPACITY_MULTIPLE, Block, Cell, Series
from nvmedb_client.progress import TrackingLine
from nvmedb_client.pts import registry
from nvmedb_client.run_state import RunError
from nvmedb_client.tracking import series_tracking


def run_rounds(runner, series: Series, block: Block) -> None:
    variables = series_tracking(series)
    before_round = registry.hook(block.test, "before_round")  # DIRTH: the port's writes before a round
    for round_number in range(1, series.max_rounds + 1):
        runner.context.round = round_number
        where = {"block": block.label, "stage": "rounds", "phase": series.phase, "round": round_number}
        if before_round is not None:
            before_round(runner, block, round_number)
        runner._position(**where, round_complete=False)
        for index, cell in enumerate(series.cells, start=1):
            runner.context.cell_index = index
            run_id = series.run_id(round_number, cell)
            if run_id in runner.completed:
                continue
            runner._update_series(series, round_number, run_id, cell_index=index, cells=len(series.cells))
            runner._run_series_cell(series, round_number, cell, run_id)
        points = tracking_points(runner, series, variables)
        runner._position(**where, round_complete=True)
        show_tracking(runner, points)
        runner.reporter.update(runner.status, "round-finished")
        if variables and steady_state.first_steady_round(points) is not None:
            return


def run_interleaved_rounds(runner, block: Block) -> None:
    """Throughput: every round runs the write segment, then the read segment; the block stops at the first round
    where every tracking variable of both is steady over the same window."""
    variables = {series.phase: series_tracking(series) for series in block.series}
    max_rounds = max(series.max_rounds for series in block.series)
    before_round = registry.hook(block.test, "before_round")
    for round_number in range(1, max_rounds + 1):
        runner.context.round = round_number
        where = {"block": block.label, "stage": "rounds", "phase": "tp", "round": round_number}
        if before_round is not None:
            before_round(runner, block, round_number)
        runner._position(**where, round_complete=False)
        for series_index, series in enumerate(block.series):
            runner.context.series_index, runner.context.cell_index = series_index, 1
            cell = series.cells[0]
            run_id = series.run_id(round_number, cell)
            if run_id in runner.completed:
                continue
            runner._update_series(series, round_number, run_id)
            starts = sequential_starts(runner, series, cell, round_number)
            runner._run_series_cell(series, round_number, cell, run_id, starts=starts)
        points: dict[str, list[tuple[int, float]]] = {}
        for series in block.series:
            points.update(tracking_points(runner, series, variables[series.phase]))
        runner._position(**where, round_complete=True)
        show_tracking(runner, points)
        runner.reporter.update(runner.status, "round-finished")
        if steady_state.first_steady_round(points) is not None:
            return


def sequential_starts(runner, series: Series, cell: Cell, round_number: int) -> list[int]:
    """Each job's start in its slice for this round (a throughput segment or a sequential WSAT workload's
    sample), carried over from the bytes the earlier rounds of the series moved (re-derived from their outputs, so
    a resumed run starts where the original would have)."""
    moved = []
    for earlier in range(1, round_number):
        summary = runner._summary(series.run_id(earlier, cell))
        moved.append(max(int(summary.read_bytes or 0), int(summary.write_bytes or 0)))
    return fio_jobs.carried_starts(
        range_bytes=runner.plan.active_range_bytes,
        threads=series.threads,
        block_size=cell.block_size_bytes,
        moved=moved,
    )


def run_samples(runner, series: Series, block: Block) -> None:
    record_stop = registry.hook(series.test, "record_stop")
    if record_stop is None:
        raise RunError(f"{series.test}: its samples stop by the bytes written, but its module keeps no record_stop")
    target = runner.plan.wsat_target_bytes
    written = 0
    cell = series.cells[0]
    for sample in range(1, series.max_rounds + 1):
        if written >= target:
            break
        runner.context.round, runner.context.cell_index = sample, 1
        # WSAT is one continuous time series: any pause inside it is inside the measurement
        runner._position(block=block.label, stage="rounds", phase=series.phase, round=sample, round_complete=False)
        run_id = series.run_id(sample, cell)
        if run_id not in runner.completed:
            runner._update(
                test=series.test,
                phase=series.phase,
                round=sample,
                max_rounds=series.max_rounds,
                cell=run_id,
                cell_index=1,
                cells=1,
            )
            # a sequential workload: each job continues in its own slice where the previous sample stopped
            starts = sequential_starts(runner, series, cell, sample) if series.split_range else None
            runner._run_series_cell(series, sample, cell, run_id, starts=starts)
        written += runner._summary(run_id).write_bytes
    if written >= target:
        reason = f"{written} bytes written, at least {WSAT_CAPACITY_MULTIPLE}x the capacity ({target} bytes)"
    else:
        reason = f"time limit reached ({series.max_rounds} samples of {series.runtime_s:g} s) with {written} of {target} bytes written"
    record = {"bytes_written": written, "target_bytes": target, "stop_reason": reason}
    record_stop(runner.state, series.test, record)
    runner._save()


def tracking_points(runner, series: Series, variables: list) -> dict[str, list[tuple[int, float]]]:
    points: dict[str, list[tuple[int, float]]] = {}
    for variable in variables:
        cell = next(
            c
            for c in series.cells
            if (c.block_size_bytes, c.read_pct) == (variable.block_size_bytes, variable.read_pct)
            and (variable.threads is None or (c.threads, c.iodepth) == (variable.threads, variable.iodepth))
        )
        values = []
        for round_number in range(1, series.max_rounds + 1):
            run_id = series.run_id(round_number, cell)
            if run_id not in runner.completed:
                break
            value = getattr(runner._summary(run_id), variable.metric)
            if value is None:
                raise RunError(f"{run_id} has no {variable.metric}: the tracking variable cannot be judged")
            values.append((round_number, float(value)))
        points[variable.id] = values
    return points


def show_tracking(runner, points: dict[str, list[tuple[int, float]]]) -> None:
    lines = []
    for variable, series in points.items():
        verdict = steady_state.latest_window(series)
        if verdict is None or verdict.average == 0:
            lines.append(TrackingLine(variable, len(series)))
            continue
        lines.append(
            TrackingLine(
                variable,
                len(series),
                data_excursion=verdict.data_excursion / verdict.average,
                data_limit=steady_state.MAX_DATA_EXCURSION,
                slope_excursion=verdict.slope_excursion / verdict.average,
                slope_limit=steady_state.MAX_SLOPE_EXCURSION,
                steady=verdict.steady,
            )
        )
    runner.status.tracking = lines
