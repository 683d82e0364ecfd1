"""SSSPT's three tests (its playbook roles iops, throughput and lat) as nvmedb stores them, and SSSPT's own check.

SSSPT runs every (block size, R/W mix) cell of a test as a series of its own until its check calls that series steady
(playbooks/roles/*/tasks/do_until_steady_state.yml). What it tracks differs by role:

- iops: (read + write total_ios) ÷ the runtime in seconds (roles/iops/tasks/save_value.yml);
- throughput: fio's `bw` of the measured direction (reads at 100 % reads, writes at 0 %) ÷ 1024
  (roles/throughput/tasks/do_until_steady_state.yml);
- lat: the mean of the read and write `lat_ns.mean`, weighted by their total_ios (roles/lat/tasks/save_value.yml).

Its check (verify_steady_state.py, once playbooks/roles/throughput/files/verify_ss.py) is not the PTS rule: every
value and both ends of the fitted line must lie within ±10 % of the window's average. nvmedb re-derives each series
with the PTS rule on the PTS metric and keeps SSSPT's verdict, recomputed with SSSPT's rule, as the tool's claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nvmedb_client.steady_state import WINDOW_ROUNDS

SSSPT_EXCURSION = 0.10
RULE = "every value and the fitted line's ends within ±10% of the 5-round average (verify_ss.py)"
RANDOM_PATTERNS = {"randrw", "randread", "randwrite", "trimwrite", "randtrim"}
# The directory names SSSPT's layouts use for a role's results (output_<role>, then platforms/<host>/<role>/<n>).
DIRECTORY_TESTS = {"iops": "iops", "throughput": "tp", "tp": "tp", "lat": "lat", "latency": "lat"}


@dataclass(frozen=True)
class SssptTest:
    test: str  # nvmedb's name: iops, tp or lat
    role: str  # SSSPT's playbook role
    pattern: str  # the fio rw SSSPT's role runs (roles/<role>/vars/main.yml, wdpc_io_pattern)
    tracked: str  # what SSSPT tracks, in words

    def phase(self, read_pct: int) -> str:
        if self.test == "tp":
            return "tp-read" if read_pct == 100 else "tp-write"
        return "wdpc"

    def series(self, block_size: int, read_pct: int) -> str:
        return f"bs{block_size}" if self.test == "tp" else f"bs{block_size}.rw{read_pct:03d}"

    def metric(self, read_pct: int) -> str:
        if self.test == "tp":
            return "read_bw_bytes_per_s" if read_pct == 100 else "write_bw_bytes_per_s"
        return "total_iops" if self.test == "iops" else "lat_mean_ns"

    def variable(self, block_size: int, read_pct: int) -> str:
        return f"{self.test}.{self.metric(read_pct)}.rw{read_pct:03d}.bs{block_size}"

    def accepts_mix(self, read_pct: int) -> bool:
        return read_pct in (0, 100) if self.test == "tp" else 0 <= read_pct <= 100

    def tool_value(self, doc: Mapping, read_pct: int) -> float:
        job = doc["jobs"][0]
        directions = [job.get(d, {}) for d in ("read", "write")]
        if self.test == "tp":
            return float(job.get("read" if read_pct == 100 else "write", {}).get("bw", 0)) / 1024
        if self.test == "lat":
            ios = [float(d.get("total_ios", 0)) for d in directions]
            means = [float(d.get("lat_ns", {}).get("mean", 0)) for d in directions]
            return sum(m * n for m, n in zip(means, ios, strict=True)) / sum(ios) if sum(ios) else 0.0
        runtimes = [d.get("runtime") for d in directions if d.get("runtime")]
        return sum(float(d.get("total_ios", 0)) for d in directions) / (runtimes[0] / 1000) if runtimes else 0.0


TESTS = {
    "iops": SssptTest("iops", "iops", "randrw", "(read + write total_ios) ÷ runtime (save_value.yml)"),
    "tp": SssptTest("tp", "throughput", "readwrite", "fio bw of the measured direction ÷ 1024 (MB/s)"),
    "lat": SssptTest("lat", "lat", "readwrite", "read and write lat_ns.mean weighted by total_ios"),
}


def detect_test(options: Mapping[str, str]) -> str:
    """Which of SSSPT's roles wrote a wdpc job: random I/O is its IOPS test; sequential I/O at QD 1 its latency
    test (the PTS latency test is the TC 1 / QD 1 one), at a deeper queue its throughput test."""
    rw = options.get("rw") or options.get("readwrite") or ""
    if rw in RANDOM_PATTERNS:
        return "iops"
    return "lat" if options.get("iodepth", "1") == "1" else "tp"


def ssspt_rule(values: list[float]) -> bool:
    """SSSPT's own steady-state check on the last 5 values (verify_ss.py): all within ±10 % of their average, and
    the fitted line's two ends too."""
    if len(values) < WINDOW_ROUNDS:
        return False
    window = values[-WINDOW_ROUNDS:]
    average = sum(window) / WINDOW_ROUNDS
    low, high = average * (1 - SSSPT_EXCURSION), average * (1 + SSSPT_EXCURSION)
    if max(window) > high or min(window) < low:
        return False
    xs = list(range(len(values) - WINDOW_ROUNDS + 1, len(values) + 1))
    x_mean = sum(xs) / WINDOW_ROUNDS
    slope = sum((x - x_mean) * (y - average) for x, y in zip(xs, window, strict=True)) / sum(
        (x - x_mean) ** 2 for x in xs
    )
    ends = [average + slope * (xs[0] - x_mean), average + slope * (xs[-1] - x_mean)]
    return max(ends) <= high and min(ends) >= low
