"""A one-line JSON document laid out for reading, token by token (the raw-file pages show scrubbed JSON this way)."""

from __future__ import annotations

import re

JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\],:]|[^"{}\[\],:\s]+')


def pretty_json(text: str, *, max_levels: int = 32) -> str:
    """A one-line JSON document laid out one value a line, token by token without parsing it into a tree (so depth
    costs nothing), with indentation that stops growing after `max_levels`. Other text comes back unchanged."""
    stripped = text.strip()
    if "\n" in stripped or stripped[:1] not in ("{", "["):
        return text
    out: list[str] = []
    depth = 0
    for token in JSON_TOKEN.findall(stripped):
        if token in ("{", "["):
            depth += 1
            out.append(token + "\n" + "  " * min(depth, max_levels))
        elif token in ("}", "]"):
            depth = max(0, depth - 1)
            out.append("\n" + "  " * min(depth, max_levels) + token)
        elif token == ",":
            out.append(",\n" + "  " * min(depth, max_levels))
        elif token == ":":
            out.append(": ")
        else:
            out.append(token)
    return "".join(out) + "\n"
