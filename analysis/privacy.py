"""What in a bundle identifies a person, a machine or one drive unit, and how it is taken out of what the public sees.

Scrubbing is two passes over a bundle. `identifiers_in_file` (run on every file by
browse.raw_files.collect_bundle_identifiers) gathers the literal identifiers a file names: serial numbers,
host names, user names, the serial tail of `/dev/disk/by-id/` names, addresses. `Scrubber` then removes the union of
them from every file, plus whatever the patterns match there (IPv4/IPv6 and MAC addresses, UUIDs, by-id paths,
`/home/<user>/`, `"serial": "..."` pairs), so a serial seen only in id-ctrl is also removed from a fio job file that
names the drive by its by-id path.

What of a file is served at all is decided first, by allow-list (analysis.raw_allow): only the known fields of a file
of a known kind reach the Scrubber, which matches identifiers in any letter case. Scrubbing works on text, never on a
parsed tree, so a 10,000-deep JSON document is handled like any other (its JSON stays valid: replacements never
touch quotes or escapes). Collection also parses small JSON files, walking them without recursion; what the parser
cannot read is covered by the patterns.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Iterator

from analysis.json_layout import pretty_json as pretty_json  # where the raw-file tests and bench look for it
from analysis.privacy_addresses import (  # noqa: F401 - the address pass's names, where callers look for them
    ADDRESS_SEED,
    IPV4,
    IPV6,
    MAC,
    UUID,
    address_seeds,
    address_spans,
    alnum_at,
)
from analysis.privacy_patterns import (  # noqa: F401 - the patterns' names, where callers look for them
    BY_ID_PATH,
    HOME_PATH,
    IDENTIFYING_KEYS,
    INLINE_PATTERNS,
    JSON_NUMBER_PAIR,
    JSON_PAIR_START,
    JSON_STRING_PAIR,
    KERNEL_NAMES,
    LINE_PATTERNS,
    LINE_PATTERNS_AFTER_NEWLINE,
    NQN,
    PLACEHOLDERS,
    SCRUBBED,
    TEXT_PATTERNS,
)
from analysis.privacy_walk import (  # noqa: F401 - the walk's names, where callers and tests look for them
    _PLAIN_KEYS,
    _identifying_key,
    _line_identifiers,
    _walk,
    text_pattern_matches,
)
from nvmedb.json_field import holds_digit_run

try:
    import orjson
except ImportError:  # the server has it; the standard library gives the same identifiers, slower
    orjson = None

RULES_VERSION = 4  # raise it when what counts as an identifier changes (cached identifier sets are keyed by it)
MAX_PARSED_BYTES = 4 * 1024**2  # larger files are scanned by pattern only (identifier sources are small files)
MIN_NEEDLE_CHARS = 3
MAX_IDENTIFIERS = 20_000  # an honest bundle names a few dozen; more is a bundle built to slow the site down
MAX_TRIE_CHARS = 128  # longer identifiers (rare) are replaced with str.replace
CHUNK_CHARS = 1024**2


def _usable(value: str) -> bool:
    value = value.strip()
    return len(value) >= MIN_NEEDLE_CHARS and value.lower() not in PLACEHOLDERS and not set(value) <= set("0 -_.:")


def _by_id_identifiers(name: str) -> set[str]:
    """The unit-identifying part of a by-id name: the serial after the last "_", or the eui/wwn/nvme-uuid value."""
    found = {name}
    tail = re.sub(r"-part\d+$", "", name)
    if "_" in tail:
        found.add(tail.rsplit("_", 1)[1])
    for prefix in ("nvme-eui.", "wwn-0x", "wwn-", "nvme-uuid.", "nvme-nvme."):
        if tail.startswith(prefix):
            found.add(tail[len(prefix) :])
    return {value for value in found if len(value) >= 6}


def identifiers_in_text(text: str) -> set[str]:
    """Literal identifiers a text names by context: key/value pairs, labelled lines, by-id and /home paths."""
    return _pair_identifiers(text) | _line_identifiers(text) | _inline_identifiers(text)


def _pair_identifiers(text: str) -> set[str]:
    """The values of `"key": value` pairs whose key is identifying."""
    found: set[str] = set()
    string_pairs, number_pairs = json_pair_matches(text)
    for match in string_pairs:
        try:
            found.add(json.loads(f'"{match.group(2)}"'))
        except ValueError:
            found.add(match.group(2))
    found.update(match.group(2) for match in number_pairs)
    return found


def _inline_identifiers(text: str) -> set[str]:
    """What the patterns that match anywhere in a line find: lspci's serials, by-id and /home paths, NQNs,
    addresses."""
    found: set[str] = set()
    for pattern in INLINE_PATTERNS:
        if _may_match(pattern, text):
            found.update(match.group(2).strip() for match in pattern.finditer(text))
    if _may_match(BY_ID_PATH, text):
        for match in BY_ID_PATH.finditer(text):
            found |= _by_id_identifiers(match.group(2))
    if _may_match(HOME_PATH, text):
        found.update(match.group(2) for match in HOME_PATH.finditer(text))
    if _may_match(NQN, text):
        for match in NQN.finditer(text):
            found.add(match.group(2))
            if match.group(1).endswith("nvmexpress:") and re.fullmatch(r"[0-9a-fA-F]{8}\S+", match.group(2)):
                found.add(match.group(2)[8:])  # the serial after the vendor and subsystem vendor ids
    found.update(text[start:end] for start, end in address_spans(text))
    return found


# A character every match of an in-line pattern holds at a fixed distance from its start, one that fio's output holds
# a few times at most (a fio output holds no "D", two "[" and "/", one "q"): finding it is a memchr, so a pattern that
# cannot match costs a few microseconds instead of a pass of the regular expression engine.
_LANDMARKS = {
    INLINE_PATTERNS[0]: ("D", 0),  # "Device Serial Number"
    INLINE_PATTERNS[1]: ("[", 0),  # "[SN] Serial number:", in any case
    BY_ID_PATH: ("/", 0),
    HOME_PATH: ("/", 0),
    NQN: ("q", 1),  # "nqn."
}
MAX_LANDMARKS = 8  # a text holding more (a manifest's paths) is searched by the pattern at once


def _may_match(pattern: re.Pattern, text: str) -> bool:
    """Whether pattern.finditer(text) can find anything: False only when the pattern matches at none of the places
    its landmark puts a start, where every match of it starts."""
    char, offset = _LANDMARKS[pattern]
    position = text.find(char, offset)
    for _ in range(MAX_LANDMARKS):
        if position < 0:
            return False
        if pattern.match(text, position - offset):
            return True
        position = text.find(char, position + 1)
    return True


def json_pair_matches(text: str) -> tuple[list[re.Match], list[re.Match]]:
    """`JSON_STRING_PAIR.finditer(text)` and `JSON_NUMBER_PAIR.finditer(text)`, the same matches, in one pass: both
    start with a JSON_PAIR_START, and no pair starts inside one (its only quotes are its own two)."""
    strings, numbers = [], []
    strings_end = numbers_end = 0
    for start in (candidate.start() for candidate in JSON_PAIR_START.finditer(text)):
        if start >= strings_end and (pair := JSON_STRING_PAIR.match(text, start)):
            strings.append(pair)
            strings_end = pair.end()
        if start >= numbers_end and (pair := JSON_NUMBER_PAIR.match(text, start)):
            numbers.append(pair)
            numbers_end = pair.end()
    return strings, numbers


def identifiers_in_json(document) -> set[str]:
    """Identifiers a parsed document names by key, walked without recursion. lshw's machine node (`"class":
    "system"` with an `id`, also inside an array) is named by the host name. A string value is a text of its own:
    what its labelled lines and `uname -a` lines name counts too (a log or a command's output kept in a JSON string,
    its newlines escaped in the file, where no line pattern over the file's text sees a line start)."""
    return _walk(document)[0]


def identifiers_in_file(name: str, data: bytes, load: Callable[[bytes], object] | None = None) -> set[str]:
    """What a file names: identifiers_in_text of its text, and identifiers_in_json of its document when it is one
    JSON document.

    Of a text that is one JSON document, only the patterns that match inside a line run (its strings can hold an
    lspci dump, a by-id path or an address). A line of JSON starts with a JSON token (a string, a bracket, a number,
    true, false, null), never with a label or a kernel's name, so the line patterns cannot match; a `"key": value`
    pair is a key of the document, so the pair pattern runs only when the walk met a key that could start one. The
    same identifiers as identifiers_in_text, found in a third less time (tested on every shared sample). `load`: what
    orjson.loads(data) gives, from where the caller keeps it (a verified bundle's document, parsed once for every
    reader of the file)."""
    text = data.decode("utf-8", errors="replace")
    if len(data) > MAX_PARSED_BYTES or text.lstrip()[:1] not in ("{", "["):
        return identifiers_in_text(text)
    try:
        found, pair_keys = _walk_file(data, text, load)
    except (ValueError, RecursionError):
        # not one JSON document, or deeper than the parser goes: the text patterns find what it names
        return identifiers_in_text(text)
    found |= _inline_identifiers(text)
    return found | _pair_identifiers(text) if pair_keys else found


def has_long_integer(data: bytes) -> bool:
    """Whether `data` holds 20 ASCII digits in a row (an integer beyond 64 bits)."""
    return holds_digit_run(data, 20)


_UNREAD = object()


def _walk_file(data: bytes, text: str, load: Callable[[bytes], object] | None) -> tuple[set[str], bool]:
    """_walk of the file's document as orjson reads it (or `load` gives it), read again by the standard library only
    when an identifying key holds a float there: orjson reads an integer beyond 64 bits as a double, which would spell
    a long numeric serial wrongly, and a long integer anywhere else names nothing. The same identifiers as _walk of
    _loads, without searching every file for a long integer first."""
    document = _UNREAD
    if orjson is not None:
        with contextlib.suppress(orjson.JSONDecodeError):
            document = (load or orjson.loads)(data)
    if document is not _UNREAD:
        found, pair_keys, float_named = _walk(document)
        if not float_named:
            return found, pair_keys
    found, pair_keys, _ = _walk(json.loads(text))
    return found, pair_keys


def _loads(data: bytes, text: str, load: Callable[[bytes], object] | None = None):
    """orjson when it reads the document (strict, fast), else the standard library, which also reads NaN and the
    like, so a file only it can read is still walked for identifiers. orjson reads an integer beyond 64 bits as a
    double, which would spell a long numeric serial wrongly: such documents go to the standard library too."""
    if orjson is not None and not has_long_integer(data):
        with contextlib.suppress(orjson.JSONDecodeError):
            return (load or orjson.loads)(data)
    return json.loads(text)


def identifiers_in_chunks(chunks: Iterable[str], *, overlap: int = 4096) -> set[str]:
    """`identifiers_in_text` over a long text given in pieces (a large fio output), overlapping so none is cut."""
    found: set[str] = set()
    tail = ""
    for chunk in chunks:
        window = tail + chunk
        found |= identifiers_in_text(window)
        tail = window[-overlap:]
    return found


def needles(identifiers: Iterable[str]) -> list[str]:
    """The identifiers worth replacing everywhere, longest first, with their JSON-escaped spellings."""
    out: set[str] = set()
    for value in identifiers:
        value = value.strip()
        if not _usable(value):
            continue
        out.add(value)
        out.add(json.dumps(value, ensure_ascii=True)[1:-1])
        out.add(json.dumps(value, ensure_ascii=False)[1:-1])
    return sorted((n for n in out if _usable(n)), key=lambda n: (-len(n), n))


def _trie_pattern(words: list[str]) -> str:
    """A regex matching any of `words`, longest first, built from their prefix tree (depth <= MAX_TRIE_CHARS)."""
    trie: dict = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def follow(node: dict) -> str:
        branches = []
        for char in sorted(key for key in node if key):
            chain, child = re.escape(char), node[char]
            while len(child) == 1 and "" not in child:  # a run with no fork: one literal
                ((char, child),) = child.items()
                chain += re.escape(char)
            branches.append(chain + follow(child))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return follow(trie)


class Scrubber:
    """Removes a bundle's identifiers (and anything the patterns match) from any text of that bundle."""

    def __init__(self, identifiers: Iterable[str]):
        found = needles(identifiers)
        self.needle_count = len(found)
        # One pattern shaped as a trie, so each position costs one step per character whatever the number of
        # identifiers; the boundaries are checked in _needle, not as a lookbehind that would cost a test everywhere.
        # Matched case-insensitively: a host name "LabHost" is also removed from a path that spells it "labhost".
        self._exact = {n.lower() for n in found}
        short = sorted({n.lower() for n in found if len(n) <= MAX_TRIE_CHARS}, key=lambda n: (-len(n), n))
        self._long = [re.compile(re.escape(n), re.IGNORECASE) for n in found if len(n) > MAX_TRIE_CHARS]
        trie = _trie_pattern(short) if short else None
        self._needles = re.compile(trie, re.IGNORECASE) if trie else None
        # The same trie without IGNORECASE, for an ASCII text searched lowered (`_replace_needles`).
        self._ascii_needles = re.compile(trie) if trie and all(n.isascii() for n in short) else None

    def names(self, value: str) -> bool:
        """Whether `value` is, whole, one of the identifiers (a number is checked from 6 digits on)."""
        value = value.strip()
        return len(value) >= 6 and value.lower() in self._exact

    def text(self, text: str) -> str:
        for pattern in TEXT_PATTERNS:
            text = pattern.sub(lambda m: m.group(1) + SCRUBBED, text)
        text = JSON_STRING_PAIR.sub(_scrub_string_pair, text)
        text = JSON_NUMBER_PAIR.sub(_scrub_number_pair, text)
        text = BY_ID_PATH.sub(lambda m: m.group(1) + SCRUBBED, text)
        text = HOME_PATH.sub(lambda m: m.group(1) + SCRUBBED, text)
        text = NQN.sub(lambda m: m.group(1) + SCRUBBED, text)
        text = _replace_spans(text, address_spans(text))
        for long_needle in self._long:
            text = long_needle.sub(SCRUBBED, text)
        if self._needles is not None:
            text = self._replace_needles(text)
        return text

    def _replace_needles(self, text: str) -> str:
        """Every identifier standing alone replaced. An ASCII text with ASCII identifiers is searched lowered and
        case-sensitively: the same matches (ASCII case folding is lowering), in a quarter of the time of IGNORECASE,
        which the regex engine cannot scan for by a literal. Any other text, where IGNORECASE also folds characters
        such as the Kelvin sign or a long s onto ASCII letters, is searched as the pattern reads it."""
        if self._ascii_needles is None or not text.isascii():
            return self._needles.sub(_needle, text)
        lowered = text.lower()
        found = self._ascii_needles.finditer(lowered)
        return _replace_spans(text, [match.span() for match in found if _standalone(lowered, *match.span())])

    def chunks(self, pieces: Iterable[str]) -> Iterator[str]:
        """Scrub a long text given in pieces, cut only at line ends (in a line longer than a chunk, after a comma),
        so no pattern or identifier is split between two pieces."""
        pending = ""
        for piece in pieces:
            pending += piece
            if len(pending) < CHUNK_CHARS:
                continue
            # a line end, else (one-line JSON) the comma before a key, so no "key": "value" pair is cut in two
            cut = pending.rfind("\n") + 1 or pending.rfind(',"') + 1 or pending.rfind(",") + 1
            if cut == 0:
                continue
            yield self.text(pending[:cut])
            pending = pending[cut:]
        if pending:
            yield self.text(pending)


def _needle(match: re.Match) -> str:
    """An identifier standing alone (not the middle of a longer word or number) is replaced."""
    return SCRUBBED if _standalone(match.string, match.start(), match.end()) else match.group(0)


def _standalone(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is not the middle of a longer word or number (an ASCII letter or digit beside it)."""
    return not (alnum_at(text, start - 1) or alnum_at(text, end))


def _scrub_string_pair(match: re.Match) -> str:
    return f'{match.group(1)}"{SCRUBBED}"' if match.group(2).strip() else match.group(0)


def _scrub_number_pair(match: re.Match) -> str:
    return f'{match.group(1)}"{SCRUBBED}"'


def _replace_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    out, position = [], 0
    for start, end in sorted(spans):
        if end <= position:
            continue
        out.append(text[position : max(position, start)])
        out.append(SCRUBBED)
        position = end
    out.append(text[position:])
    return "".join(out)
