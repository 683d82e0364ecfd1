"""The faster ways analysis.privacy gathers identifiers find exactly what the plain ways find, on every real sample.

Each fast path is held to the straightforward form it replaced: `pattern.finditer(text)` for the line patterns, one
finditer per pattern for the JSON pairs, `re.search(rb"\\d{20}", data)` for the long-integer test, and the walk below
(the walk as it was, one isinstance test after another on every value) for parsed documents."""

from __future__ import annotations

import contextlib
import json
import random
import re

import pytest

from analysis import privacy, privacy_addresses, privacy_walk


def reference_string_lines(value: str) -> set[str]:
    found: set[str] = set()
    for pattern in (privacy.TEXT_PATTERNS[2], privacy.TEXT_PATTERNS[3]):  # the line patterns, by plain finditer
        found.update(match.group(2).strip() for match in pattern.finditer(value))
    return found


def reference_identifiers_in_json(document) -> set[str]:
    found: set[str] = set()
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("class") == "system" and isinstance(node.get("id"), str):
                found.add(node["id"])
            if "".join(node).isdigit():
                stack.extend(value for value in node.values() if isinstance(value, (dict, list)))
                for value in node.values():
                    if isinstance(value, str):
                        found |= reference_string_lines(value)
                continue
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    stack.append(value)
                    continue
                if isinstance(value, (str, int)) and not isinstance(value, bool) and privacy._identifying_key(key):
                    found.add(str(value).strip())
                if isinstance(value, str):
                    found |= reference_string_lines(value)
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, (dict, list)))
            for item in node:
                if isinstance(item, str):
                    found |= reference_string_lines(item)
    return found


@pytest.fixture(scope="module")
def sample_files(shared_samples):
    files = [(path, path.read_bytes()) for path in sorted(shared_samples.rglob("*")) if path.is_file()]
    assert len(files) > 1000  # fio json+ outputs, job files, nvme-cli, lspci and lshw outputs of real machines
    return files


def test_line_patterns_find_the_same_matches_as_finditer(sample_files):
    matched = 0
    for path, data in sample_files:
        text = data.decode("utf-8", errors="replace")
        for pattern in privacy.TEXT_PATTERNS:
            plain = [match.groups() for match in pattern.finditer(text)]
            fast = [match.groups() for match in privacy.text_pattern_matches(pattern, text)]
            assert fast == plain, (path, pattern.pattern[:40])
            matched += len(plain)
    assert matched > 10  # the samples do name serials, host names and kernels


@pytest.mark.parametrize(
    "text",
    [
        "serial: A1\nhostname = box-7\n  sn:X99\nLinux host-1 5.10.0 #1 SMP",
        "\nLinux host-2 6.1.0\nSerial Number: S1\n",
        "Linux host-3 6.1.0 x86_64",
        '{\n  "sn" : "S2"\n}\nFreeBSD bsd-1 13.2-RELEASE\r\nDarwin mac-1 22.1.0',
        "no label here\n\n\n",
        "",
    ],
)
def test_line_patterns_agree_at_the_edges_of_a_text(text):
    for pattern in privacy.TEXT_PATTERNS:
        plain = [match.groups() for match in pattern.finditer(text)]
        assert [match.groups() for match in privacy.text_pattern_matches(pattern, text)] == plain


def json_pairs_one_pass_each(text: str) -> tuple[list, list]:
    return tuple(
        [(match.span(), match.groups()) for match in pattern.finditer(text)]
        for pattern in (privacy.JSON_STRING_PAIR, privacy.JSON_NUMBER_PAIR)
    )


def test_json_pairs_are_the_matches_of_one_pass_per_pattern(sample_files):
    paired = 0
    for path, data in sample_files:
        text = data.decode("utf-8", errors="replace")
        strings, numbers = privacy.json_pair_matches(text)
        fast = ([(m.span(), m.groups()) for m in strings], [(m.span(), m.groups()) for m in numbers])
        assert fast == json_pairs_one_pass_each(text), path
        paired += len(strings) + len(numbers)
    assert paired > 10


