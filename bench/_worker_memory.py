"""Peak resident memory of a production web worker that has served pages and then one export (issue 24's memory
goal: every format <= 150 MB, flat from 100 k to 1 M rows), for bench/export_benchmark.py.

For each format and size, gunicorn from gunicorn.conf.py with production settings and the Redis cache
(browse_benchmark.Server) runs one worker of GUNICORN_THREADS threads. The worker serves the pages a visitor reads
(home, the drive list, the busiest drive's page, a comparison, the methodology, the datasets page), then the export
over HTTP, read to the end, timed; its VmRSS after the pages and its VmHWM (peak) after the export are read from /proc. The
worker is not recycled by size here (GUNICORN_MAX_RSS_MB=0) so that it can be read after its peak; in production
gunicorn.conf.py recycles one whose resident memory has passed the limit after a request.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import os
import threading
import time
from pathlib import Path

from browse_benchmark import Server

READ_BYTES = 64 * 1024
GOAL_PEAK_RSS_MB = 150
GOAL_COPY_RATIO = 1.5
GOAL_FLAT_MB = 10


def pages(drive_slugs: list[str]) -> list[str]:
    """What a long-lived worker has served before an export: the busiest drive first in `drive_slugs`."""
    return [
        "/",
        "/drives/",
        f"/drives/{drive_slugs[0]}/",
        "/compare/?drives=" + ",".join(drive_slugs[:4]),
        "/methodology/",
        "/datasets/",
    ]


def status_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of process `pid` in MB (2**20 bytes)."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


def children(pid: int) -> list[int]:
    """The processes `pid` started (any of its threads) that are still running."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # the thread ended meanwhile
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


class ChildPeaks:
    """Watches, every 0.1 s until stopped, the processes a worker starts (the Parquet export's,
    datasets.parquet_pipe) and keeps the highest VmHWM seen: the last reading before such a process ends."""

    def __init__(self, pid: int):
        self.pid, self.peak_mb, self.seen = pid, 0.0, set()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self.stopped.wait(0.1):
            for child in children(self.pid):
                try:
                    self.peak_mb = max(self.peak_mb, status_mb(child)["VmHWM"])
                    self.seen.add(child)
                except (OSError, KeyError):  # it ended meanwhile (a zombie has no VmHWM)
                    pass

    def __enter__(self) -> ChildPeaks:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join()


def only_worker(arbiter_pid: int) -> int:
    deadline = time.monotonic() + 30
    while True:
        children = Path(f"/proc/{arbiter_pid}/task/{arbiter_pid}/children").read_text().split()
        if len(children) == 1:
            return int(children[0])
        if time.monotonic() > deadline:
            raise RuntimeError(f"gunicorn runs {len(children)} workers, expected 1")
        time.sleep(0.2)


