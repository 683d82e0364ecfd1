"""The server's side of the queue-depth x block-size surface (an nvmedb extension, not a PTS test).

`read_surface` derives the surface's figures afresh from the fio outputs the server parsed itself (never from the
client's `surface` claim, which is kept per pattern and compared); `surface_rows` turns them into SurfaceCell and
SurfacePattern rows once the run and its measurements are stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from analysis.models import SurfaceCell, SurfacePattern
from analysis.records import FlagRecord, SubmissionRecord
from nvmedb_client.pts import surface as surface_test
from nvmedb_client.pts import surface_figures

TEST = surface_test.TEST
MAX_CLAIM_CHARS = 4000
NOT_PTS = "surface: an nvmedb extension (queue depth x block size), not a test of the SNIA PTS"


@dataclass
class SurfaceOutcome:
    derived: dict
    claimed: dict | None
    differences: list[str] = field(default_factory=list)

    def pattern_claim(self, pattern: str) -> dict | None:
        """The client's figures for `pattern`, verbatim, unless they are too large to keep (then a note says so)."""
        patterns = self.claimed.get("patterns") if isinstance(self.claimed, Mapping) else None
        if not isinstance(patterns, list):
            return None
        claim = next((p for p in patterns if isinstance(p, Mapping) and p.get("pattern") == pattern), None)
        if claim is None:
            return None
        if len(json.dumps(claim)) > MAX_CLAIM_CHARS:
            return {"note": f"the client's claim for this pattern is over {MAX_CLAIM_CHARS} characters: not kept"}
        return dict(claim)

    def pattern_differences(self, pattern: str) -> list[str]:
        return [d for d in self.differences if d.startswith((f"surface {pattern}:", f"surface {pattern} "))]


def read_surface(manifest: Mapping, summaries: Mapping, record: SubmissionRecord) -> SurfaceOutcome | None:
    """Derive the figures from the server's own parse of the raw outputs; flag every way the claim differs."""
    test_run = next((tr for tr in record.test_runs if tr.test == TEST), None)
    if test_run is None:
        return None
    derived = surface_figures.derive_from_manifest(manifest, summaries, ioengine=test_run.ioengine or None)
    if derived is None:
        return None
    claimed = manifest.get("surface") if isinstance(manifest.get("surface"), Mapping) else None
    outcome = SurfaceOutcome(derived, claimed, surface_figures.differences(claimed, derived))
    for difference in outcome.differences[:20]:
        record.flags.append(
            FlagRecord("surface_claim_differs", f"{difference}; the server's figure stands."[:300], test=TEST)
        )
    test_run.surface = outcome
    # one depth per cell: the run as a whole has none (the surface table holds each cell's)
    test_run.iodepth = None
    test_run.missing["iodepth"] = "the surface varies the queue depth per cell (see the surface table)"
    return outcome


def surface_rows(test_run, outcome: SurfaceOutcome, measurements_by_key: Mapping) -> tuple[list, list]:
    """(SurfaceCell rows, SurfacePattern rows) of a stored surface run."""
    derived = outcome.derived
    cells = [
        SurfaceCell(
            test_run=test_run,
            drive_model_id=test_run.drive_model_id,
            measurement=measurements_by_key.get((test_run.id, c["run_id"])),
            pattern=c["pattern"],
            access=c["access"],
            direction=c["direction"],
            block_size_bytes=c["block_size_bytes"],
            iodepth=c["iodepth"],
            bytes_in_flight=c["bytes_in_flight"],
            bw_bytes_per_s=c["bw_bytes_per_s"],
            iops=c["iops"],
            n_repetitions=c["n_repetitions"],
            bw_min_bytes_per_s=c["bw_min_bytes_per_s"],
            bw_max_bytes_per_s=c["bw_max_bytes_per_s"],
            bw_cv=c["bw_cv"],
            noisy=c["noisy"],
            spread_reason=(c["spread_reason"] or "")[:200],
            repetitions=c["repetitions"],
            speedup=c["speedup"],
            speedup_reason=c["speedup_reason"] or "",
            reaches_90pct_of_peak=c["reaches_90pct_of_peak"],
            knee=c["knee"],
        )
        for c in derived["cells"]
    ]
    patterns = []
    for p in derived["patterns"]:
        knee = p["knee"] or {}
        differences = outcome.pattern_differences(p["pattern"])
        patterns.append(
            SurfacePattern(
                test_run=test_run,
                pattern=p["pattern"],
                access=p["access"],
                direction=p["direction"],
                cells_measured=p["cells_measured"],
                cells_missing=[m for m in derived["missing"] if m["pattern"] == p["pattern"]],
                peak_bw_bytes_per_s=p["peak_bw_bytes_per_s"],
                peak_block_size_bytes=p["peak_block_size_bytes"],
                peak_iodepth=p["peak_iodepth"],
                knee_block_size_bytes=knee.get("block_size_bytes"),
                knee_iodepth=knee.get("iodepth"),
                knee_bytes_in_flight=knee.get("bytes_in_flight"),
                knee_bw_bytes_per_s=knee.get("bw_bytes_per_s"),
                knee_reason=(p["knee_reason"] or "")[:200],
                repetitions=p["repetitions"],
                repeatable=derived["repeatable"],
                knee_agreeing_repetitions=p["knee_agreeing_repetitions"],
                knee_by_repetition=p["knee_by_repetition"],
                knee_moves=p["knee_moves"],
                noisy_cells=p["noisy_cells"],
                queue_depth_real=derived["queue_depth_real"],
                target_note=(derived["target_note"] or "")[:300],
                claimed=outcome.pattern_claim(p["pattern"]),
                claim_differs=bool(differences),
                note="; ".join(differences)[:300],
            )
        )
    return cells, patterns
