"""Where a text holds a network or unit address (analysis.privacy's address pass): UUIDs, MAC and EUI-64 addresses,
IPv4 and IPv6 addresses, not loopback, not a version number. Found from the rare places where two separators hold only
hex digits between them, so a 60 MB fio output takes one fast pass."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
MAC = re.compile(
    r"(?<![0-9A-Fa-f:-])(?:[0-9A-Fa-f]{2}([:-]))(?:[0-9A-Fa-f]{2}\1){4}(?:(?:[0-9A-Fa-f]{2}\1){2})?[0-9A-Fa-f]{2}"
    r"(?![0-9A-Fa-f:-])"
)
IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
IPV6 = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{1,4}|(?=::))(?::[0-9A-Fa-f]{0,4}){2,7}(?![0-9A-Fa-f])")
# Every address above holds two separators with only hex digits between them: finding those first (they are rare in
# fio's numbers) and looking at the run of address characters around each keeps a 60 MB output to one fast pass.
ADDRESS_SEED = re.compile(r"[:.\-][0-9A-Fa-f]*[:.\-]")
ADDRESS_RUN = re.compile(r"[0-9A-Fa-f:.\-]*")
ADDRESS_CHARACTERS = "0123456789ABCDEFabcdef:.-"  # what ADDRESS_RUN matches
VERSION_KEY_BEFORE = re.compile(r'"[A-Za-z_ -]*(?:firmware|version|revision|fw)"\s*:\s*"\Z', re.IGNORECASE)


def _version_before(text: str, position: int) -> bool:
    """A dotted quad that is the value of a version key (lshw's `"firmware" : "18.168.6.1"`), not an address."""
    return bool(VERSION_KEY_BEFORE.search(text, max(0, position - 40), position))


def _is_ipv4(text: str) -> bool:
    try:
        address = ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified)


def _is_ipv6(text: str) -> bool:
    try:
        address = ipaddress.IPv6Address(text.split("%", 1)[0])
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified)


# each ASCII character as its class for ADDRESS_SEED: ":" a separator (":" "." "-"), "h" a hex digit, " " the rest
_ADDRESS_CLASSES = bytes(
    ord(":") if chr(i) in ":.-" else ord("h") if chr(i) in "0123456789abcdefABCDEF" else ord(" ") for i in range(256)
)
_ADDRESS_SEED_IN_CLASSES = re.compile(rb":h*:")


def address_seeds(text: str) -> Iterator[int]:
    """Where ADDRESS_SEED.finditer(text) finds its matches. An ASCII text is searched as its characters' classes,
    where the pattern starts with a literal: the engine then jumps from separator to separator instead of testing a
    character class at every position (about 6× faster on fio's output). Same length, so the same positions."""
    if text.isascii():
        classes = text.encode("ascii").translate(_ADDRESS_CLASSES)
        return (match.start() for match in _ADDRESS_SEED_IN_CLASSES.finditer(classes))
    return (match.start() for match in ADDRESS_SEED.finditer(text))


def run_start(text: str, seed: int) -> int:
    """Where the run of address characters that ends at `seed` starts, looking back at most 64 characters: the
    window without its trailing run, measured in C (a pattern anchored at the seed would try every start in it)."""
    window = text[max(0, seed - 64) : seed]
    return seed - (len(window) - len(window.rstrip(ADDRESS_CHARACTERS)))


def address_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds a UUID, a MAC or EUI-64, or an IPv4/IPv6 address (not loopback, not a version number)."""
    spans: list[tuple[int, int]] = []
    covered = 0
    for seed in address_seeds(text):
        if seed < covered:
            continue
        begin = run_start(text, seed)
        end = ADDRESS_RUN.match(text, seed).end()
        covered = end
        for pattern, start, stop in _run_addresses(text[begin:end]):
            start, stop = begin + start, begin + stop
            if pattern is IPV4 and _version_before(text, start):
                continue
            if alnum_at(text, start - 1) or alnum_at(text, stop):
                continue  # part of a longer word: "std::vector" holds "d::ec"
            spans.append((start, stop))
    return spans


_RUN_ADDRESSES: dict[str, tuple] = {}  # a bundle's runs recur: its timestamps' dates and times, fio's version
MAX_CACHED_RUN = 64  # longer runs (rare, and unbounded in a hostile file) are not kept


def _run_addresses(run: str) -> tuple[tuple[re.Pattern, int, int], ...]:
    """The addresses the patterns find in a run of address characters, by where they are in it: what the run alone
    decides, remembered for up to 10,000 short runs (the text around a run decides the rest, in address_spans)."""
    found = _RUN_ADDRESSES.get(run)
    if found is not None:
        return found
    addresses = []
    for pattern in (UUID, MAC, IPV4, IPV6):
        for match in pattern.finditer(run):
            start, stop = match.span()
            if pattern is IPV6 and run[stop - 1] == ":" and run[stop - 2] != ":":
                stop -= 1  # "fe80::1: link up"
            if pattern is IPV4 and not _is_ipv4(run[start:stop]):
                continue
            if pattern is IPV6 and not _is_ipv6(run[start:stop]):
                continue
            addresses.append((pattern, start, stop))
    found = tuple(addresses)
    if len(run) <= MAX_CACHED_RUN and len(_RUN_ADDRESSES) < 10_000:
        _RUN_ADDRESSES[run] = found
    return found


def alnum_at(text: str, index: int) -> bool:
    """Whether text[index] is an ASCII letter or digit (False outside the text): what makes a match part of a longer
    word or number."""
    return 0 <= index < len(text) and text[index].isascii() and text[index].isalnum()
