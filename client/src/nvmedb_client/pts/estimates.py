"""Bundle size of the per-interval logs a plan writes (added to plan.estimate_bundle_bytes)."""

from __future__ import annotations

# fio log lines ("1000, 34567, 1, 4096, 0") are ~24 bytes and compress to ~8 in the bundle (measured on quick runs)
LOG_SAMPLE_GZIP_BYTES = 8


def log_bytes(plan) -> int:
    total = 0
    for block in plan.blocks:
        for segment in block.segments:
            samples = segment.runtime_s * 1000 / segment.log_interval_ms
            total += int(samples * segment.threads * len(segment.logs) * LOG_SAMPLE_GZIP_BYTES)
    return total