@pytest.mark.parametrize(
    "text",
    [
        '{"serial": "sn": 12345678, "hostname": "h1"}',  # a number pair inside what reads as a string pair
        '"serial": "abc "sn": 12345678"',
        '"Serial_Number" :  "S1"  "SN":123456789012 "sn": "x\\"y"',
        '"sn":"1234","sn":5678',
        "",
    ],
)
def test_json_pairs_agree_where_the_pairs_overlap(text):
    strings, numbers = privacy.json_pair_matches(text)
    fast = ([(m.span(), m.groups()) for m in strings], [(m.span(), m.groups()) for m in numbers])
    assert fast == json_pairs_one_pass_each(text)


def test_the_long_integer_test_agrees_with_the_regular_expression(sample_files):
    long_integer = re.compile(rb"\d{20}")
    for path, data in sample_files:
        assert privacy.has_long_integer(data) == bool(long_integer.search(data)), path
    for data in (b"1" * 19, b"1" * 20, b"x" + b"9" * 20 + b"x", b"0" * 19 + b".0", "١".encode() * 30):
        assert privacy.has_long_integer(data) == bool(long_integer.search(data)), data


def test_the_walk_finds_what_the_plain_walk_finds(sample_files):
    walked = 0
    for path, data in sample_files:
        with contextlib.suppress(ValueError, RecursionError, UnicodeDecodeError):
            document = json.loads(data)
            assert privacy.identifiers_in_json(document) == reference_identifiers_in_json(document), path
            walked += 1
    assert walked > 1000
    hostile = {"a": [{"serial": True}, {"Serial-Number": 12345678}, {" sn": "x1"}], "1": {"2": [{"uuid": "u-1"}]}}
    assert privacy.identifiers_in_json(hostile) == reference_identifiers_in_json(hostile) == {"12345678", "x1", "u-1"}
    in_strings = {
        "log": "started\nSerial Number: SN-LOG-1\n",
        "uname": "Linux host-in-a-string 6.1.0-18-amd64 #1 SMP",
        "lines": ["x", 1, "hostname=host-in-a-list", {"k": ["nodename: n-deep"]}],
        "7": {"1": "machine-id: m-in-bins", "2": 5},
    }
    expected = {"SN-LOG-1", "host-in-a-string", "host-in-a-list", "n-deep", "m-in-bins"}
    assert privacy.identifiers_in_json(in_strings) == reference_identifiers_in_json(in_strings) == expected


def test_a_dict_of_keys_seen_plain_is_still_walked_for_what_its_values_name():
    class Label(str):  # not a parser's own type: the walk falls back to subclass tests
        pass

    plain = {"job options": {"rw": "randread", "bs": "4k"}, "values": [1, 2.5, None, True]}
    assert privacy.identifiers_in_json(plain) == set()  # its keys are now known to name nothing
    assert {"job options", "rw", "bs", "values"} <= privacy._PLAIN_KEYS
    later = {
        "job options": {"rw": "hostname=host-in-options", "bs": {"serial": "SN-NESTED-1"}},
        "values": [1, Label("Serial Number: SN-LABEL-2"), [{"uuid": "u-deep-3"}]],
        "rw": 7,
    }
    expected = {"host-in-options", "SN-NESTED-1", "SN-LABEL-2", "u-deep-3"}
    assert privacy.identifiers_in_json(later) == reference_identifiers_in_json(later) == expected
    assert "serial" not in privacy._PLAIN_KEYS and "uuid" not in privacy._PLAIN_KEYS
    # a plain key beside an identifying one: the dict is walked key by key
    mixed = {"rw": "x", "Serial-Number": 42}
    assert privacy.identifiers_in_json(mixed) == {"42"}


def test_address_seeds_are_where_the_seed_pattern_matches(sample_files):
    seeds = 0
    for path, data in sample_files:
        text = data.decode("utf-8", errors="replace")
        plain = [match.start() for match in privacy.ADDRESS_SEED.finditer(text)]
        assert list(privacy.address_seeds(text)) == plain, path
        seeds += len(plain)
    assert seeds > 1000  # times, versions, addresses and fio's own dotted numbers


@pytest.mark.parametrize(
    "text",
    [
        "fe80::1%eth0 00:1b:63:84:45:e6 10.0.0.1 1.2.3",
        "::--..:: -a- .F. :g: 9.9",
        "ünïcode 10.0.0.1 then fe80::2",  # not ASCII: the pattern itself
        ":",
        "",
    ],
)
def test_address_seeds_agree_at_the_edges_of_a_text(text):
    assert list(privacy.address_seeds(text)) == [match.start() for match in privacy.ADDRESS_SEED.finditer(text)]


