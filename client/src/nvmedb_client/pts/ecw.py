"""Enterprise Composite Workload (ECW) stimulus of the SNIA PTS v2.0.2 (Enterprise): a random mix of block sizes,
40 % reads and 60 % writes, with three LBA hot zones. See docs/methodology.md for where each figure
comes from."""

from __future__ import annotations

KIB = 1024
READ_PCT = 40
# (block size in bytes, percent of the I/Os): the ECW block-size access probabilities
BLOCK_SIZE_MIX = (
    (512, 4),
    (1 * KIB, 1),
    (1536, 1),
    (2 * KIB, 1),
    (2560, 1),
    (3 * KIB, 1),
    (3584, 1),
    (4 * KIB, 67),
    (8 * KIB, 10),
    (16 * KIB, 7),
    (32 * KIB, 3),
    (64 * KIB, 3),
)
# (percent of the I/Os, percent of the active range), in LBA order: group A, B, C
LBA_ZONES = ((50, 5), (30, 15), (20, 80))
# the block size recorded for an ECW cell (the mix's most frequent size): a label, never the only size issued
NOMINAL_BLOCK_SIZE = 4 * KIB
SMALLEST_BLOCK_SIZE = min(size for size, _ in BLOCK_SIZE_MIX)


def fio_options() -> list[str]:
    """The job-file lines that make fio issue the ECW stimulus (with rw=randrw and rwmixread set by the caller)."""
    bssplit = ":".join(f"{size}/{pct}" for size, pct in BLOCK_SIZE_MIX)
    zones = ":".join(f"{ios}/{share}" for ios, share in LBA_ZONES)
    return [
        "# ECW block-size mix: size/percent of the I/Os (the same split for reads and writes)",
        f"bssplit={bssplit}",
        "# ECW hot zones: percent of the I/Os / percent of the range, group A (first 5 %), B, C",
        f"random_distribution=zoned:{zones}",
        "# blocks of a mix are aligned to the smallest block, as the PTS issues them",
        f"blockalign={SMALLEST_BLOCK_SIZE}",
    ]
