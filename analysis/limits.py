"""Sizes of the dataset's text columns that hold what a bundle says, and the checks that keep a value that does not
fit from being cut: a value too long for its column is a reason to reject the bundle, never silently shortened."""

from __future__ import annotations

# The client names each purge method in full; its longest label (a Format keeping a two-digit LBA format and the
# PI settings) is 81 characters. A label longer than this is none the client writes.
PURGE_LABEL_CHARS = 120
# A run lists every distinct method its tests used (Format, Sanitize, blkdiscard, and an older client's label for one
# of them after a resume): four labels of the longest kind and their separators.
PURGE_METHOD_CHARS = 500
WRITE_CACHE_STATES = ("enabled", "disabled")
# The manifest schema allows run ids of 200 characters; an imported run is keyed by its file name (255 at most).
RUN_KEY_CHARS = 255
# A kernel I/O scheduler's name (mq-deadline, bfq...), and a drive's descriptive metadata (DriveMetadata.nand_type)
SCHEDULER_CHARS = 32
METADATA_CHARS = 100
# The manifest schema allows 100 characters for a run's fio rw= pattern.
PATTERN_CHARS = 100


def purge_method_problem(methods: list[str]) -> str | None:
    """Why run.json's purge methods cannot be stored as they are, or None."""
    for method in methods:
        if len(method) > PURGE_LABEL_CHARS:
            return (
                f"run.json purges: a purge method of {len(method)} characters ({method[:40]!r}...) is longer than "
                f"the {PURGE_LABEL_CHARS} characters a client's purge_method label may have"
            )
    joined = ", ".join(methods)
    if len(joined) > PURGE_METHOD_CHARS:
        return (
            f"run.json purges: {len(methods)} distinct purge methods ({len(joined)} characters together) do not fit "
            f"the {PURGE_METHOD_CHARS} characters of purge_method"
        )
    return None


def bounded(text: str, limit: int) -> str:
    """`text` if it fits `limit`, else its start marked as cut: a shortened explanation never passes for whole
    (the whole text stays in the stored bundle or the imported folder)."""
    return text if len(text) <= limit else f"{text[:limit]}… (cut: {len(text)} characters in all)"