def test_address_seeds_agree_on_random_texts_of_separators_and_hex_digits():
    import random

    rng = random.Random(20261126)
    alphabet = ":.-0123456789abcdefABCDEFgxyz \n\"'"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert list(privacy.address_seeds(text)) == [m.start() for m in privacy.ADDRESS_SEED.finditer(text)], text


# the run of address characters before a seed as address_spans first found it: a pattern anchored at the seed
RUN_BEFORE = re.compile(r"[0-9A-Fa-f:.\-]*\Z")


def anchored_run_start(text: str, seed: int) -> int:
    return RUN_BEFORE.search(text, max(0, seed - 64), seed).start()


EDGE_TEXTS = [
    "x" * 70 + "0" * 80 + ":1:2",  # a run longer than the 64 characters looked back over
    "00:1b:63:84:45:e6 at the start",
    "id " + "a" * 63 + "-" + "e1c0b7d2-8d6f-4c57-9d0e-3f4b1a2c5d6e",
    "ünïcode fe80::2 10.0.0.1",
    ":",
]


def test_an_address_run_starts_where_the_anchored_pattern_starts_it(sample_files):
    seeds = 0
    for text in [data.decode("utf-8", errors="replace") for _, data in sample_files] + EDGE_TEXTS:
        for seed in privacy.address_seeds(text):
            assert privacy_addresses.run_start(text, seed) == anchored_run_start(text, seed), text[:80]
            seeds += 1
    assert seeds > 1000


def test_address_spans_are_those_found_with_the_anchored_pattern(sample_files, monkeypatch):
    texts = [data.decode("utf-8", errors="replace") for _, data in sample_files] + EDGE_TEXTS
    found = [privacy_addresses.address_spans(text) for text in texts]
    monkeypatch.setattr(privacy_addresses, "run_start", anchored_run_start)
    assert found == [privacy_addresses.address_spans(text) for text in texts]
    assert sum(map(len, found)) > 30  # the samples' UUIDs, MACs and addresses, and the edge texts'


def test_the_walk_agrees_on_numbers_strings_and_keys_of_every_kind():
    """Strings' lines are read joined, long runs of values are added up first, a histogram's keys are tested as
    bytes: each held to the plain walk where it could go wrong."""
    bins = {str(1000 + i): i for i in range(40)}
    documents = [
        {"a": [1, "Serial Number: SN-MIXED-1", 2.5] * 12, "b": dict(bins, note="hostname=h-mixed")},
        {"lines": ["Serial Number", ": SN-SPLIT", "Linux", "host-split 6.1.0", "x\nnodename: n-escaped\ny"]},
        {"bins": dict(bins, **{"41": {"deep": [[0] * 40, {"serial": 12345678, "wwn": 1.5}]}})},
        {
            "\u0661\u0662": 3,
            "\u017ferial": "LONG-S",
            "s\u00e9rial": "ACCENT",
            "k\u212a": 1,
            "class": "system",
            "id": "m-1",
        },
        [None] * 40 + ["hostname: h-after-nulls", {"sn": "SN-AFTER-NULLS"}],
        [10**400, 1.5] * 20 + [{"machine-id": "m-after-overflow"}],
        [True, False, 0, -1.5] * 10 + [[{"uuid": "u-after-bools"}]],
        {str(i): f"Serial Number: SN-IN-BINS-{i}" for i in range(40)},
        {"x" * 3: list(range(50)), "sn": 7, "host": 10**30},
        "Serial Number: SN-AT-THE-ROOT",
    ]
    for document in documents:
        assert privacy.identifiers_in_json(document) == reference_identifiers_in_json(document), document
    found = set().union(*map(privacy.identifiers_in_json, documents))
    assert {"SN-MIXED-1", "h-mixed", "n-escaped", "12345678", "SN-AFTER-NULLS", "m-after-overflow"} <= found
    assert {"u-after-bools", "SN-IN-BINS-39", "m-1", "h-after-nulls"} <= found
    assert not {"SN-SPLIT", "host-split", "SN-AT-THE-ROOT"} & found  # no line across two strings; a root names none
    for text in ("", "0", "123", "١٢٣", "12a", "1 2", "²"):
        assert privacy_walk._digits(text) == text.isdigit(), text


