"""The figures of HIR and XSR derived from a bundle's raw files: the client writes them into the manifest as its
claim (`derived`), `verify` and the server compute them again from the fio outputs and logs and compare."""

from __future__ import annotations

import math
from collections.abc import Callable

from nvmedb_client.pts import registry

DERIVERS = registry.derivers()
# per-interval series stay out of the claim (the server re-derives and stores them); the figures are compared
SERIES_KEYS = ("baseline_series", "series", "burst_iops", "burst_times_ms")


def derive_all(manifest: dict, *, read: Callable[[str], bytes], summaries: dict) -> dict:
    """{test: full result} for every recovery test that has runs in the manifest."""
    full = derive_full(manifest["plan"], manifest.get("runs") or [], read=read, summaries=summaries)
    return {test: claim(result) for test, result in full.items()}


def derive_full(plan: dict, runs: list[dict], *, read, summaries) -> dict:
    """{test: result with its per-interval series} for every recovery test that has runs."""
    tests = {run.get("test") for run in runs}
    return {
        test: fn(plan=plan, runs=runs, read=read, summaries=summaries) for test, fn in DERIVERS.items() if test in tests
    }


def claim(result: dict) -> dict:
    """A result without its per-interval series."""
    if isinstance(result, dict):
        return {k: claim(v) for k, v in result.items() if k not in SERIES_KEYS}
    if isinstance(result, list):
        return [claim(v) for v in result]
    return result


def differences(claimed: object, derived: object, path: str = "") -> list[str]:
    """Sentences naming every figure where the client's claim differs from the re-derived one (relative 1e-9)."""
    if isinstance(derived, dict) and isinstance(claimed, dict):
        out = []
        for key in sorted(set(derived) | set(claimed)):
            where = f"{path}.{key}" if path else key
            if key not in claimed:
                out.append(f"{where}: the manifest claims nothing, the raw data gives {derived[key]!r}")
            elif key not in derived:
                out.append(f"{where}: the manifest claims {claimed[key]!r}, which the raw data does not support")
            else:
                out += differences(claimed[key], derived[key], where)
        return out
    if isinstance(derived, list) and isinstance(claimed, list) and len(derived) == len(claimed):
        return [
            d for i, (c, v) in enumerate(zip(claimed, derived, strict=True)) for d in differences(c, v, f"{path}[{i}]")
        ]
    if isinstance(derived, bool) or isinstance(claimed, bool) or not _numbers(claimed, derived):
        return (
            [] if claimed == derived else [f"{path}: the manifest claims {claimed!r}, the raw data gives {derived!r}"]
        )
    if math.isclose(float(claimed), float(derived), rel_tol=1e-9, abs_tol=1e-9):
        return []
    return [f"{path}: the manifest claims {claimed!r}, the raw data gives {derived!r}"]


def _numbers(*values: object) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
