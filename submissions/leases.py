"""A worker's lease on the submission it validates, so a worker killed outright (kill -9, a lost machine) is noticed
within a minute instead of after the task's time limit or the broker's visibility timeout.

The lease is a cache key (Redis in a deployment, shared by every worker) that lives `lease_seconds()` and is renewed
by a thread every third of that while the worker works. A dead worker stops renewing; once its lease has lapsed, the
periodic requeue (and the one a starting worker schedules, nvmedb.celery) hands the submission to a live worker. A
live lease also keeps a redelivered message from validating the same submission a second time at once. Without Redis
the cache is the worker process's own memory: the periodic requeue runs in that same process (`worker --beat`).
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache

KEY_PREFIX = "nvmedb:validation-lease:"


def lease_seconds() -> int:
    return max(3, int(getattr(settings, "NVMEDB_VALIDATION_LEASE_S", 30)))


def _key(submission_id: uuid.UUID) -> str:
    return f"{KEY_PREFIX}{submission_id}"


def holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@contextmanager
def leased(submission_id: uuid.UUID) -> Iterator[bool]:
    """Takes the lease on `submission_id` for the block and yields True, or yields False (and holds nothing) when a
    live worker holds it already. A held lease lapses by itself if this process dies."""
    seconds = lease_seconds()
    if not cache.add(_key(submission_id), holder(), seconds):
        yield False
        return
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(seconds / 3):
            cache.set(_key(submission_id), holder(), seconds)

    renewer = threading.Thread(target=renew, name=f"lease-{submission_id}", daemon=True)
    renewer.start()
    try:
        yield True
    finally:
        stop.set()
        renewer.join(timeout=seconds)
        cache.delete(_key(submission_id))


def is_leased(submission_id: uuid.UUID) -> bool:
    return cache.get(_key(submission_id)) is not None


def leased_ids(submission_ids: Iterable[uuid.UUID]) -> set[uuid.UUID]:
    ids = list(submission_ids)
    found = cache.get_many([_key(i) for i in ids])
    return {i for i in ids if _key(i) in found}
