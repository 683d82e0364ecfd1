"""What a machine fault that stopped a validation attempt is shown as: its type and message, short, and without the
server's paths, addresses, host names or credentials (the contributor reads it too)."""

from __future__ import annotations

import re

LAST_ERROR_CHARS = 300
_HIDDEN = (
    (re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE), "<url>"),
    (re.compile(r"\"[^\"]*\"|'[^']*'"), "<…>"),  # quoted names: hosts, users, databases, files
    (re.compile(r"(?<![\w.])(?:~|\.{1,2})?/[^\s,;:)]+"), "<path>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}\b", re.IGNORECASE), "<address>"),
    (re.compile(r"\b(password|user|host|dbname|port)\s*=\s*\S+", re.IGNORECASE), r"\1=<…>"),
)


def fault_summary(exc: BaseException, *, attempt: int | None = None) -> str:
    """`OSError: No space left on device` for an OS error (its file name left out), else the type and the first
    line of the message with anything naming the server's insides replaced."""
    name = type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        message = exc.strerror
    else:
        message = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
        for pattern, replacement in _HIDDEN:
            message = pattern.sub(replacement, message)
    text = f"{name}: {message}" if message else name
    if attempt is not None:
        text = f"attempt {attempt}: {text}"
    return text if len(text) <= LAST_ERROR_CHARS else text[: LAST_ERROR_CHARS - 1] + "…"
