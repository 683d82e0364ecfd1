"""The faster ways analysis.privacy gathers identifiers find exactly what the plain ways find, on every real sample.

Each fast path is held to the straightforward form it replaced: `pattern.finditer(text)` for the line patterns, one
finditer per pattern for the JSON pairs, `re.search(rb"\\d{20}", data)` for the long-integer test, and the walk below
(the walk as it was, one isinstance test after another on every value) for parsed documents."""

from __future__ import annotations

import contextlib
import json
import re

import pytest

from analysis import privacy


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
                continue
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    stack.append(value)
                elif isinstance(value, (str, int)) and not isinstance(value, bool) and privacy._identifying_key(key):
                    found.add(str(value).strip())
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, (dict, list)))
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