def reference_inline_identifiers(text: str) -> set[str]:
    """_inline_identifiers as it was: every in-line pattern and the address pass over the whole text."""
    found: set[str] = set()
    for pattern in privacy.INLINE_PATTERNS:
        found.update(match.group(2).strip() for match in pattern.finditer(text))
    for match in privacy.BY_ID_PATH.finditer(text):
        found |= privacy._by_id_identifiers(match.group(2))
    found.update(match.group(2) for match in privacy.HOME_PATH.finditer(text))
    for match in privacy.NQN.finditer(text):
        found.add(match.group(2))
        if match.group(1).endswith("nvmexpress:") and re.fullmatch(r"[0-9a-fA-F]{8}\S+", match.group(2)):
            found.add(match.group(2)[8:])
    found.update(text[start:end] for start, end in privacy_addresses.address_spans(text))
    return found


INLINE_EDGES = [
    "nqn.2014-08.org.nvmexpress:uuid:1234 at the start",
    "q nqn.2014-08.org.nvmexpress:144d144dS1234567 Model",
    "/a" * 20 + " /dev/disk/by-id/nvme-Model_SER-AFTER-MANY-SLASHES",
    "/x/y/z/w /home/alice-after-slashes",
    "[a] [b] [sn] serial number: VPD-LOWER",
    "D" * 30 + "Device Serial Number 11-22-33-44-55-66-77-88",
    "ünïcode [SN] Serial number: VPD-ÜNÏ /Users/bob",
    "no landmark at all",
    "",
]


def test_the_in_line_patterns_run_wherever_they_can_match(sample_files):
    """_inline_identifiers runs a pattern only where its landmark character is followed by a match."""
    found = 0
    for text in [data.decode("utf-8", errors="replace") for _, data in sample_files] + INLINE_EDGES:
        expected = reference_inline_identifiers(text)
        assert privacy._inline_identifiers(text) == expected, text[:80]
        found += len(expected)
    assert found > 30
    names = set().union(*map(privacy._inline_identifiers, INLINE_EDGES))
    assert {"SER-AFTER-MANY-SLASHES", "alice-after-slashes", "VPD-LOWER", "11-22-33-44-55-66-77-88", "bob"} <= names


def reference_address_spans(text: str) -> list[tuple[int, int]]:
    """address_spans as it was: every run's patterns tried again, nothing remembered."""
    spans, covered = [], 0
    for seed in privacy.address_seeds(text):
        if seed < covered:
            continue
        begin, end = anchored_run_start(text, seed), privacy_addresses.ADDRESS_RUN.match(text, seed).end()
        covered, run = end, text[begin:end]
        for pattern in (privacy.UUID, privacy.MAC, privacy.IPV4, privacy.IPV6):
            for found in pattern.finditer(run):
                start, stop = begin + found.start(), begin + found.end()
                if pattern is privacy.IPV6 and text[stop - 1] == ":" and text[stop - 2] != ":":
                    stop -= 1
                value = text[start:stop]
                if pattern is privacy.IPV4 and (
                    not privacy_addresses._is_ipv4(value) or privacy_addresses._version_before(text, start)
                ):
                    continue
                if pattern is privacy.IPV6 and not privacy_addresses._is_ipv6(value):
                    continue
                if privacy.alnum_at(text, start - 1) or privacy.alnum_at(text, stop):
                    continue
                spans.append((start, stop))
    return spans


def test_a_remembered_run_is_placed_by_its_own_context(sample_files):
    """The same run in other surroundings: a version key before it, a letter beside it, a longer run."""
    texts = [data.decode("utf-8", errors="replace") for _, data in sample_files] + EDGE_TEXTS
    texts += [
        '"ip": "10.1.2.3" "firmware": "10.1.2.3" x10.1.2.3 10.1.2.3y (10.1.2.3)',
        "fe80::1: up, fe80::1:, afe80::1 " + "fe80::1:" * 12,
        "00:1b:63:84:45:e6 g00:1b:63:84:45:e6 00:1b:63:84:45:e6:77",
    ]
    for _ in range(2):  # the second time, every short run is remembered
        assert [privacy_addresses.address_spans(text) for text in texts] == list(map(reference_address_spans, texts))
    assert len(privacy_addresses.address_spans(texts[-3])) == 2  # "ip" and "(...)": not the version, not a word


