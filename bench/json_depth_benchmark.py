"""What the strict JSON reader's depth bound costs (nvmedb_client.jsonload).

On the real fio outputs in ../shared/samples, prints the time to parse them with orjson and with the standard
library, the time of the byte-level bracket scan the reader runs before parsing, and the time of the alternative it
replaces (a walk over every parsed node); then the scan's time on two hostile shapes at the fio size limit.

It has no goal (figures only): it prints the load average at its start and end and exits 0 unless it fails.
BENCH_SMOKE=1: one repeat, hostile shapes of 1 MiB.

Usage: python bench/json_depth_benchmark.py [--repeat 5] [--hostile-mib 64]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._report import SMOKE, Report  # noqa: E402
from nvmedb_client import jsonload  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples"


def timed(function, items, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for item in items:
            function(item)
    return (time.perf_counter() - start) / repeat * 1000


def walk_depth(node) -> int:
    deepest, stack = 0, [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        children = current.values() if isinstance(current, dict) else current if isinstance(current, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hostile-mib", type=int, default=64, help="size of the hostile shapes (the fio size limit)")
    args = parser.parse_args()
    if SMOKE:
        args.repeat, args.hostile_mib = 1, 1
    repeat = args.repeat
    report = Report("JSON depth benchmark")
    paths = sorted((SAMPLES / "ssspt-hp-iops-1").glob("*.json")) + sorted((SAMPLES / "fio").glob("*.json"))
    documents = []
    for path in paths:
        data = path.read_bytes()
        try:
            json.loads(data)
        except ValueError:
            continue  # outputs with text around the document
        documents.append(data)
    parsed = [json.loads(data) for data in documents]
    print(f"{len(documents)} fio outputs, {sum(map(len, documents)) / 1e6:.1f} MB, {repeat} repeats")
    if jsonload.orjson is not None:
        print(f"  orjson parse        {timed(jsonload.orjson.loads, documents, repeat):8.1f} ms")
    print(f"  json parse          {timed(json.loads, documents, repeat):8.1f} ms")
    print(f"  bracket scan        {timed(lambda d: jsonload.within_depth(d, 64), documents, repeat):8.1f} ms")
    print(f"  walk of the objects {timed(walk_depth, parsed, repeat):8.1f} ms")
    size = args.hostile_mib * 1024 * 1024 // 4
    for name, data in (("flat [][][]...", b"[]" * (size // 2)), ("deep [[[...]]]", b"[" * size + b"]" * size)):
        start = time.perf_counter()
        jsonload.within_depth(data, 32)
        print(f"  scan of {len(data) / 1e6:.1f} MB {name}: {(time.perf_counter() - start) * 1000:.0f} ms")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
