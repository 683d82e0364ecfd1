"""fio as a subprocess: logged like system.commands.run_command, but stoppable and tied to the client's life.

fio runs in its own process group, so Ctrl-C reaches the client only and the client stops fio (SIGTERM to the
group); and it gets SIGKILL when the client dies (PR_SET_PDEATHSIG), so a `kill -9` of the client never leaves a fio
writing to the target. Job files use `thread`, so every fio job dies with that one process.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FioResult:
    args: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the client dies, so `kill -9` of the client stops fio too."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class FioProcess:
    """Runs fio the way system.commands.run_command runs other tools (logged, C locale, captured output), but in its
    own process group so the client can stop it on Ctrl-C, and tied to the client's life."""

    def __init__(self) -> None:
        self._current: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def run(self, args: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None) -> FioResult:
        argv = tuple(str(a) for a in args)
        logger.info("running: %s", shlex.join(argv))
        started = time.monotonic()
        env = {**os.environ, **(env or {}), "LC_ALL": "C", "LANG": "C"}
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - single-threaded at this point; needed for PDEATHSIG
            )
        except FileNotFoundError:
            return FioResult(argv, None, "", f"{argv[0]} is not installed (not found on PATH)", 0.0)
        with self._lock:
            self._current = proc
        try:
            stdout, stderr = proc.communicate()
        finally:
            with self._lock:
                self._current = None
        duration = time.monotonic() - started
        logger.debug("finished in %.3f s: %s -> %s", duration, argv[0], proc.returncode)
        return FioResult(
            argv, proc.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace"), duration
        )

    def stop(self) -> None:
        """Terminate the running fio's process group (fio stops its jobs and exits)."""
        with self._lock:
            proc = self._current
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
