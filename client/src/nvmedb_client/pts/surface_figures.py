"""The surface's derived figures, from each cell's measured bandwidth and IOPS (an nvmedb extension, not the PTS).

- bandwidth (bytes/s) and IOPS of each cell, in the pattern's direction (reads of a read pattern, writes of a write
  pattern);
- the parallelism speedup of each cell: its IOPS divided by the IOPS of the QD 1 cell of the same pattern and block
  size (none, with the reason, when that cell is missing or measured zero IOPS);
- per pattern, the peak bandwidth and the *knee*: the smallest cell whose bandwidth is at least 90% of the peak.
  "Smallest" is the fewest bytes in flight (block size x QD), ties broken by the lower QD. "At least 90%" is an exact
  comparison (bw x 10 >= peak x 9 on the exact binary values), so a cell at exactly 90% qualifies.

The client writes these figures into the manifest (`surface`), `nvmedb-client verify` and the server derive them
again from the raw fio outputs and compare (`differences`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from nvmedb_client.pts.surface import ACCESS, DIRECTION, LABEL, PATTERNS, PHASE, TEST

THRESHOLD = Fraction(9, 10)
KNEE_RULE = (
    "the cell with the fewest bytes in flight (block size x QD) whose bandwidth is at least 90% of the pattern's "
    "peak bandwidth; ties broken by the lower QD"
)
RELATIVE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class CellValue:
    pattern: str
    block_size_bytes: int
    iodepth: int
    run_id: str
    bw_bytes_per_s: float | None
    iops: float | None


def cell_value(run: Mapping, summary) -> CellValue:
    """A measured cell from its manifest run entry and its FioSummary (None when the output could not be read)."""
    pattern = str(run.get("pattern"))
    direction = DIRECTION.get(pattern, "read")
    bw = getattr(summary, f"{direction}_bw_bytes_per_s", None) if summary is not None else None
    iops = getattr(summary, f"{direction}_iops", None) if summary is not None else None
    return CellValue(pattern, int(run["block_size_bytes"]), int(run["iodepth"]), str(run["id"]), bw, iops)


def surface_runs(runs: Iterable[Mapping]) -> list[Mapping]:
    """The surface cells' runs; one without a whole-number queue depth is no cell (the plan check rejects it)."""
    return [
        r
        for r in runs
        if isinstance(r, Mapping) and r.get("test") == TEST and r.get("phase") == PHASE and _whole(r.get("iodepth"))
    ]


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _planned(entries, *, with_reason: bool) -> list[dict]:
    """The well-formed cells of a plan's list (a bundle is hostile input: anything else is left out)."""
    kept = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or entry.get("pattern") not in PATTERNS:
            continue
        if not (_whole(entry.get("block_size_bytes")) and _whole(entry.get("iodepth"))):
            continue
        if with_reason and not isinstance(entry.get("reason"), str):
            continue
        kept.append({k: entry[k] for k in ("pattern", "block_size_bytes", "iodepth", "reason") if k in entry})
    return kept


