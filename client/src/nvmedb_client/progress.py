"""What a long run shows while it works: a live rich display on a terminal, plain lines otherwise.

The runner fills a `Status` and calls `Reporter.update(status, event)`; reporters only display it.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import IO

from nvmedb_client.plan_types import format_seconds
from nvmedb_client.steady_state import WINDOW_ROUNDS


@dataclass
class TrackingLine:
    variable: str
    rounds: int
    data_excursion: float | None = None  # max - min over the window, as a share of the window's mean
    data_limit: float | None = None
    slope_excursion: float | None = None  # |slope| x (window - 1), as a share of the window's mean
    slope_limit: float | None = None
    steady: bool = False


@dataclass
class Status:
    started_monotonic: float = field(default_factory=time.monotonic)
    test: str = ""
    phase: str = ""
    round: int = 0
    max_rounds: int = 0
    cell: str = ""
    cell_index: int = 0
    cells_in_round: int = 0
    runs_done: int = 0
    remaining_min_s: float | None = None
    remaining_max_s: float | None = None
    tracking: list[TrackingLine] = field(default_factory=list)
    message: str = ""

    @property
    def can_judge(self) -> bool:
        """Whether this series can ever hold a steady-state window (the quick profile stops after 2 rounds)."""
        return self.max_rounds >= WINDOW_ROUNDS

    def not_judged_text(self, rounds: int) -> str:
        if not self.can_judge:
            return (
                f"steady state cannot be judged in this profile (at most {self.max_rounds} rounds; "
                f"the PTS window is {WINDOW_ROUNDS})"
            )
        return f"{rounds} of the {WINDOW_ROUNDS} rounds a window needs"

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started_monotonic

    def eta_text(self) -> str:
        if self.remaining_min_s is None or self.remaining_max_s is None:
            return "unknown"
        low, high = format_seconds(self.remaining_min_s), format_seconds(self.remaining_max_s)
        return low if low == high else f"{low} to {high}"


class Reporter:
    """Shows nothing (used with --json, where stdout belongs to the result)."""

    def update(self, status: Status, event: str) -> None:
        pass

    def close(self) -> None:
        pass


class PlainReporter(Reporter):
    """One line per event, for logs and pipes."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def update(self, status: Status, event: str) -> None:
        if event == "cell-started":
            line = (
                f"[{format_seconds(status.elapsed_s)}] {status.test} {status.phase} round {status.round}/"
                f"{status.max_rounds} cell {status.cell_index}/{status.cells_in_round} {status.cell} "
                f"(remaining {status.eta_text()})"
            )
        elif event == "round-finished":
            parts = [_tracking_text(line, status) for line in status.tracking]
            line = f"[{format_seconds(status.elapsed_s)}] {status.test} {status.phase} round {status.round} done"
            if parts:
                line += ": " + "; ".join(parts)
        elif event == "message":
            line = f"[{format_seconds(status.elapsed_s)}] {status.message}"
        else:
            return
        print(line, file=self.stream, flush=True)


class LiveReporter(Reporter):
    """A rich live panel, redrawn as the run moves on (elapsed time ticks by itself)."""

    def __init__(self, stream: IO[str]):
        from rich.console import Console
        from rich.live import Live

        self.status = Status()
        self.messages: list[str] = []
        self.console = Console(file=stream)
        self.live = Live(_Renderable(self), console=self.console, refresh_per_second=2, transient=False)
        self.live.start()

    def update(self, status: Status, event: str) -> None:
        self.status = status
        if event == "message":
            self.messages = (self.messages + [status.message])[-5:]
        self.live.refresh()

    def close(self) -> None:
        self.live.stop()

    def render(self):
        from rich.table import Table

        s = self.status
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        table.add_row("test", f"{s.test} {s.phase}")
        table.add_row("round", f"{s.round} of at most {s.max_rounds}")
        table.add_row("cell", f"{s.cell_index}/{s.cells_in_round} {s.cell}")
        table.add_row("elapsed", format_seconds(s.elapsed_s))
        table.add_row("remaining", s.eta_text())
        table.add_row("fio runs done", str(s.runs_done))
        if s.tracking:
            tracking = Table("tracking variable", "rounds", "data excursion", "slope excursion", "steady")
            for line in s.tracking:
                if line.data_excursion is None:
                    tracking.add_row(line.variable, str(line.rounds), s.not_judged_text(line.rounds), "", "not yet")
                    continue
                tracking.add_row(
                    line.variable,
                    str(line.rounds),
                    _share(line.data_excursion, line.data_limit),
                    _share(line.slope_excursion, line.slope_limit),
                    "yes" if line.steady else "no",
                )
            table.add_row("", tracking)
        for message in self.messages:
            table.add_row("", message)
        return table


class _Renderable:
    def __init__(self, reporter: LiveReporter):
        self.reporter = reporter

    def __rich__(self):
        return self.reporter.render()


def _share(value: float | None, limit: float | None) -> str:
    if value is None or limit is None:
        return f"needs {WINDOW_ROUNDS} rounds"
    return f"{value:.1%} (limit {limit:.0%})"


def _tracking_text(line: TrackingLine, status: Status) -> str:
    if line.data_excursion is None:
        return f"{line.variable} {line.rounds} round(s): {status.not_judged_text(line.rounds)}"
    verdict = "steady" if line.steady else "not steady"
    return (
        f"{line.variable} data {_share(line.data_excursion, line.data_limit)}, "
        f"slope {_share(line.slope_excursion, line.slope_limit)}: {verdict}"
    )


def make_reporter(*, json_mode: bool, stream: IO[str] | None = None) -> Reporter:
    """Live display on a terminal, plain lines on a pipe, nothing with --json (progress then goes to stderr lines)."""
    stream = stream or sys.stdout
    if json_mode:
        return PlainReporter(sys.stderr)
    if stream.isatty():
        return LiveReporter(stream)
    return PlainReporter(stream)
