"""What every benchmark prints and how it exits: its goals beside its figures with a verdict, the load average at its
start and end, and an exit status that fails when a goal is missed.

    from bench._report import Report
    report = Report("ingest benchmark")           # prints the load average at the start
    report.check("full path / baseline 2.1", 2.1 <= 3, goal="<= 3")
    report.note("verify alone 120 ms")            # a figure without a goal
    sys.exit(report.finish())                     # load average again; 1 if a goal was missed, else 0

The smoke mode (BENCH_SMOKE=1, `make bench-smoke`) runs each script at a tiny size: its verdicts are printed but
cannot judge the goals, so a missed goal does not fail it; a crash (an exception, a non-zero exit) still does.
"""

from __future__ import annotations

import os

SMOKE = os.environ.get("BENCH_SMOKE", "").strip().lower() in ("1", "true", "yes")


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" (1, 5, 15 min) on {os.cpu_count()} CPUs"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


class Report:
    def __init__(self, name: str, *, width: int = 100):
        self.name, self.width = name, width
        self.failed: list[str] = []
        self.checked = 0
        print(f"{name}{' (smoke: tiny sizes, goals not judged)' if SMOKE else ''}", flush=True)
        print(f"load average at start: {load_average()}", flush=True)

    def check(self, text: str, ok: bool, *, goal: str) -> bool:
        """Print a figure, its goal and the verdict; remember a miss."""
        self.checked += 1
        if not ok:
            self.failed.append(text)
        print(f"  {f'{text} (goal {goal})':{self.width}} {verdict(ok)}", flush=True)
        return ok

    def note(self, text: str) -> None:
        print(f"  {text}", flush=True)

    def finish(self) -> int:
        """Print the load average and the summary; the exit status: 1 when a goal was missed (0 in smoke mode)."""
        print(f"load average at end: {load_average()}")
        if not self.checked:
            print(f"{self.name}: no goals (figures only)")
        elif not self.failed:
            print(f"{self.name}: every goal met ({self.checked})")
        else:
            print(f"{self.name}: {len(self.failed)} of {self.checked} goal(s) not met")
        if self.failed and SMOKE:
            print(f"{self.name}: smoke run, missed goals do not fail it")
            return 0
        return 1 if self.failed else 0
