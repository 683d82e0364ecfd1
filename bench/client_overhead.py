"""The client's overhead on a real `quick` run: wall time against the sum of fio's own runtimes, and peak memory.

Runs the client in this process (so ru_maxrss of self is the client's memory, fio's processes excluded) on a temp
file with 2-second cells, and prints:
  - wall time of the whole run, the sum of fio's runtimes (from its json+ output), and the overhead ratio
    (target: <= 5%), split into fio's own start-up/teardown and the client's work between fio runs, beside the
    real limit: fio's own cost per process, measured on an ioengine=null job of one cell's length, and per cell
    when one fio process runs several cells as job groups;
  - what that per-run overhead means for the specification's 60-second cells;
  - the client's peak resident memory (target: <= 100 MB);
each target with PASS / FAIL, the load average at the start and the end; it exits 1 when a target is missed.
BENCH_SMOKE=1: the throughput test only, 1-second cells on a 16 MiB file. Without fio it says so and exits 0.

Usage: python bench/client_overhead.py [--cell-seconds 2] [--tests iops,tp,lat,wsat,surface] [--size 256MiB]
       (--tests all: every test, the core four, HIR, XSR, ECW, DIRTH, the WSAT optional workloads and the surface)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._report import SMOKE, Report  # noqa: E402
from nvmedb_client import plan, runner  # noqa: E402
from nvmedb_client.fio_output import parse_fio_output  # noqa: E402
from nvmedb_client.progress import Reporter  # noqa: E402

OVERHEAD_TARGET = 0.05
MEMORY_TARGET_BYTES = 100 * 1000**2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell-seconds", type=float, default=2.0)
    parser.add_argument("--tests", default=",".join(plan.TESTS))  # every test, the nvmedb extensions included
    parser.add_argument("--size", default="256MiB")
    args = parser.parse_args()
    if not shutil.which("fio"):
        print("client overhead benchmark skipped: fio is not installed")
        return 0
    if SMOKE:  # throughput only, 1-second cells on a 16 MiB file
        args.cell_seconds, args.tests, args.size = 1.0, "tp", "16MiB"
    goals = Report("client overhead benchmark")

    with tempfile.TemporaryDirectory(prefix="nvmedb-bench-") as tmp:
        base = Path(tmp)
        os.environ["NVMEDB_CONFIG_DIR"] = str(base / "config")
        config = runner.RunConfig(
            target_kind="file",
            target_path=str(base / "target.img"),
            size_bytes=plan.parse_size(args.size),
            tests=list(plan.TESTS) if args.tests == "all" else args.tests.split(","),
            edition="enterprise",
            profile="quick",
            cell_runtime_s=args.cell_seconds,
        )
        run_dir = runner.create_run_dir(config=config, out_dir=base / "out")
        fio_wall: list[float] = []

        def time_fio(the_runner: runner.Runner) -> None:
            original = the_runner.fio_process.run

            def timed(argv, **options):  # options: the fio process's working directory and environment
                result = original(argv, **options)
                fio_wall.append(result.duration_s)
                return result

            the_runner.fio_process.run = timed

        started = time.monotonic()
        bundle = runner.execute_run(run_dir=run_dir, out_dir=base / "out", reporter=Reporter(), on_runner=time_fio)
        wall = time.monotonic() - started
        state = runner.load_state(run_dir)
        fio_runtime = sum(
            runner.fio_wall_runtime_s(parse_fio_output((run_dir / "files" / run["output_file"]).read_bytes()))
            for run in state["runs"]
        )
        bundle_bytes = bundle.stat().st_size

    runs = len(state["runs"])
    floor = fio_floor_s(args.cell_seconds)
    group_floor = fio_group_floor_s(args.cell_seconds, repeats=1 if SMOKE else 3)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    fio_startup = sum(fio_wall) - fio_runtime
    client_work = wall - sum(fio_wall)
    overhead = wall / fio_runtime - 1
    per_run = (wall - fio_runtime) / runs
    print(f"quick run, {args.tests} on a {args.size} file, {args.cell_seconds:g} s cells, {runs} fio runs")
    print(f"wall time                      {wall:9.1f} s")
    print(f"sum of fio's own runtimes      {fio_runtime:9.1f} s")
    goals.check(f"overhead, wall / fio - 1     {overhead:9.1%}", overhead <= OVERHEAD_TARGET,
                goal=f"<= {OVERHEAD_TARGET:.0%}")  # fmt: skip
    print(
        f"  of which fio's own start-up  {fio_startup / fio_runtime:9.1%}  ({fio_startup / runs * 1000:.0f} ms per run: "
        "fio's process start, job setup and teardown; an ioengine=null job shows the same)"
    )
    print(
        f"  of which the client          {client_work / fio_runtime:9.1%}  ({client_work / runs * 1000:.0f} ms per run: "
        "job files, checkpoints, steady-state checks, system facts, bundle)"
    )
    print(
        f"  the real limit: fio alone    {floor / args.cell_seconds:9.1%}  ({floor * 1000:.0f} ms per process: an "
        "ioengine=null job of one cell's length, no client, no device; what any client that runs each cell as its "
        "own fio process pays"
        + ("; above the goal before the client does anything)" if floor / args.cell_seconds > OVERHEAD_TARGET else ")")
    )
    print(
        f"  the real limit, batched      {group_floor / args.cell_seconds:9.1%}  ({group_floor * 1000:.0f} ms per cell: "
        f"{GROUPS} ioengine=null cells as stonewalled job groups of one fio process; what a client that ran a whole "
        "round in one fio process, losing the round to a kill instead of one cell, would still pay"
        + ("; above the goal too)" if group_floor / args.cell_seconds > OVERHEAD_TARGET else ")")
    )
    print(f"overhead on 60 s PTS cells     {per_run / 60:9.2%}  ({per_run * 1000:.0f} ms per run)")
    goals.check(f"client peak memory (maxrss)  {peak / 1000**2:9.1f} MB", peak <= MEMORY_TARGET_BYTES,
                goal=f"<= {MEMORY_TARGET_BYTES / 1000**2:.0f} MB")  # fmt: skip
    print(f"bundle size                    {bundle_bytes / 1000:9.1f} kB")
    return goals.finish()


def fio_floor_s(cell_seconds: float, repeats: int = 3) -> float:
    """fio's own cost per process: the wall time of an ioengine=null job of one cell's length, less the runtime it
    reports (the median of `repeats`). fio calibrates its clock, waits a fixed 100 ms for each group of jobs to start
    (backend.c, run_threads) and reaps its jobs at exit, whatever the client around it does."""
    costs = []
    for _ in range(repeats):
        started = time.monotonic()
        done = subprocess.run(
            ["fio", "--name=floor", "--ioengine=null", "--size=1g", "--time_based", "--output-format=json",
             f"--runtime={round(cell_seconds * 1000)}ms"],
            capture_output=True, check=True,
        )  # fmt: skip
        costs.append(time.monotonic() - started - runner.fio_wall_runtime_s(parse_fio_output(done.stdout)))
    return statistics.median(costs)


GROUPS = 8


def fio_group_floor_s(cell_seconds: float, repeats: int = 3) -> float:
    """fio's own cost per cell when one process runs GROUPS cells one after the other (stonewall: each its own group
    of jobs), its start-up shared by them: the wall time less the runtimes fio reports, per cell (the median of
    `repeats`). Each group still waits the fixed 100 ms for its jobs to start, and the main loop notices a group's end
    on its next 100 ms tick (backend.c, run_threads)."""
    groups = ["--name=cell-1"] + [
        option for i in range(2, GROUPS + 1) for option in (f"--name=cell-{i}", "--stonewall")
    ]
    costs = []
    for _ in range(repeats):
        started = time.monotonic()
        done = subprocess.run(
            ["fio", "--ioengine=null", "--size=1g", "--time_based", "--output-format=json",
             f"--runtime={round(cell_seconds * 1000)}ms", *groups],
            capture_output=True, check=True,
        )  # fmt: skip
        jobs = json.loads(done.stdout)["jobs"]
        measured = sum(runner.fio_wall_runtime_s({"jobs": [job]}) for job in jobs)
        if len(jobs) != GROUPS:
            raise RuntimeError(f"fio ran {len(jobs)} job groups, not {GROUPS}")
        costs.append((time.monotonic() - started - measured) / GROUPS)
    return statistics.median(costs)


if __name__ == "__main__":
    sys.exit(main())
