"""One strict, bounded JSON reader for everything read from a bundle or a tool, on the client and on the server.

Strict: only RFC 8259 JSON. NaN, Infinity and -Infinity (which Python's json module accepts and writes by default)
are refused, as is a number too large for a double (`1e400`), and a lone UTF-16 surrogate escape (`"\\ud800"`, which
no database can store). Bounded: the size is checked before parsing and the nesting depth by a scan of the bytes
before any object is built, so a hostile document costs at most a pass over its bytes; after parsing, a reader may
walk the result recursively without meeting Python's recursion limit.

The bracket scan first counts every bracket, including those inside strings: an over-estimate of the depth, exact
for tool outputs (fio, nvme-cli and lshw put no brackets in strings) and cheaper than parsing. The brackets are
counted in C, not byte by byte in Python: every pass of `bytes.replace` removes the innermost empty pairs, so a
balanced text nested d deep is empty after d passes. Only a text still not empty after `max_depth` passes (too deep,
or unbalanced) is scanned bracket by bracket; only when that count passes the limit are strings stripped and the
scan repeated exactly. On the 411 real fio outputs of the shared samples (10.5 MB) the Python scan took 15 ms, the
passes take a few, orjson's parse 46 ms and a walk over the parsed objects 94 ms (bench/json_depth_benchmark.py); a
hostile 17 MB of `[][][]...` costs one pass, and no object is ever built for it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

try:
    import orjson
except ImportError:  # orjson is optional (the server has it): the standard library gives the same verdicts, slower
    orjson = None

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64

_OPEN = frozenset(b"[{")
_BRACKETS_ONLY = bytes(b for b in range(256) if b not in b"[]{}")
# maps { to [ and } to ], so one empty pair "[]" stands for both kinds (a mismatched pair is the parser's to refuse)
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# a \uD800-\uDBFF escape not followed by a \uDC00-\uDFFF one, or a \uDC00-\uDFFF escape not preceded by one
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class JsonError(ValueError):
    """A document is not strict JSON within the limits; the message names the document and the problem."""

    def __init__(self, what: str, problem: str):
        super().__init__(f"{what} {problem}")
        self.what = what
        self.problem = problem


def loads(
    data: bytes | str,
    *,
    what: str = "the document",
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    replace_invalid_utf8: bool = False,
) -> Any:
    """Parse `data` as strict JSON; JsonError (a ValueError) when it is not, or is too large or too deep.

    `what` names the document in the message ("files/fio/r1.json"). Tool outputs may carry stray non-UTF-8 bytes
    (a firmware's model string): `replace_invalid_utf8` reads those as U+FFFD instead of refusing the document.
    """
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise JsonError(what, f"is {len(raw)} bytes, more than the limit of {max_bytes}")
    if not raw or raw.isspace():
        raise JsonError(what, "is empty")
    if not within_depth(raw, max_depth):
        raise JsonError(what, f"is nested deeper than {max_depth} levels")
    if orjson is not None:
        try:
            return orjson.loads(raw)  # orjson reads UTF-8 bytes itself and refuses what is not UTF-8
        except orjson.JSONDecodeError:
            pass  # decoded below, to refuse with the byte at fault or to read stray bytes as U+FFFD
    try:
        text = bytes(raw).decode("utf-8", errors="replace" if replace_invalid_utf8 else "strict")
    except UnicodeDecodeError as exc:
        raise JsonError(what, f"is not UTF-8 text (byte {exc.start})") from None
    if orjson is not None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise JsonError(what, f"is not strict JSON: {exc}") from None
    return _stdlib_loads(text, what)


def within_depth(raw: bytes, max_depth: int) -> bool:
    """Whether no array or object in `raw` nests deeper than `max_depth` (unbalanced text passes: the parser
    refuses it with a better message)."""
    brackets = raw.translate(None, _BRACKETS_ONLY)
    if _emptied(brackets, max_depth) or _deepest(brackets, max_depth) <= max_depth:
        return True
    return _deepest(_STRING.sub(b"", raw).translate(None, _BRACKETS_ONLY), max_depth) <= max_depth


def _emptied(brackets: bytes, passes: int) -> bool:
    """Whether removing the innermost empty pairs `passes` times leaves nothing: then no pair nests deeper."""
    pairs = brackets.translate(_ONE_KIND)
    for _ in range(passes):
        if not pairs:
            return True
        shorter = pairs.replace(b"[]", b"")
        if len(shorter) == len(pairs):
            return False  # no empty pair left: unbalanced, judged by the exact scan
        pairs = shorter
    return not pairs


def _deepest(brackets: bytes, limit: int) -> int:
    depth = 0
    for byte in brackets:
        if byte in _OPEN:
            depth += 1
            if depth > limit:
                return depth
        else:
            depth -= 1
    return 0


def _stdlib_loads(text: str, what: str) -> Any:
    if _LONE_SURROGATE.search(text):
        raise JsonError(what, "is not strict JSON: a string holds a lone UTF-16 surrogate escape")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_int)
    except JsonError as exc:
        raise JsonError(what, exc.problem) from None
    except RecursionError:
        raise JsonError(what, "is nested too deeply to parse") from None
    except ValueError as exc:
        raise JsonError(what, f"is not strict JSON: {exc}") from None


def _refuse_constant(name: str):
    raise JsonError("", f"is not strict JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonError("", f"is not strict JSON: the number {text[:40]} is too large for a double")
    return value


def _int(text: str) -> int | float:
    value = int(text)
    # orjson reads integers beyond 64 bits as doubles; do the same so both parsers give one answer
    if -(2**63) <= value < 2**64:
        return value
    return _finite_float(text)


def strict_decoder() -> json.JSONDecoder:
    """A standard-library decoder with the same refusals as `loads`, for scanning text that holds several documents
    (its `raw_decode` raises JsonError for NaN, Infinity or a number beyond a double). Check `lone_surrogate` and the
    depth on the whole text first."""
    return json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_int)


def has_lone_surrogate(text: str) -> bool:
    return _LONE_SURROGATE.search(text) is not None