def get(port: int, path: str) -> int:
    """GET `path` and read the body to the end; the number of bytes (raises unless HTTP 200)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        total = 0
        while data := response.read(READ_BYTES):
            total += len(data)
        if response.status != 200:
            raise RuntimeError(f"{path} answered {response.status}")
        return total
    finally:
        conn.close()


def export_peak(database_url: str, redis_url: str, fmt: str, size: int, drive_slugs: list[str]) -> dict:
    """One fresh worker: the pages, then the export of `size` rows in `fmt`; its memory figures (MB) and bytes."""
    server = Server(database_url, redis_url)
    server.env.update({"GUNICORN_WORKERS": "1", "GUNICORN_MAX_RSS_MB": "0"})
    with server:
        pid = only_worker(server.process.pid)
        for page in pages(drive_slugs):
            get(server.port, page)
        after_pages = status_mb(pid)
        with ChildPeaks(pid) as child:
            started = time.perf_counter()
            written = get(server.port, f"/datasets/measurements.{fmt}?_size={size}")
            seconds = time.perf_counter() - started
        after_export = status_mb(pid)
    return {
        "rss_after_pages_mb": after_pages["VmRSS"],
        "peak_mb": after_export["VmHWM"],
        "rss_after_mb": after_export["VmRSS"],
        "child_processes": len(child.seen),
        "child_peak_mb": child.peak_mb,
        "bytes": written,
        "seconds": seconds,
    }


def redis_url() -> str:
    return os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


def busiest_drive_slugs(count: int = 4) -> list[str]:
    """The drives with the most public runs, busiest first (Django set up on the benchmark database)."""
    from django.db.models import Count

    from analysis.selectors import public_test_runs

    busiest = public_test_runs().values("drive_model__slug").annotate(n=Count("id")).order_by("-n", "drive_model__slug")
    return [row["drive_model__slug"] for row in busiest[:count]]


def memory_goals(
    database_url: str, formats: list[str], sizes: list[int], public_rows: int, plain_copy_seconds
) -> list[tuple]:
    """Every format at every size in a worker that served pages first; the goals summary (figure, verdict, goal).
    The CSV's time over HTTP is judged too, against `plain_copy_seconds(size)`: COPY of the plain public rows."""
    if not os.environ.get("REDIS_URL"):
        return [("worker memory not measured: gunicorn with production settings needs REDIS_URL", None, "")]
    logging.getLogger("httpx").setLevel(logging.WARNING)  # browse_benchmark.Server's readiness requests
    slugs = busiest_drive_slugs()
    peaks: dict[str, dict[int, float]] = {fmt: {} for fmt in formats}
    summary = []
    print(f"\nproduction worker (gunicorn.conf.py, 1 worker), after pages {', '.join(pages(slugs))}, then one export:")
    print(
        f"{'format':<8} {'rows':>9} {'after pages':>11} {'peak':>8} {'after':>8} {'child peak':>10} {'MB out':>7} "
        f"{'seconds':>8}"
    )
    for size in sizes:
        rows = min(size, public_rows)
        for fmt in formats:
            figures = export_peak(database_url, redis_url(), fmt, size, slugs)
            peaks[fmt][size] = figures["peak_mb"]
            child = f"{figures['child_peak_mb']:.0f} MB" if figures["child_processes"] else "-"
            print(
                f"{fmt:<8} {rows:>9,} {figures['rss_after_pages_mb']:>8.0f} MB {figures['peak_mb']:>5.0f} MB "
                f"{figures['rss_after_mb']:>5.0f} MB {child:>10} {figures['bytes'] / 1e6:>7.1f} {figures['seconds']:>8.2f}"
            )
            if fmt == "csv":
                copy_s = plain_copy_seconds(size)
                ratio = figures["seconds"] / copy_s
                summary.append(
                    (f"csv {rows:,} rows over HTTP from this worker: {figures['seconds']:.2f} s = {ratio:.2f} x COPY of "
                     f"the plain public rows ({copy_s:.2f} s)", ratio <= GOAL_COPY_RATIO, f"<= {GOAL_COPY_RATIO}")
                )  # fmt: skip
            text = f"{fmt} {rows:,} rows: worker peak RSS {figures['peak_mb']:.0f} MB after pages"
            summary.append((text, figures["peak_mb"] <= GOAL_PEAK_RSS_MB, f"<= {GOAL_PEAK_RSS_MB} MB"))
            if figures["child_processes"]:
                summary.append(
                    (f"{fmt} {rows:,} rows: its export process peaked at {child} (read every 0.1 s)", None, "")
                )
    if len(sizes) > 1:
        low, high = min(sizes), max(sizes)
        for fmt in formats:
            growth = peaks[fmt][high] - peaks[fmt][low]
            summary.append(
                (f"{fmt}: worker peak RSS grows {growth:+.0f} MB from {low:,} to {high:,} rows", growth <= GOAL_FLAT_MB,
                 f"flat, <= {GOAL_FLAT_MB} MB")
            )  # fmt: skip
    return summary
