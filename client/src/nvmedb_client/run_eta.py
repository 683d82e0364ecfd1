"""The run's time left for the progress display: bounds from where the walk stands (every series steady as early as
possible, or run to its round limit), with the fio start-up overhead measured so far."""

from __future__ import annotations

from nvmedb_client import steady_state
from nvmedb_client.plan_estimates import wipc_range_bytes


def remaining(runner) -> tuple[float, float]:
    """Bounds on the time left: every series steady as early as possible, or run to its round limit."""
    overhead = sum(runner.context.overheads) / len(runner.context.overheads) if runner.context.overheads else 0.35
    wipc_s = 2 * wipc_range_bytes(runner.plan) / 1e9 + overhead
    low = high = 0.0
    ctx = runner.context
    for bi, block in enumerate(runner.plan.blocks):
        if bi < ctx.block_index:
            continue
        if block.wipc and block.wipc_run_id not in runner.completed:
            low += wipc_s
            high += wipc_s
        for si, series in enumerate(block.series):
            current = bi == ctx.block_index and ctx.round
            if current and block.interleaved:
                # every series of a throughput block advances one round at a time, write then read
                per_cell = series.runtime_s + overhead
                cells = len(series.cells)
                done_rounds = ctx.round
                left_in_round = cells if si >= ctx.series_index else 0
                minimum = min(steady_state.WINDOW_ROUNDS, series.max_rounds)
                low += (left_in_round + max(0, minimum - done_rounds) * cells) * per_cell
                high += (left_in_round + max(0, series.max_rounds - done_rounds) * cells) * per_cell
                continue
            if bi == ctx.block_index and si < ctx.series_index:
                continue
            per_cell = series.runtime_s + overhead
            cells = len(series.cells)
            done_rounds = 0
            left_in_round = 0
            if bi == ctx.block_index and si == ctx.series_index and ctx.round:
                done_rounds = ctx.round
                left_in_round = cells - ctx.cell_index + 1
            minimum = 1 if series.time_series else min(steady_state.WINDOW_ROUNDS, series.max_rounds)
            low += (left_in_round + max(0, minimum - done_rounds) * cells) * per_cell
            high += (left_in_round + max(0, series.max_rounds - done_rounds) * cells) * per_cell
        fewest, most = block.timed_runs(fewest=True), block.timed_runs(fewest=False)  # fixed lengths
        low += sum(run.runtime_s + overhead for run in fewest if run.run_id not in runner.completed)
        high += sum(run.runtime_s + overhead for run in most if run.run_id not in runner.completed)
    return low, high