def derive(
    cells: Sequence[CellValue],
    *,
    planned: Sequence[Mapping] = (),
    skipped: Sequence[Mapping] = (),
    ioengine: str | None = None,
    target_note: str | None = None,
) -> dict:
    """The manifest's `surface` figures. `planned`/`skipped` are the plan's cells, so a missing one is named."""
    by_key = {(c.pattern, c.block_size_bytes, c.iodepth): c for c in cells}
    measured = {k: c for k, c in by_key.items() if c.bw_bytes_per_s is not None and c.iops is not None}
    missing = []
    for entry in planned:
        key = (entry["pattern"], int(entry["block_size_bytes"]), int(entry["iodepth"]))
        if key not in measured:
            reason = "no run in the bundle" if key not in by_key else "its fio output has no figure for it"
            missing.append({**_key(key), "reason": reason})
    missing += [{**_key((s["pattern"], s["block_size_bytes"], s["iodepth"])), "reason": s["reason"]} for s in skipped]

    patterns = []
    knee_keys = set()
    for pattern in [p for p in PATTERNS if any(k[0] == p for k in measured)]:
        summary = _pattern_figures(pattern, [c for k, c in measured.items() if k[0] == pattern])
        patterns.append(summary)
        if summary["knee"]:
            knee_keys.add((pattern, summary["knee"]["block_size_bytes"], summary["knee"]["iodepth"]))
    peaks = {p["pattern"]: p["peak_bw_bytes_per_s"] for p in patterns}

    rows = []
    for key in sorted(measured, key=lambda k: (PATTERNS.index(k[0]) if k[0] in PATTERNS else 99, k[1], k[2])):
        cell = measured[key]
        speedup, reason = _speedup(cell, measured.get((key[0], key[1], 1)))
        peak = peaks.get(key[0])
        rows.append(
            {
                **_key(key),
                "run_id": cell.run_id,
                "bytes_in_flight": key[1] * key[2],
                "bw_bytes_per_s": cell.bw_bytes_per_s,
                "iops": cell.iops,
                "speedup": speedup,
                "speedup_reason": reason,
                "reaches_90pct_of_peak": bool(peak) and _reaches(cell.bw_bytes_per_s, peak),
                "knee": key in knee_keys,
            }
        )
    return {
        "label": LABEL,
        "threshold": float(THRESHOLD),
        "knee_rule": KNEE_RULE,
        "ioengine": ioengine,
        "queue_depth_real": None if ioengine is None else ioengine in ("libaio", "io_uring"),
        "target_note": target_note,
        "patterns": patterns,
        "cells": rows,
        "missing": missing,
    }


def _key(key: tuple) -> dict:
    pattern, bs, qd = key
    return {
        "pattern": pattern,
        "access": ACCESS.get(pattern, ""),
        "direction": DIRECTION.get(pattern, ""),
        "block_size_bytes": int(bs),
        "iodepth": int(qd),
    }


def _reaches(bw: float, peak: float) -> bool:
    return Fraction(bw) >= THRESHOLD * Fraction(peak)


def _speedup(cell: CellValue, qd1: CellValue | None) -> tuple[float | None, str | None]:
    if qd1 is None:
        return None, "no QD 1 cell at this block size"
    if not qd1.iops:
        return None, "the QD 1 cell measured zero IOPS"
    return cell.iops / qd1.iops, None


def _pattern_figures(pattern: str, cells: list[CellValue]) -> dict:
    peak_cell = max(cells, key=lambda c: (c.bw_bytes_per_s, -c.block_size_bytes * c.iodepth, -c.iodepth))
    peak = peak_cell.bw_bytes_per_s
    knee, reason = None, None
    if not peak or peak <= 0:
        reason = "every cell of this pattern measured zero bandwidth"
    else:
        reaching = [c for c in cells if _reaches(c.bw_bytes_per_s, peak)]
        best = min(reaching, key=lambda c: (c.block_size_bytes * c.iodepth, c.iodepth))
        knee = {
            "block_size_bytes": best.block_size_bytes,
            "iodepth": best.iodepth,
            "bytes_in_flight": best.block_size_bytes * best.iodepth,
            "bw_bytes_per_s": best.bw_bytes_per_s,
            "run_id": best.run_id,
        }
    return {
        "pattern": pattern,
        "access": ACCESS.get(pattern, ""),
        "direction": DIRECTION.get(pattern, ""),
        "cells_measured": len(cells),
        "peak_bw_bytes_per_s": peak,
        "peak_block_size_bytes": peak_cell.block_size_bytes,
        "peak_iodepth": peak_cell.iodepth,
        "knee": knee,
        "knee_reason": reason,
    }


