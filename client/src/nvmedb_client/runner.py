"""Executes a plan into a run directory, one checkpointed fio run at a time, and packs the bundle.

A run is deterministic given its completed runs: resuming walks the plan from the start, skips every completed run,
re-derives every stop decision from the outputs already on disk, and re-runs the cell that was running when the
process died (its partial output is discarded). See run_state for the run directory, fio_process for how fio is
started and stopped, and device for purging and the write cache.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nvmedb_client import bundle, device, fio_jobs, privacy, resume, rounds, run_eta, run_manifest, run_target, signing
from nvmedb_client.fio_output import FioOutputError, FioSummary, parse_fio_output, summarize
from nvmedb_client.fio_process import FioProcess
from nvmedb_client.plan import (
    Block,
    Cell,
    Series,
    wipc_range_bytes,
)
from nvmedb_client.progress import Reporter, Status
from nvmedb_client.pts import runs as pts_runs
from nvmedb_client.run_state import (  # noqa: F401 - re-exported: the run's public names live here
    FILES,
    STATE_FILE,
    RunConfig,
    RunError,
    RunInterrupted,
    config_from_state,
    create_run_dir,
    load_state,
    save_config,
    utc_now,
    write_json_atomic,
)
from nvmedb_client.system import collect, commands

logger = logging.getLogger(__name__)

BUNDLE_SUFFIX = ".nvmedb.tar.gz"


@dataclass
class _Context:
    """Where the walk over the plan stands, for the progress display and the ETA."""

    block_index: int = 0
    series_index: int = 0
    round: int = 0
    cell_index: int = 0
    overheads: list[float] = field(default_factory=list)


class Runner:
    def __init__(self, *, run_dir: Path, reporter: Reporter | None = None, fio: str = "fio"):
        self.run_dir = run_dir
        self.files = run_dir / FILES
        self.state = load_state(run_dir)
        self.config = config_from_state(self.state)
        self.plan = self.config.build_plan()
        self.reporter = reporter or Reporter()
        self.fio = os.path.abspath(fio) if os.sep in fio else fio  # fio runs in the target file's directory
        self.fio_process = FioProcess()
        self.completed: dict[str, dict] = {run["id"]: run for run in self.state["runs"]}
        self.summaries: dict[str, FioSummary] = {}
        self.status = Status(max_rounds=self.plan.max_rounds)
        self.context = _Context()
        self.interrupted: str | None = None
        self.device = privacy.kernel_device(self.config.target_path) if self.config.target_kind == "device" else None
        # what fio's job files, its outputs and the manifest name the target by (no serial, no user's directory)
        self.recorded_target = privacy.recorded_target(self.config.target_kind, self.config.target_path)
        self.fio_cwd = None if self.device else str(Path(self.config.target_path).parent)

    # -- public ---------------------------------------------------------------------------------------------------

    def execute(self, *, out_dir: Path, signing_key=None) -> Path:
        """Run (or resume) the plan to its end and write the bundle into `out_dir`; returns the bundle path."""
        session = {"started_at": utc_now(), "resumed": bool(self.state["sessions"]), "ended_at": None, "outcome": None}
        self.state["sessions"].append(session)
        if session["resumed"]:
            self._account_for_interruption(session["started_at"])
        self._save()
        with self._signals():
            try:
                self._prepare()
                self._walk()
            except RunInterrupted:
                session.update(ended_at=utc_now(), outcome="interrupted")
                self._save()
                raise
            except BaseException as exc:
                session.update(ended_at=utc_now(), outcome=f"failed: {exc}")
                self._save()
                raise
            finally:
                if self.device is not None and self.state.get("write_cache"):
                    problem = device.restore_write_cache(self.device, self.state["write_cache"])
                    if problem:
                        self._message(f"could not restore the write cache setting: {problem}")
                    self._save()
        self._message("collecting system facts")
        system_dir = self.files / "system"
        system_files = run_manifest.collect_system(self, system_dir)
        session.update(ended_at=utc_now(), outcome="finished")
        self.state["finished_at"] = self.state.get("finished_at") or utc_now()
        self._save()
        manifest, files = self.build_manifest(system_files)
        key = signing_key if signing_key is not None else signing.load_or_create_signing_key()
        out_dir.mkdir(parents=True, exist_ok=True)
        out_path = out_dir / f"{self.run_dir.name}{BUNDLE_SUFFIX}"
        self._message(f"writing the bundle {out_path}")
        return bundle.write_bundle(
            run_dir=self.files, manifest=manifest, files=files, signing_key=key, out_path=out_path
        )

    # -- preparation ----------------------------------------------------------------------------------------------

    def _prepare(self) -> None:
        if "ioengine" not in self.state:
            help_result = commands.run_command([self.fio, "--enghelp"], timeout=30)
            choice = fio_jobs.choose_ioengine(help_result.stdout if help_result.ok else None, platform=sys.platform)
            self.state["ioengine"] = {"engine": choice.engine, "note": choice.note}
            version = commands.run_command([self.fio, "--version"], timeout=30)
            self.state["fio_version"] = version.stdout.strip() if version.ok else None
            self._save()
        if self.state["ioengine"]["note"]:
            self._message(f"fio engine: {self.state['ioengine']['note']}")
        for sub in ("jobs", "fio", "smart", "logs"):
            (self.files / sub).mkdir(parents=True, exist_ok=True)
        for partial in (self.files / "fio").glob("*.partial"):
            partial.unlink()  # the output of a cell that was running when the client died
        if self.device is None:
            self._prepare_file_target()
        else:
            record, problem = device.apply_write_cache(
                self.device, enabled=self.plan.edition.write_cache_enabled, record=self.state.get("write_cache")
            )
            self.state["write_cache"] = record
            if problem:
                self._non_compliant(problem)
            self._save()

    def _prepare_file_target(self) -> None:
        path = Path(self.config.target_path)
        with open(path, "ab") as handle:
            if os.fstat(handle.fileno()).st_size < self.config.size_bytes:
                os.posix_fallocate(handle.fileno(), 0, self.config.size_bytes)
        self.state.setdefault(
            "write_cache", {"applicable": False, "reason": "file target: the NVMe write cache setting does not apply"}
        )

    # -- the walk -------------------------------------------------------------------------------------------------

    def _walk(self) -> None:
        done = self.state.setdefault("blocks_done", [])
        for block_index, block in enumerate(self.plan.blocks):
            self.context.block_index = block_index
            if block.label in done:
                continue
            self._position(block=block.label, stage="purge")
            run_target.purge(self, block)
            run_target.check_write_cache(self, block, "test start")
            self._position(block=block.label, stage="wipc")
            if block.wipc:
                self._wipc(block)
            if block.interleaved:
                rounds.run_interleaved_rounds(self, block)
            for series_index, series in enumerate(() if block.interleaved else block.series):
                self.context.series_index = series_index
                if series.time_series:
                    rounds.run_samples(self, series, block)
                else:
                    rounds.run_rounds(self, series, block)
            pts_runs.run_after_series(self, block)  # HIR/XSR segments, DIRTH captures (none for the other tests)
            run_target.check_write_cache(self, block, "test end")
            done.append(block.label)
            self._position(block=block.label, stage="done")

    def _position(self, **where) -> None:
        """Where the walk stands, saved with every checkpoint, so a resumed run knows where the interruption fell."""
        self.state["position"] = where
        self._save()

    def _account_for_interruption(self, now: str) -> None:
        resume.account_for_interruption(self, now)

    def _test_non_compliant(self, label: str, reason: str) -> None:
        reasons = self.state.setdefault("test_compliance", {}).setdefault(label, [])
        if reason not in reasons:
            reasons.append(reason)

    def _wipc(self, block: Block) -> None:
        run_id = block.wipc_run_id
        if run_id in self.completed:
            return
        engine = self.state["ioengine"]
        job = fio_jobs.render_wipc(
            name=run_id,
            filename=self.recorded_target,
            range_bytes=wipc_range_bytes(self.plan),
            threads=block.wipc_threads,
            iodepth=self.plan.iodepth,
            ioengine=engine["engine"],
            engine_note=engine["note"],
            block_size=block.wipc_block_size_bytes,
        )
        self._update(test=block.test, phase="wipc", round=1, max_rounds=1, cell=run_id, cell_index=1, cells=1)
        cell = Cell("write", block.wipc_block_size_bytes, 0)
        self._run_fio(
            run_id=run_id,
            test=block.test,
            phase="wipc",
            round_number=1,
            cell=cell,
            threads=block.wipc_threads,
            iodepth=self.plan.iodepth,
            runtime_s=None,
            job_text=job,
        )

    def _run_series_cell(
        self, series: Series, round_number: int, cell: Cell, run_id: str, starts: list[int] | None = None
    ) -> None:
        threads, iodepth = cell.threads or series.threads, cell.iodepth or series.iodepth
        self.run_cell(run_id=run_id, test=series.test, phase=series.phase, round_number=round_number, cell=cell,
                      threads=threads, iodepth=iodepth, runtime_s=series.runtime_s, split=series.split_range,
                      starts=starts)  # fmt: skip

    def run_cell(
        self,
        *,
        run_id: str,
        test: str,
        phase: str,
        round_number: int,
        cell: Cell,
        threads: int,
        iodepth: int,
        runtime_s: float,
        split: bool = False,
        starts: list[int] | None = None,
    ) -> None:
        """One fio run of `cell` at `threads` x `iodepth` for `runtime_s` over the active range: a series cell, or a
        test's own timed run (a DIRTH pre-write or capture)."""
        engine = self.state["ioengine"]
        job = fio_jobs.render_cell(
            name=run_id,
            filename=self.recorded_target,
            cell=cell,
            threads=threads,
            iodepth=iodepth,
            runtime_s=runtime_s,
            range_bytes=self.plan.active_range_bytes,
            split=split,
            ioengine=engine["engine"],
            engine_note=engine["note"],
            starts=starts,
        )
        self._run_fio(
            run_id=run_id,
            test=test,
            phase=phase,
            round_number=round_number,
            cell=cell,
            threads=threads,
            iodepth=iodepth,
            runtime_s=runtime_s,
            job_text=job,
        )

    def _run_fio(
        self,
        *,
        run_id: str,
        test: str,
        phase: str,
        round_number: int,
        cell: Cell,
        threads: int,
        iodepth: int,
        runtime_s: float | None,
        job_text: str,
        logs=None,
    ) -> None:
        """`logs` (nvmedb_client.pts.runs.LogPlace) says where fio writes the run's per-interval logs."""
        if self.interrupted:
            raise RunInterrupted(self.interrupted)
        self.reporter.update(self.status, "cell-started")
        job_rel, out_rel = f"jobs/{run_id}.fio", f"fio/{run_id}.json"
        (self.files / job_rel).write_text(job_text, encoding="utf-8")
        started_at = utc_now()
        smart_before = self._smart(f"smart/{run_id}.before.json")
        partial = self.files / f"{out_rel}.partial"
        result = self.fio_process.run(
            [
                self.fio,
                "--output-format=json+",
                f"--output={partial.absolute()}",
                "--eta=never",
                str((self.files / job_rel).absolute()),
            ],
            cwd=logs.cwd if logs else self.fio_cwd,
            env=logs.env if logs else None,
        )
        if self.interrupted:
            partial.unlink(missing_ok=True)
            if logs:
                logs.discard()
            raise RunInterrupted(self.interrupted)
        if result.returncode != 0:
            partial.unlink(missing_ok=True)
            if logs:
                logs.discard()
            detail = next((line for line in result.stderr.splitlines() if line.strip()), "no message on stderr")
            raise RunError(f"fio failed on {run_id} (exit status {result.returncode}): {detail}")
        try:
            doc = parse_fio_output(partial.read_bytes())
            summary = summarize(doc)
        except (FioOutputError, OSError) as exc:
            raise RunError(f"fio's output for {run_id} cannot be read: {exc}") from exc
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, self.files / out_rel)
        smart_after = self._smart(f"smart/{run_id}.after.json")
        entry = {
            "id": run_id,
            "test": test,
            "phase": phase,
            "round": round_number,
            "pattern": cell.pattern,
            "block_size_bytes": cell.block_size_bytes,
            "read_pct": cell.read_pct,
            "threads": threads,
            "iodepth": iodepth,
            "runtime_s": runtime_s if runtime_s is not None else round(fio_wall_runtime_s(doc), 3),
            "job_file": job_rel,
            "output_file": out_rel,
            "smart_before": smart_before,
            "smart_after": smart_after,
            "started_at": started_at,
            "finished_at": utc_now(),
        }
        if logs:
            entry["log_files"] = logs.collect()
        self.summaries[run_id] = summary
        self.completed[run_id] = entry
        self.state["runs"].append(entry)
        self._save()
        self.context.overheads.append(max(0.0, result.duration_s - fio_wall_runtime_s(doc)))
        self.status.runs_done = len(self.completed)

    def _smart(self, rel: str) -> str | None:
        if self.device is None:
            return None
        snapshot = collect.smart_snapshot(self.device, self.files / rel)
        if snapshot is None or not (self.files / rel).exists():
            self.state.setdefault("smart_missing", []).append({"file": rel, "reason": _reason(snapshot)})
            return None
        return rel

    # -- steady state and progress ----------------------------------------------------------------------------

    def _summary(self, run_id: str) -> FioSummary:
        if run_id not in self.summaries:
            path = self.files / self.completed[run_id]["output_file"]
            try:
                self.summaries[run_id] = summarize(parse_fio_output(path.read_bytes()))
            except (FioOutputError, OSError) as exc:
                raise RunError(f"the checkpointed output {path} cannot be read: {exc}") from exc
        return self.summaries[run_id]

    def _update_series(self, series: Series, round_number: int, run_id: str, *, cell_index=1, cells=1) -> None:
        self._update(
            test=series.test,
            phase=series.phase,
            round=round_number,
            max_rounds=series.max_rounds,
            cell=run_id,
            cell_index=cell_index,
            cells=cells,
        )

    def _update(
        self, *, test: str, phase: str, round: int, max_rounds: int, cell: str, cell_index: int, cells: int
    ) -> None:
        s = self.status
        if (s.test, s.phase) != (test, phase):
            s.tracking = []
        s.test, s.phase, s.round, s.max_rounds = test, phase, round, max_rounds
        s.cell, s.cell_index, s.cells_in_round = cell, cell_index, cells
        s.remaining_min_s, s.remaining_max_s = self._remaining()

    def _remaining(self) -> tuple[float, float]:
        return run_eta.remaining(self)

    def _non_compliant(self, reason: str) -> None:
        extra = self.state.setdefault("compliance_extra", [])
        if reason not in extra:
            extra.append(reason)

    def _message(self, text: str) -> None:
        logger.info("%s", text)
        self.status.message = text
        self.reporter.update(self.status, "message")

    # -- signals and checkpoints ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handler(signum, _frame):
            self.interrupted = f"stopped by {signal.Signals(signum).name}"
            self.fio_process.stop()

        previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old)

    def _save(self) -> None:
        self.state["saved_at"] = utc_now()
        write_json_atomic(self.run_dir / STATE_FILE, self.state)

    # -- the manifest -------------------------------------------------------------------------------------------

    def run_facts(self) -> dict:
        """What happened during the run beyond the fio outputs (files/run.json in the bundle)."""
        return run_manifest.run_facts(self)

    def compliance(self) -> dict:
        return run_manifest.compliance(self)

    def build_manifest(self, system_files: list[str]) -> tuple[dict, list[str]]:
        return run_manifest.build_manifest(self, system_files)