def reference_identifiers_in_file(data: bytes) -> set[str]:
    """identifiers_in_file as it was: every text pattern on the whole text, and the walk of its document if it is
    one."""
    text = data.decode("utf-8", errors="replace")
    found = privacy.identifiers_in_text(text)
    if len(data) <= privacy.MAX_PARSED_BYTES and text.lstrip()[:1] in ("{", "["):
        with contextlib.suppress(ValueError, RecursionError):
            found |= privacy.identifiers_in_json(privacy._loads(data, text))
    return found


# JSON documents that try each pattern the file path skips or keeps: labelled lines and uname lines inside strings
# (escaped newlines), a key repeated (the walk sees its last value only), keys the pair pattern matches in other
# spellings, a key that is not ASCII (ſ is an "s" to the pattern's case-insensitive match), NaN (only the standard
# library reads it), a number beyond 64 bits, an lspci dump, a by-id path and addresses inside strings
HOSTILE_DOCUMENTS = [
    b'{"note": "x\\nSerial Number: SN-IN-A-STRING\\nLinux host-a 6.1.0 #1"}',
    b'{"serial": "FIRST-SERIAL", "serial": "LAST-SERIAL"}',
    b'{"Serial_Number": "S-1", "host-name": "h-2", "S e r i a l": "S-3"}',
    '{"ſerial": "LONG-S-SERIAL", "K": 1}'.encode(),
    b'{"serial": NaN, "sn": "NAN-DOC-SN"}',
    b'{"serial": 123456789012345678901234567890}',
    b'{"jobs": [{"io_bytes": 123456789012345678901234}], "dev": {"wwn": 98765432109876543210987}, "host": 1.5}',
    b'{"ticks": 99999999999999999999999, "sn": "SHORT-SN"}',
    b'{"lspci": "Device Serial Number 11-22-33-44-55-66-77-88", "dev": "/dev/disk/by-id/nvme-Model_X_SER123"}',
    b'[{"addr": "fe80::1 and 192.168.10.20 and 00:11:22:33:44:55"}, "nqn.2014-08.org.nvmexpress:uuid:1234"]',
    b'{\n  "a": [\n    null,\n    true\n  ],\n  "hostname": "box-1"\n}\n',
    b'{"a": 1}\nSerial Number: AFTER-THE-DOCUMENT\n',
    b'  \n{"nodename": "n-1"}',
    b'{"home": "/home/alice/fio", "Users": "/Users/bob/x"}',
    # a quote inside a key: the text's `"serial": ` pair starts at it (twice: a key seen before is no plain key)
    b'{"x\\"serial": "QUOTED-KEY-SN"}',
    b'{"x\\"serial": "QUOTED-KEY-SN-2"}',
]


def test_a_files_identifiers_are_what_every_pattern_and_the_walk_find(sample_files):
    for path, data in sample_files:
        assert privacy.identifiers_in_file(path.name, data) == reference_identifiers_in_file(data), path
    for data in HOSTILE_DOCUMENTS:
        assert privacy.identifiers_in_file("x.json", data) == reference_identifiers_in_file(data), data
    assert {
        "FIRST-SERIAL",
        "LAST-SERIAL",
        "S-1",
        "h-2",
        "S-3",
        "NAN-DOC-SN",
        "box-1",
        "n-1",
        "QUOTED-KEY-SN-2",
    } <= set().union(*(privacy.identifiers_in_file("x.json", data) for data in HOSTILE_DOCUMENTS))


def test_a_document_read_by_orjson_is_read_again_only_to_spell_a_long_number_an_identifying_key_holds(sample_files):
    """orjson reads an integer beyond 64 bits as a double: the file path reads the document with it (or takes the
    bundle's parse, `load`) and reads it again with the standard library only when an identifying key holds a float,
    so a long numeric serial is spelled digit for digit either way."""
    orjson = pytest.importorskip("orjson")
    for path, data in sample_files:
        assert privacy.identifiers_in_file(path.name, data, orjson.loads) == reference_identifiers_in_file(data), path
    for data in HOSTILE_DOCUMENTS:
        with contextlib.suppress(orjson.JSONDecodeError):
            orjson.loads(data)
            assert privacy.identifiers_in_file("x.json", data, orjson.loads) == reference_identifiers_in_file(data)
    nested = next(data for data in HOSTILE_DOCUMENTS if b'"wwn"' in data)
    found = privacy.identifiers_in_file("x.json", nested, orjson.loads)
    assert "98765432109876543210987" in found and "123456789012345678901234" not in found


