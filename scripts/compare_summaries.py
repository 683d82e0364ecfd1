#!/usr/bin/env python3
"""Compare the drive page summary the rebuild writes (browse.summaries.summary_fields) with the one built part by
part as the pages compute it (reference_summary_fields), field for field, for several drives; or dump the stored
rows, to compare them before and after a change of the rebuild.

    DATABASE_URL=postgres://... PYTHONPATH=client/src python scripts/compare_summaries.py [--drives 5] [slug ...]
    ... scripts/compare_summaries.py --dump before.json   # the stored DrivePageSummary rows as JSON, by slug
    ... scripts/compare_summaries.py --rebuild --dump after.json   # rebuild each row first (summary_fields)

Exits 1 when a field differs (or, with --against FILE, when a dumped row differs from FILE's).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nvmedb.settings.local")

import django  # noqa: E402

django.setup()

from django.db.models import Count  # noqa: E402

from analysis.models import DriveModel, DrivePageSummary  # noqa: E402
from browse import summaries  # noqa: E402

ROW_FIELDS = tuple(f.attname for f in DrivePageSummary._meta.concrete_fields if f.attname not in ("updated",))


def as_json(value):
    """What a JSON column stores of a value (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value, default=str))


def differing(left: dict | None, right: dict | None) -> list[str]:
    if left is None or right is None:
        return [] if left is right else ["<row>"]
    keys = sorted(set(left) | set(right))
    return [key for key in keys if as_json(left.get(key)) != as_json(right.get(key))]


def timed(build, drive: DriveModel) -> tuple[float, dict | None]:
    """The fastest of three builds (the first pays for imports and cold caches) and what it built."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        built = build(drive)
        times.append(time.perf_counter() - started)
    return min(times), built


def drives_to_check(slugs: list[str], n: int) -> list[DriveModel]:
    if slugs:
        return list(DriveModel.objects.filter(slug__in=slugs).order_by("slug"))
    return list(DriveModel.objects.annotate(n_runs=Count("test_runs")).order_by("-n_runs", "slug")[:n])


def stored_rows(drives: list[DriveModel]) -> dict[str, dict]:
    rows = DrivePageSummary.objects.filter(drive_model__in=drives).values("drive_model__slug", *ROW_FIELDS)
    return {row.pop("drive_model__slug"): as_json(row) for row in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="drive slugs (default: the drives with the most runs)")
    parser.add_argument("--drives", type=int, default=5, help="how many drives, when no slug is named")
    parser.add_argument("--dump", type=Path, help="write the stored rows to this JSON file instead of comparing")
    parser.add_argument("--rebuild", action="store_true", help="with --dump: rebuild each drive's row first")
    parser.add_argument("--against", type=Path, help="with --dump: compare the dumped rows with this earlier dump")
    args = parser.parse_args()
    drives = drives_to_check(args.slugs, args.drives)
    if args.dump:
        for drive in drives if args.rebuild else ():
            fields = summaries.summary_fields(drive)
            summaries._write(drive, fields)
        rows = stored_rows(drives)
        args.dump.write_text(json.dumps(rows, indent=1, sort_keys=True))
        print(f"{len(rows)} stored rows written to {args.dump}")
        if args.against:
            earlier = json.loads(args.against.read_text())
            bad = {slug: differing(earlier.get(slug), row) for slug, row in rows.items()}
            for slug, keys in bad.items():
                print(f"{slug}: {'same' if not keys else 'DIFFERS in ' + ', '.join(keys)}")
            return 1 if any(bad.values()) else 0
        return 0
    failed = False
    for drive in drives:
        fast_s, fast = timed(summaries.summary_fields, drive)
        reference_s, reference = timed(summaries.reference_summary_fields, drive)
        keys = differing(fast, reference)
        failed = failed or bool(keys)
        verdict = "same row" if not keys else "DIFFERS in " + ", ".join(keys)
        print(
            f"{drive.slug}: {verdict} (fastest of 3: rebuild {fast_s * 1000:.1f} ms, reference {reference_s * 1000:.1f} ms)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
