"""The surface's derived figures, from each cell's measured bandwidth and IOPS (an nvmedb extension, not the PTS).

- bandwidth (bytes/s) and IOPS of each cell, in the pattern's direction (reads of a read pattern, writes of a write
  pattern);
- the parallelism speedup of each cell: its IOPS divided by the IOPS of the QD 1 cell of the same pattern and block
  size (none, with the reason, when that cell is missing or measured zero IOPS);
- per pattern, the peak bandwidth and the *knee*: the smallest cell whose bandwidth is at least 90% of the peak.
  "Smallest" is the fewest bytes in flight (block size x QD), ties broken by the lower QD. "At least 90%" is an exact
  comparison (bw x 10 >= peak x 9 on the exact binary values), so a cell at exactly 90% qualifies.
- a cell's figures are the medians of its repetitions, with their spread; the knee is computed on the medians and
  compared with each repetition's own (nvmedb_client.pts.surface_repeats). A run's repetition is its `round`.

The client writes these figures into the manifest (`surface`), `nvmedb-client verify` and the server derive them
again from the raw fio outputs and compare (`differences`); MANIFEST_FIGURES offers them to the registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize
from nvmedb_client.pts import surface_repeats
from nvmedb_client.pts.figures import ManifestFigures
from nvmedb_client.pts.surface import ACCESS, DIRECTION, LABEL, LIMIT_REPETITIONS, MIN_REPEATABLE, PATTERNS, PHASE, TEST
from nvmedb_client.pts.surface_repeats import THRESHOLD, knee_of
from nvmedb_client.units import by_unit

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
    repetition: int = 1


def cell_value(run: Mapping, summary) -> CellValue:
    """A measured cell from its manifest run entry and its FioSummary (None when the output could not be read)."""
    pattern = str(run.get("pattern"))
    direction = DIRECTION.get(pattern, "read")
    bw = getattr(summary, f"{direction}_bw_bytes_per_s", None) if summary is not None else None
    iops = getattr(summary, f"{direction}_iops", None) if summary is not None else None
    repetition = run.get("round") if _whole(run.get("round")) else 1
    return CellValue(pattern, int(run["block_size_bytes"]), int(run["iodepth"]), str(run["id"]), bw, iops, repetition)


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
    repetitions: int = 1,
) -> dict:
    """The manifest's `surface` figures. `planned`/`skipped` are the plan's cells and `repetitions` its repetitions
    of each, so a missing cell or repetition is named."""
    by_run = {(c.pattern, c.block_size_bytes, c.iodepth, c.repetition): c for c in cells}
    measured: dict[tuple, list[CellValue]] = {}
    for (pattern, bs, qd, _rep), c in sorted(by_run.items(), key=lambda item: item[0][3]):
        if c.bw_bytes_per_s is not None and c.iops is not None:
            measured.setdefault((pattern, bs, qd), []).append(c)
    missing = []
    for entry in planned:
        key = (entry["pattern"], int(entry["block_size_bytes"]), int(entry["iodepth"]))
        for rep in range(1, repetitions + 1):
            if any(c.repetition == rep for c in measured.get(key, ())):
                continue
            reason = "no run in the bundle" if (*key, rep) not in by_run else "its fio output has no figure for it"
            missing.append({**_key(key), **({"repetition": rep} if repetitions > 1 else {}), "reason": reason})
    missing += [{**_key((s["pattern"], s["block_size_bytes"], s["iodepth"])), "reason": s["reason"]} for s in skipped]

    medians = {}
    for key, values in measured.items():
        spread = surface_repeats.cell_spread(values)
        member = surface_repeats.median_member(values)
        medians[key] = (CellValue(*key, member.run_id, spread["bw_bytes_per_s"], spread["iops"]), spread, values)

    patterns = []
    knee_keys = set()
    for pattern in [p for p in PATTERNS if any(k[0] == p for k in medians)]:
        keys = [k for k in medians if k[0] == pattern]
        summary = _pattern_figures(pattern, [medians[k][0] for k in keys])
        knee = (summary["knee"]["block_size_bytes"], summary["knee"]["iodepth"]) if summary["knee"] else None
        by_rep: dict[int, list[CellValue]] = {}
        for k in keys:
            for value in medians[k][2]:
                by_rep.setdefault(value.repetition, []).append(value)
        summary.update(surface_repeats.knee_agreement(by_rep, knee))
        summary["noisy_cells"] = sum(1 for k in keys if medians[k][1]["noisy"])
        patterns.append(summary)
        if knee:
            knee_keys.add((pattern, *knee))
    peaks = {p["pattern"]: p["peak_bw_bytes_per_s"] for p in patterns}

    rows = []
    for key in sorted(medians, key=lambda k: (PATTERNS.index(k[0]) if k[0] in PATTERNS else 99, k[1], k[2])):
        cell, spread, values = medians[key]
        qd1 = medians.get((key[0], key[1], 1))
        speedup, reason = _speedup(cell, qd1[0] if qd1 else None)
        peak = peaks.get(key[0])
        rows.append(
            {
                **_key(key),
                "run_id": cell.run_id,
                "bytes_in_flight": key[1] * key[2],
                **spread,
                "speedup": speedup,
                "speedup_reason": reason,
                "reaches_90pct_of_peak": bool(peak) and _reaches(cell.bw_bytes_per_s, peak),
                "knee": key in knee_keys,
                "repetitions": [
                    {"repetition": v.repetition, "run_id": v.run_id, "bw_bytes_per_s": v.bw_bytes_per_s, "iops": v.iops}
                    for v in values
                ],
            }
        )
    return {
        "label": LABEL,
        "threshold": float(THRESHOLD),
        "knee_rule": KNEE_RULE,
        "repetitions_planned": repetitions,
        "repeatable": repetitions >= MIN_REPEATABLE,
        "spread_rule": surface_repeats.SPREAD_RULE,
        "cv_threshold": surface_repeats.CV_THRESHOLD,
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
    return surface_repeats.reaches(bw, peak)


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
    best = knee_of(cells)
    if best is None:
        reason = "every cell of this pattern measured zero bandwidth"
    else:
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
    planned_repetitions = surface_plan.get("repetitions")
    return derive(
        cells,
        planned=_planned(surface_plan.get("cells"), with_reason=False),
        skipped=[
            {**c, "reason": c["reason"][:300]} for c in _planned(surface_plan.get("skipped_cells"), with_reason=True)
        ],
        ioengine=ioengine,
        target_note=note[:300] if isinstance(note, str) else None,
        # a plan from before repeated cells ran each cell once; a hostile count is capped at the client's limit
        repetitions=min(planned_repetitions, LIMIT_REPETITIONS) if _whole(planned_repetitions) else 1,
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
        # the spread is compared when claimed (a client from before repeated cells claimed none)
        spread = [n for n in ("n_repetitions", "bw_min_bytes_per_s", "bw_max_bytes_per_s", "bw_cv") if n in claim]
        for name in ("bw_bytes_per_s", "iops", "speedup", *spread):
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


def manifest_claim(manifest: Mapping, *, read=None, summaries: Mapping, ioengine: str | None = None) -> dict | None:
    """The manifest's `surface` of a finished run, from its runs' FioSummary (None: no surface in it)."""
    return derive_from_manifest(manifest, summaries, ioengine=ioengine)


def rederive(bundle) -> dict | None:
    """The figures afresh from a verified bundle's raw fio outputs (None when the bundle has no surface)."""
    summaries = {}
    for run in surface_runs(bundle.manifest["runs"]):
        try:
            summaries[run["id"]] = summarize(parse_fio_output(bundle.read_bytes(run["output_file"])))
        except (FioOutputError, KeyError):
            continue  # the cell is then listed as missing, with the reason
    return derive_from_manifest(bundle.manifest, summaries)


def verify_lines(surface: Mapping | None) -> list[str]:
    """What `nvmedb-client verify` prints of the re-derived figures: each pattern's peak and knee, the missing cells."""
    if surface is None:
        return []
    lines = [f"Surface ({surface['label']}), re-derived from the raw fio output; knee: {surface['knee_rule']}"]
    for pattern in surface["patterns"]:
        knee = pattern["knee"]
        where = (
            f"{knee['block_size_bytes'] / 1024:g} KiB x QD {knee['iodepth']}"
            if knee
            else f"none ({pattern['knee_reason']})"
        )
        lines.append(
            f"  {pattern['pattern']}: peak {by_unit('bytes/s', pattern['peak_bw_bytes_per_s'])}, "
            f"90% of the peak first reached at {where}"
        )
    for cell in surface["missing"]:
        lines.append(
            f"  missing: {cell['pattern']} {cell['block_size_bytes']} B QD {cell['iodepth']}: {cell['reason']}"
        )
    return lines


MANIFEST_FIGURES = ManifestFigures(
    key="surface",
    mismatch="surface figures differ",
    derive=manifest_claim,
    rederive=rederive,
    differences=differences,
    verify_lines=verify_lines,
    rich_lines=True,
)
