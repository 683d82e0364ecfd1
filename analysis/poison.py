"""Poison detection: a bundle that makes the reader fail in a way no check foresaw is rejected at once, naming the
file it failed on, instead of being retried until it is held with no reason.

Only faults of the machine are worth another attempt (storage I/O, the database, the broker); they pass through.
Everything else a bundle can provoke (a TypeError on a shape no parser expected, a MemoryError) becomes
UnreadableBundle, which ingest turns into a rejection.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError

# Raised by the machine, not by the bundle's content: let the task retry them.
TRANSIENT = (OSError, DatabaseError)


class UnreadableBundle(Exception):
    """The bundle could not be read; `reason` names the file (or step) and the error, for the contributor."""

    def __init__(self, where: str, error: BaseException):
        self.where = where
        self.error = error
        detail = str(error).replace("\x00", "\\x00")[:200]
        self.reason = f"{where} could not be read ({type(error).__name__}: {detail})"[:300]
        super().__init__(self.reason)


@contextmanager
def reading(where: str, *, expected: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Turn an unexpected error while reading `where` (a file of the bundle or a step) into UnreadableBundle.

    `expected` are the errors by which the parser says "this is not a valid file" (the caller records those)."""
    try:
        yield
    except (UnreadableBundle, *TRANSIENT, *expected):
        raise
    except Exception as error:
        raise UnreadableBundle(where, error) from error
