"""The one place where the client starts another program (fio, nvme, lspci, lshw).

Every subprocess goes through `run_command`, which logs the command line and captures its output. Tests replace this
function (monkeypatch `nvmedb_client.system.commands.run_command`) and nothing else.

A program that cannot be started is not an exception by default: the result says so (`returncode is None`,
`tool_absent`), because collecting facts must go on and record the tool as missing. `check=True` turns every failure
into an exception for callers that cannot go on without the result.
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)

# nvme-cli prints ANSI bold in its usage text; lshw translates its descriptions. A fixed locale keeps outputs parseable.
_FIXED_LOCALE = {"LC_ALL": "C", "LANG": "C"}


@dataclass(frozen=True)
class CommandResult:
    args: tuple[str, ...]
    returncode: int | None  # None: the program never ran (see `error`)
    stdout: str
    stderr: str
    duration_s: float
    error: str | None = None  # why the program never ran or was stopped: not installed, not executable, timed out
    tool_absent: bool = False  # the program is not installed (not found on PATH)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.error is None

    @property
    def program(self) -> str:
        return self.args[0] if self.args else ""

    def first_stderr_line(self) -> str:
        for line in self.stderr.splitlines():
            if line.strip():
                return line.strip()
        return ""

    def failure_reason(self) -> str:
        """A sentence saying why the command gave no usable result ("" when it succeeded)."""
        if self.ok:
            return ""
        if self.error:
            return self.error
        detail = self.first_stderr_line() or "no message on stderr"
        return f"`{shlex.join(self.args)}` failed with exit status {self.returncode}: {detail}"


class CommandError(Exception):
    """A command run with check=True gave no usable result."""

    def __init__(self, result: CommandResult):
        super().__init__(result.failure_reason())
        self.result = result


class ToolAbsentError(CommandError):
    """The program is not installed."""


def run_command(args: Sequence[str], *, timeout: float | None = None, check: bool = False) -> CommandResult:
    """Run `args` (no shell), wait at most `timeout` seconds, and return its captured output as text."""
    argv = tuple(str(arg) for arg in args)
    if not argv:
        raise ValueError("run_command needs at least the program name")
    logger.info("running: %s", shlex.join(argv))
    env = {**os.environ, **_FIXED_LOCALE}
    started = time.monotonic()
    try:
        completed = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        result = CommandResult(
            argv,
            None,
            "",
            "",
            time.monotonic() - started,
            error=f"{argv[0]} is not installed (not found on PATH)",
            tool_absent=True,
        )
    except PermissionError as exc:
        result = CommandResult(argv, None, "", "", time.monotonic() - started, error=f"{argv[0]} cannot be run: {exc}")
    except subprocess.TimeoutExpired as exc:
        result = CommandResult(
            argv,
            None,
            _text(exc.stdout),
            _text(exc.stderr),
            time.monotonic() - started,
            error=f"`{shlex.join(argv)}` was stopped after {timeout:g} s without finishing",
        )
    else:
        result = CommandResult(
            argv, completed.returncode, _text(completed.stdout), _text(completed.stderr), time.monotonic() - started
        )
    logger.debug("finished in %.3f s: %s -> %s", result.duration_s, argv[0], result.returncode)
    if check and not result.ok:
        raise (ToolAbsentError if result.tool_absent else CommandError)(result)
    return result


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")