def derive_from_manifest(manifest: Mapping, summaries: Mapping, *, ioengine: str | None = None) -> dict | None:
    """The figures of a manifest's surface runs given their FioSummary by run id (None: no surface in it).
    `ioengine` is the fio engine the runs used (libaio or io_uring make the queue depth real)."""
    runs = surface_runs(manifest.get("runs") or [])
    surface_plan = ((manifest.get("plan") or {}).get("extensions") or {}).get("surface")
    if not runs and not surface_plan:
        return None
    cells = [cell_value(run, summaries.get(str(run.get("id")))) for run in runs]
    surface_plan = surface_plan if isinstance(surface_plan, Mapping) else {}
    note = surface_plan.get("target_note")
    return derive(
        cells,
        planned=_planned(surface_plan.get("cells"), with_reason=False),
        skipped=[
            {**c, "reason": c["reason"][:300]} for c in _planned(surface_plan.get("skipped_cells"), with_reason=True)
        ],
        ioengine=ioengine,
        target_note=note[:300] if isinstance(note, str) else None,
    )


def differences(claimed: Mapping | None, derived: Mapping | None) -> list[str]:
    """Sentences naming each figure where the client's claim differs from the re-derivation."""
    if derived is None:
        return [] if claimed is None else ["the manifest claims surface figures, but the bundle has no surface runs"]
    if claimed is None:
        return ["the manifest has no surface figures for its surface runs"]
    found = []
    claimed_patterns = {_scalar(p.get("pattern")): p for p in _list(claimed.get("patterns")) if isinstance(p, Mapping)}
    for pattern in derived["patterns"]:
        claim = claimed_patterns.pop(pattern["pattern"], None)
        name = f"surface {pattern['pattern']}"
        if claim is None:
            found.append(f"{name}: the manifest has no figures for this pattern")
            continue
        if not _close(claim.get("peak_bw_bytes_per_s"), pattern["peak_bw_bytes_per_s"]):
            found.append(
                f"{name}: the manifest claims a peak of {str(claim.get('peak_bw_bytes_per_s'))[:40]} bytes/s, "
                f"the raw data gives {pattern['peak_bw_bytes_per_s']!r}"
            )
        if _knee(claim.get("knee")) != _knee(pattern["knee"]):
            found.append(
                f"{name}: the manifest claims the 90% knee at {str(_knee(claim.get('knee')))[:60]}, "
                f"the raw data gives {_knee(pattern['knee'])}"
            )
    found += [f"surface {str(p)[:40]}: the manifest claims figures its runs do not support" for p in claimed_patterns]
    claimed_cells = {
        (_scalar(c.get("pattern")), _scalar(c.get("block_size_bytes")), _scalar(c.get("iodepth"))): c
        for c in _list(claimed.get("cells"))
        if isinstance(c, Mapping)
    }
    for cell in derived["cells"]:
        key = (cell["pattern"], cell["block_size_bytes"], cell["iodepth"])
        claim = claimed_cells.pop(key, None)
        where = f"surface {key[0]} {key[1]} B QD {key[2]}"
        if claim is None:
            found.append(f"{where}: the manifest has no figures for this cell")
            continue
        for name in ("bw_bytes_per_s", "iops", "speedup"):
            if not _close(claim.get(name), cell[name]):
                found.append(
                    f"{where}: the manifest claims {name}={claim.get(name)!r}, the raw data gives {cell[name]!r}"
                )
    found += [
        f"surface {str(k[0])[:40]} {str(k[1])[:20]} B QD {str(k[2])[:20]}: the manifest claims a cell it has no run for"
        for k in claimed_cells
    ]
    return found


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _scalar(value):
    """A claimed key as a dict key: a hostile list or object becomes its (short) text."""
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)[:100]


def _knee(knee) -> tuple | None:
    if not isinstance(knee, Mapping):
        return None
    return (knee.get("block_size_bytes"), knee.get("iodepth"))


def _close(claimed, derived) -> bool:
    if claimed is None or derived is None:
        return claimed is None and derived is None
    if isinstance(claimed, bool) or not isinstance(claimed, int | float):
        return False
    return abs(claimed - derived) <= RELATIVE_TOLERANCE * max(abs(claimed), abs(derived))