def _reason(snapshot) -> str:
    if isinstance(snapshot, dict):
        return str(snapshot.get("reason") or snapshot.get("error") or "no smart-log written")
    return "no smart-log written"


def fio_wall_runtime_s(doc: dict) -> float:
    """How long fio measured, from the per-direction runtimes. Not `job_runtime`: with group_reporting fio 3.x sums
    that over the jobs (4 jobs of 60 s report 240 000 ms), while each direction's runtime is the group's wall time."""
    runtimes = [
        float(entry[direction].get("runtime") or 0)
        for entry in doc.get("jobs") or []
        for direction in ("read", "write", "trim", "mixed")
        if isinstance(entry.get(direction), dict)
    ]
    return max(runtimes, default=0.0) / 1000


def execute_run(
    *,
    run_dir: Path,
    out_dir: Path,
    reporter: Reporter | None = None,
    signing_key=None,
    fio: str = "fio",
    on_runner: Callable[[Runner], None] | None = None,
) -> Path:
    """Run or resume `run_dir` and write its bundle into `out_dir`. Raises RunInterrupted or RunError."""
    runner = Runner(run_dir=run_dir, reporter=reporter, fio=fio)
    if on_runner:
        on_runner(runner)
    return runner.execute(out_dir=out_dir, signing_key=signing_key)
