"""How long serving a large raw file takes: the identifier pass, the scrub pass and the allow-list re-emission
(analysis.raw_allow) of a ~58 MB fio json+ output.

The file is a real fio-3.33 json+ sample from ../shared/samples repeated to the size of the largest raw file the
security review uploaded (58 MB, which then held a web worker 12.5 s). Prints seconds and MB/s for both passes, and
the time to pretty-print a 2 MiB one-line JSON document (the largest file a raw-file page renders by default).

It has no goal (figures only): it prints the load average at its start and end and exits 0 unless it fails.
BENCH_SMOKE=1: a 2 MB file.

Usage: python bench/raw_file_scrub.py [--mb 58]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client" / "src"))

# analysis.raw_allow reads its measured keys from submissions.content, which imports the models: Django is set up
# (no database is opened)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nvmedb.settings.test")
django.setup()

from analysis import privacy, raw_allow  # noqa: E402 - after Django's set-up
from bench._report import SMOKE, Report  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "fio" / "local__fio-3.33__randrw_jsonplus.json"
PIECE = 256 * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=58.0)
    args = parser.parse_args()
    if not SAMPLE.is_file():
        print(f"skipped: {SAMPLE.name} is not in ../shared/samples")
        return 0
    if SMOKE:
        args.mb = 2.0
    report = Report("raw file scrub benchmark")
    base = SAMPLE.read_text()
    text = base * int(args.mb * 1e6 // len(base) + 1)
    pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
    size_mb = len(text) / 1e6

    started = time.monotonic()
    found = privacy.identifiers_in_chunks(pieces)
    collect_s = time.monotonic() - started
    scrubber = privacy.Scrubber(found | {"S43ANA0M405593", "wuffinotebook", "mariadelgado"})
    started = time.monotonic()
    out = sum(len(chunk) for chunk in scrubber.chunks(pieces))
    scrub_s = time.monotonic() - started
    document = json.loads(base)
    one_document = json.dumps({**document, "jobs": document["jobs"] * int(args.mb * 1e6 // len(base) + 1)}).encode()
    started = time.monotonic()
    emitted = sum(len(chunk) for chunk in raw_allow.reemit("fio-output", io.BytesIO(one_document), scrubber))
    reemit_s = time.monotonic() - started
    one_line = json.dumps([document] * int(2 * 1024**2 // len(json.dumps(document)) + 1))
    started = time.monotonic()
    privacy.pretty_json(one_line)
    pretty_s = time.monotonic() - started

    print(f"raw file: {size_mb:.1f} MB of fio json+ ({out / 1e6:.1f} MB out)")
    print(f"  identifier pass: {collect_s:.2f} s ({size_mb / collect_s:.0f} MB/s)")
    print(f"  scrub pass:      {scrub_s:.2f} s ({size_mb / scrub_s:.0f} MB/s)")
    print(
        f"  re-emitting one {len(one_document) / 1e6:.1f} MB document by allow-list: {reemit_s:.2f} s "
        f"({emitted / 1e6:.1f} MB out)"
    )
    print(f"  pretty-printing a {len(one_line) / 1e6:.1f} MB one-line JSON: {pretty_s:.2f} s")
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
