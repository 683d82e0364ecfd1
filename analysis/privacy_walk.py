"""What a parsed JSON document names by key, and what labelled lines name (analysis.privacy's walk and line pass).

A key names an identifier when, lowercased and without separators, it is one of IDENTIFYING_KEYS; a string value is
a text of its own, whose labelled lines and `uname -a` lines count too. The walk keeps its own stack, so a
10,000-deep document is walked like any other. analysis.privacy imports these names (its callers and tests read them
there).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from analysis.privacy_patterns import (
    IDENTIFYING_KEYS,
    KERNEL_NAMES,
    LINE_PATTERNS,
    LINE_PATTERNS_AFTER_NEWLINE,
    TEXT_PATTERNS,
)

_SEPARATORS = re.compile(r"[\s_\-]")


def _key(name: str) -> str:
    return _SEPARATORS.sub("", name).lower()


# A key can name an identifier only when it starts with a letter some identifying key starts with, or with a
# separator `_key` drops; the walk tests that first, so the thousands of numeric keys of a fio json+ histogram cost
# one set lookup each instead of a regular expression.
_KEY_STARTS = frozenset({k[0] for k in IDENTIFYING_KEYS} | {k[0].upper() for k in IDENTIFYING_KEYS} | {"_", "-"})


def _identifying_key(key: str) -> bool:
    first = key[:1]
    return (first in _KEY_STARTS or first.isspace()) and _key(key) in IDENTIFYING_KEYS


def _line_identifiers(text: str) -> set[str]:
    """What labelled lines and `uname -a` lines name."""
    found: set[str] = set()
    for pattern in LINE_PATTERNS:
        found.update(match.group(2).strip() for match in text_pattern_matches(pattern, text))
    return found


def text_pattern_matches(pattern: re.Pattern, text: str) -> Iterator[re.Match]:
    """`pattern.finditer(text)` for one of TEXT_PATTERNS, the same matches with the same groups, found faster."""
    after_newline = LINE_PATTERNS_AFTER_NEWLINE.get(pattern)
    if after_newline is None:
        return pattern.finditer(text)
    if pattern is TEXT_PATTERNS[3] and not any(name in text for name in KERNEL_NAMES):
        return iter(())
    first = pattern.match(text)  # `^` at the very start; every later line starts after a newline
    return itertools.chain([first] if first else [], after_newline.finditer(text))


def _walk(document) -> tuple[set[str], bool, bool]:
    """identifiers_in_json; whether a key of the document could start a JSON_PAIR_START: one that is identifying or
    not ASCII (the pattern ignores case the Unicode way, `_key` lowercases); and whether an identifying key holds a
    float (orjson reads an integer beyond 64 bits as one: _walk_file reads such a document again).

    The string values are gathered and their lines read once, joined by newlines: no line pattern matches across a
    newline and every one starts at a line's start, so the joined text's lines name what each string's lines name,
    in one pass instead of one per string (a fio output holds about twenty)."""
    found: set[str] = set()
    strings: list[str] = []
    pair_keys = float_named = False
    stack = [document]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if isinstance(node, dict):
            if node.get("class") == "system" and isinstance(node.get("id"), str):
                found.add(node["id"])
            if not (node.keys() <= _PLAIN_KEYS or _digits("".join(node))):
                for key, value in node.items():
                    identifying = _identifying_key_seen(key)
                    # a quote inside a key ("x\\"serial") ends, in the file's text, a `"serial": ` pair's start
                    starts_pair = identifying or not str(key).isascii() or '"' in str(key)
                    pair_keys = pair_keys or starts_pair
                    if not starts_pair and type(key) is str and len(_PLAIN_KEYS) < 10_000:
                        _PLAIN_KEYS.add(key)
                    if isinstance(value, (dict, list)):
                        push(value)
                        continue
                    if identifying and isinstance(value, (str, int)) and not isinstance(value, bool):
                        found.add(str(value).strip())
                    elif identifying and isinstance(value, float):
                        float_named = True
                    if isinstance(value, str):
                        strings.append(value)
                continue
            # keys that name nothing (seen before, or a histogram's bins): only the values can name something
            values = node.values()
        elif isinstance(node, list):
            values = node
        else:
            continue
        if len(values) > 32 and _added_up(values):
            continue
        kinds = set(map(type, values))
        if not kinds <= _JSON_NUMBERS:
            _nested(values, kinds, stack, strings)
    if strings:
        found |= _string_lines("\n".join(strings))
    return found, pair_keys, float_named


_JSON_NUMBERS = frozenset({int, float, bool, type(None)})
_JSON_TYPES = _JSON_NUMBERS | {str, dict, list}


def _added_up(values) -> bool:
    """Whether sum(values) adds them up: then they are all numbers or booleans, when they are a parser's (it refuses
    a string, a list, a dict, a null). Tried on a long run (a json+ histogram's bins, hundreds per fio output) before
    looking at each value's type, in a quarter of the time; what it refuses, or an integer too large for a float
    beside a float, is told by the types."""
    try:
        sum(values)
    except (TypeError, OverflowError):
        return False
    return True


def _nested(values, kinds: set[type], stack: list, strings: list[str]) -> None:
    """Pushes the dicts and lists among `values` (of types `kinds`) on `stack` and their strings on `strings`."""
    if kinds <= _JSON_TYPES:  # what a parser makes: tested by identity, not by subclass
        if dict in kinds or list in kinds:
            stack.extend([value for value in values if type(value) is dict or type(value) is list])
        if str in kinds:
            strings.extend([value for value in values if type(value) is str])
        return
    stack.extend([value for value in values if isinstance(value, (dict, list))])
    strings.extend([value for value in values if isinstance(value, str)])


def _digits(text: str) -> bool:
    """text.isdigit(), of an ASCII text tested as bytes (a histogram's keys joined: a few times faster)."""
    return text.encode().isdigit() if text.isascii() else text.isdigit()


def _string_lines(value: str) -> set[str]:
    """_line_identifiers of a string value, tried only when it holds what a line pattern needs: a label's ":" or
    "=", or a kernel's name."""
    if ":" in value or "=" in value or any(name in value for name in KERNEL_NAMES):
        return _line_identifiers(value)
    return set()


_KEY_VERDICTS: dict[str, bool] = {}  # the same few hundred keys recur in every fio output and smart-log of a bundle
# Of those, the ASCII strings that are not identifying: a dict whose keys are all among them (most of every fio
# output after the first) is walked by its values alone, its keys tested in C as one set comparison. Such a key can
# neither name an identifier nor start a JSON_PAIR_START.
_PLAIN_KEYS: set[str] = set()


def _identifying_key_seen(key) -> bool:
    """_identifying_key(str(key)), remembered for up to 10,000 keys seen so far."""
    verdict = _KEY_VERDICTS.get(key) if type(key) is str else None
    if verdict is None:
        verdict = _identifying_key(str(key))
        if type(key) is str and len(_KEY_VERDICTS) < 10_000:
            _KEY_VERDICTS[key] = verdict
    return verdict
