"""Reading numbers out of hostile JSON and tool output: a value that is not a number is missing, never a guess."""

from __future__ import annotations


def optional_int(value: object) -> int | None:
    """An integer from an int, a float (truncated), or text ("42", "42.0", "0x2a"); None for anything else.

    Booleans are not numbers here, although Python treats them as ints."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text, 16) if text.lower().startswith("0x") else int(float(text))
        except (ValueError, OverflowError):
            return None
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
