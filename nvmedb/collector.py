"""The cycle collector held off while one unit of bounded work runs (a bundle's validation, a summary rebuild, a
refit), and the worker's long-lived objects kept out of its reach.

Reading one bundle allocates about a million short-lived containers (435 fio outputs parsed, their summaries, the
rows made of them) that reference counting frees. Their number alone triggers the collector: gen-0 and gen-1 passes
every few hundred allocations, and once per bundle a full pass that walks every live object, the parsed documents
included: ~105 ms of a ~1.1 s worker path, measured with gc callbacks on bench/ingest_benchmark.py's bundle. Paused,
the work runs without those passes; what it leaves as cyclic garbage (a caught exception's frames, a few querysets)
is collected by the first pass after it, when the documents are gone. A refit likewise (0.2 s of CPU in a 1 s refit
of a drive of 4,000 runs, before it was paused). The work is bounded (a bundle within the
site's limits), so the garbage held meanwhile is too.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """The collector off for the block and restored as it was (nested blocks leave it to the outermost)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def freeze_long_lived() -> None:
    """Collect what loading left as garbage, then move every object alive now (Django, the apps, the libraries a
    process imported at start) where no later collection walks it again: called once a process has loaded what it
    keeps for its lifetime (gunicorn's post_worker_init, a Celery worker's start)."""
    gc.collect()
    gc.freeze()
