"""What a test adds to the manifest beyond its runs and steady state: figures derived from its raw fio outputs.

The client writes them into the manifest as its claim; `nvmedb-client verify` (and the server) derive them again
from the bundle's raw files, compare and print them. A test's module offers them as `MANIFEST_FIGURES`
(see nvmedb_client.pts.registry).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ManifestFigures:
    key: str  # the manifest's key (and verify's JSON key) the figures are kept under
    mismatch: str  # how verify names a difference of these figures: "<what> from its raw data"
    # (manifest with its plan and runs, *, read: relative path -> bytes, summaries: {run id: FioSummary},
    # ioengine: the fio engine or None) -> the client's figures, None when the manifest has none of them
    derive: Callable[..., object]
    rederive: Callable[[object], object]  # (VerifiedBundle) -> the figures from its raw files alone
    differences: Callable[[object, object], list[str]]  # (claimed, re-derived) -> one sentence per difference
    verify_lines: Callable[[object], list[str]]  # (re-derived) -> what verify prints of them
    # verify prints rich lines through a console (wrapped at the terminal's width, 160 columns in a pipe);
    # plain lines are echoed whole
    rich_lines: bool = False
