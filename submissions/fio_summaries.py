"""The figures of a bundle's fio outputs, read once per bundle: the content fingerprints (submissions.content) and
the ingest (analysis.bundle_reader) both need every output's summary, and summarizing a json+ output costs about as
much as parsing it."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from nvmedb_client.fio_output import FioSummary, summarize

if TYPE_CHECKING:
    from nvmedb_client.bundle import VerifiedBundle

# by bundle (its id: a VerifiedBundle is a dataclass, not hashable), then by path; an entry goes when its bundle
# does (weakref.finalize), so an id is never reused while it is here. A summary is immutable: sharing it is safe.
_SUMMARIES: dict[int, dict[str, FioSummary]] = {}


def bundle_summary(bundle: VerifiedBundle, path: str) -> FioSummary:
    """summarize() of the listed fio output `path`, parsed once per bundle (VerifiedBundle.parsed). Raises what
    reading, parse_fio_output and summarize raise, every time it is asked (a failure is not remembered)."""
    summaries = _SUMMARIES.get(id(bundle))
    if summaries is None:
        summaries = _SUMMARIES[id(bundle)] = {}
        weakref.finalize(bundle, _SUMMARIES.pop, id(bundle), None)
    summary = summaries.get(path)
    if summary is None:
        summary = summaries[path] = summarize(bundle.fio_output(path))
    return summary
