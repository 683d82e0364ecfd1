"""A seeded mutator of JSON documents and text, for the fuzz tests: the values a hostile or broken tool could put
anywhere (huge, negative, non-finite-looking, wrong type, deep, long, NUL), key deletions, and byte damage."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

_DEEP: Any = []
for _ in range(40):
    _DEEP = [_DEEP]

HOSTILE_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1.5,
    -0.0,
    2**31,
    2**63,
    2**64,
    -(2**63) - 1,
    10**30,
    1e308,
    -1e308,
    5e-324,
    "",
    "abc",
    "9" * 50,
    "1e400",
    "-1",
    "0x" + "f" * 40,
    "4k",
    "1,234",
    "[{",
    "\x00",
    "x" * 300,
    "\ud7ff\u202e",
    [],
    {},
    [1, 2, 3],
    {"a": 1},
    ["bs", "4k"],
    [None],
    _DEEP,
)
NUMBER_TEXT = ("1" + "0" * 400, "NaN", "Infinity", "-Infinity", "1e400", "-0", "1.0e-400", "18446744073709551616")


def _slots(doc: Any) -> list[tuple[Any, Any]]:
    """(container, key or index) of every value in `doc` (iteratively: documents may be deep)."""
    slots = []
    stack = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            slots.append((node, key))
            if isinstance(value, (dict, list)):
                stack.append(value)
    return slots


def mutate_document(doc: Any, rng: random.Random, *, changes: int = 3) -> Any:
    """A copy of `doc` with up to `changes` random structural changes."""
    doc = copy.deepcopy(doc)
    for _ in range(changes):
        slots = _slots(doc)
        if not slots:
            return rng.choice(HOSTILE_VALUES)
        container, key = rng.choice(slots)
        operation = rng.random()
        if operation < 0.6:
            container[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
        elif operation < 0.7 and isinstance(container, dict):
            del container[key]
        elif operation < 0.8 and isinstance(container[key], list) and container[key]:
            container[key] = container[key] * rng.choice((0, 2, 50))
        elif operation < 0.9 and isinstance(container[key], dict):
            container[key] = list(container[key].values())
        elif isinstance(container[key], (int, float)) and not isinstance(container[key], bool):
            container[key] = container[key] * rng.choice((-1, 10**12, 1e300, 0))
        else:
            container[key] = {"nested": container[key]}
    return doc


def mutate_text(text: str, rng: random.Random) -> str:
    """`text` with one kind of damage: a number made huge or non-finite, a cut, inserted garbage, or repeats."""
    operation = rng.random()
    if operation < 0.35:
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        if digits:
            at = rng.choice(digits)
            return text[:at] + rng.choice(NUMBER_TEXT) + text[at + 1 :]
    if operation < 0.5 and text:
        return text[: rng.randrange(len(text))]
    if operation < 0.7:
        at = rng.randrange(len(text) + 1)
        garbage = rng.choice(("[" * 200, "{", "}", "\x00", "\\ud800", '"', ",", "\udcff", "\n\n", "Speed 99999GT/s"))
        return text[:at] + garbage + text[at:]
    if operation < 0.85 and text:
        start = rng.randrange(len(text))
        piece = text[start : start + rng.randrange(1, 200)]
        return text[:start] + piece * rng.choice((2, 10)) + text[start:]
    lines = text.splitlines(keepends=True)
    rng.shuffle(lines)
    return "".join(lines)


def mutated_json_text(doc: Any, rng: random.Random) -> str:
    """Either a structurally mutated document, or the document's text with byte damage."""
    if rng.random() < 0.6:
        return json.dumps(mutate_document(doc, rng), ensure_ascii=rng.random() < 0.5)
    return mutate_text(json.dumps(doc, indent=rng.choice((None, 2))), rng)