def test_a_key_the_pair_pattern_starts_at_is_one_the_walk_calls_identifying():
    """The file path runs the pair pattern only when the walk met an identifying or non-ASCII key: any ASCII key the
    pattern can start at must be identifying."""
    rng = random.Random(5)
    separators = ["", "", "", "_", "-", " "]
    for _ in range(20_000):
        name = rng.choice(sorted(privacy.IDENTIFYING_KEYS))
        key = "".join(rng.choice((c.lower(), c.upper())) + rng.choice(separators) for c in name)
        key = rng.choice(("", "x", "_", " ")) + key + rng.choice(("", "", "x", "_"))
        if privacy.JSON_PAIR_START.match(f'"{key}": "v"'):
            assert privacy._identifying_key(key), key
    for key in ("s_e_r_i_a_l", "SERIAL", "Host-Name", "sn", "serial_number"):
        assert privacy.JSON_PAIR_START.match(f'"{key}":') and privacy._identifying_key(key), key


def test_every_text_pattern_is_either_a_line_or_an_in_line_pattern():
    """identifiers_in_text runs the two groups; a pattern added to TEXT_PATTERNS alone would never run."""
    assert set(privacy.LINE_PATTERNS) | set(privacy.INLINE_PATTERNS) == set(privacy.TEXT_PATTERNS)
    assert not set(privacy.LINE_PATTERNS) & set(privacy.INLINE_PATTERNS)
    assert set(privacy.LINE_PATTERNS) == set(privacy.LINE_PATTERNS_AFTER_NEWLINE)


def reference_replaced_needles(scrubber: privacy.Scrubber, text: str) -> str:
    """The identifiers replaced as the pattern reads them: case-insensitively, on the text as it is."""
    return scrubber._needles.sub(privacy._needle, text)


def test_the_lowered_search_replaces_what_the_case_insensitive_one_replaces(sample_files):
    """An ASCII text is searched lowered and case-sensitively; identifiers taken from each sample itself, in mixed
    case, some inside longer words (left as they are), must be replaced exactly where the case-insensitive search
    replaces them."""
    rng = random.Random(27)
    replaced = 0
    for path, data in sample_files:
        text = data.decode("utf-8", errors="replace")
        if len(data) > 2_000_000 or len(text) < 40 or not text.isascii():
            continue
        picks = []
        for _ in range(6):
            start = rng.randrange(len(text) - 30)
            piece = text[start : start + rng.randint(6, 24)].strip()
            picks.append("".join(rng.choice((c.lower(), c.upper())) for c in piece))
        scrubber = privacy.Scrubber(picks)
        if scrubber._ascii_needles is None:
            continue
        expected = reference_replaced_needles(scrubber, text)
        assert scrubber._replace_needles(text) == expected, path
        replaced += expected.count(privacy.SCRUBBED) - text.count(privacy.SCRUBBED)
    assert replaced > 1000  # the comparison met identifiers, standing alone and not


def test_the_lowered_search_agrees_on_random_texts():
    rng = random.Random(1126)
    alphabet = "abcABC019 _-./:\n\"'"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        words = ["".join(rng.choice("abcABC019-_") for _ in range(rng.randint(6, 9))) for _ in range(rng.randint(1, 4))]
        scrubber = privacy.Scrubber(words)
        if scrubber._needles is None:
            continue
        assert scrubber._replace_needles(text) == reference_replaced_needles(scrubber, text), (words, text)


def test_a_text_that_is_not_ascii_is_searched_case_insensitively():
    """IGNORECASE folds a long s and the Kelvin sign onto ASCII letters: a lowered copy would keep them."""
    scrubber = privacy.Scrubber(["labhost01", "kitchen-box"])
    text = "host labhoſt01 and LabHost01, \u212aitchen-box and kitchen-boxes"
    assert scrubber.text(text) == (
        f"host {privacy.SCRUBBED} and {privacy.SCRUBBED}, {privacy.SCRUBBED} and kitchen-boxes"
    )
