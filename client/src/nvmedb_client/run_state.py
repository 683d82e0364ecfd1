"""The run directory and its checkpoint (state.json), written so that a crash never leaves half a file.

Run directory:
    state.json        the run's settings and every completed fio run (manifest runs[] entries), rewritten
                      atomically (temp file, fsync, rename, directory fsync) after every fio run
    files/            what goes into the bundle: jobs/, fio/, smart/, system/, run.json
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from nvmedb_client import __version__
from nvmedb_client.plan import Plan, build_plan, quick_profile
from nvmedb_client.pts.surface import SurfaceOptions

STATE_FILE = "state.json"
STATE_VERSION = 1
FILES = "files"


class RunError(Exception):
    """The run cannot go on; the run directory is left resumable."""


class RunInterrupted(RunError):
    """SIGINT or SIGTERM: fio was stopped and the run directory is resumable."""


@dataclass
class RunConfig:
    """Everything needed to rebuild the plan on resume (stored in state.json)."""

    target_kind: str  # device | file
    target_path: str
    size_bytes: int
    tests: list[str]
    edition: str
    profile: str
    threads: int | None = None
    iodepth: int | None = None
    max_rounds: int | None = None
    cell_runtime_s: float | None = None  # quick profile only; None = the profile's default
    lba_size_bytes: int | None = None  # the namespace's LBA data size (device targets): smaller cells are skipped
    # Other namespaces the operator confirmed a controller- or subsystem-wide purge may erase (names like nvme0n2).
    erase_confirmed: list[str] = field(default_factory=list)
    system_root: str | None = None  # where /proc, /sys and /dev are read (tests use a fake tree)
    surface: dict | None = None  # the surface grid's options (SurfaceOptions.to_dict); None = the profile's default

    def build_plan(self) -> Plan:
        profile = quick_profile(self.cell_runtime_s) if self.profile == "quick" else self.profile
        return build_plan(
            tests=self.tests,
            edition=self.edition,
            profile=profile,
            capacity_bytes=self.size_bytes,
            target_kind=self.target_kind,
            threads=self.threads,
            iodepth=self.iodepth,
            max_rounds=self.max_rounds,
            lba_size_bytes=self.lba_size_bytes,
            surface=SurfaceOptions.from_dict(self.surface),
        )


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_json_atomic(path: Path, data: dict) -> None:
    """temp file + fsync + rename + directory fsync: after a crash the file is the old or the new version, whole."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_run_dir(*, config: RunConfig, out_dir: Path) -> Path:
    """A new run directory under `out_dir` with its initial checkpoint (nothing is run yet)."""
    config.build_plan()  # refuse impossible settings before creating anything
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_dir = out_dir / f"nvmedb-run-{stamp}"
    suffix = 1
    while run_dir.exists():
        suffix += 1
        run_dir = out_dir / f"nvmedb-run-{stamp}-{suffix}"
    (run_dir / FILES).mkdir(parents=True)
    state = {
        "state_version": STATE_VERSION,
        "client_version": __version__,
        "config": asdict(config),
        "created_at": utc_now(),
        "runs": [],
        "purges": [],
        "sessions": [],
        "finished_at": None,
    }
    write_json_atomic(run_dir / STATE_FILE, state)
    return run_dir


def load_state(run_dir: Path) -> dict:
    path = run_dir / STATE_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"{run_dir} is not a run directory: it has no {STATE_FILE}.") from None
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot read {path}: {exc}") from None
    if state.get("state_version") != STATE_VERSION:
        raise RunError(f"{path} has state version {state.get('state_version')!r}; this client reads {STATE_VERSION}.")
    return state


def config_from_state(state: dict) -> RunConfig:
    return RunConfig(**state["config"])


def save_config(run_dir: Path, config: RunConfig) -> None:
    """A resumed run's confirmation replaces the one stored (it was given again, for the namespaces seen now)."""
    state = load_state(run_dir)
    state["config"] = asdict(config)
    write_json_atomic(run_dir / STATE_FILE, state)
