"""Raw files of a stored bundle, as the public may see them: serial numbers, unit identifiers and hostnames scrubbed.

The bundle is read as a stream (tar members in order), never extracted: the manifest comes first and lists every file
that may be served; nothing outside that list is ever opened.
"""

from __future__ import annotations

import json
import re
import tarfile
from dataclasses import dataclass

from django.core.files.storage import Storage, default_storage

SCRUBBED = "[scrubbed]"
MANIFEST_NAME = "manifest.json"
FILES_PREFIX = "files/"
MAX_MANIFEST_BYTES = 16 * 1024**2
MAX_SERVED_BYTES = 64 * 1024**2

# JSON keys (compared lowercased, without "_" "-" " ") whose values identify one unit or one machine.
IDENTIFYING_KEYS = frozenset(
    {
        "sn",
        "serial",
        "serialnumber",
        "serialno",
        "subnqn",
        "nguid",
        "eui64",
        "wwn",
        "uuid",
        "hostname",
        "nodename",
        "hostnqn",
        "hostid",
        "host",
    }
)
# Text lines: "<label> <separator> <value>" where the label names a serial number or a host.
TEXT_PATTERNS = (
    re.compile(r"(Device Serial Number\s+)(\S.*)"),  # lspci -vvv capability
    re.compile(r"(\[SN\] Serial number:\s*)(\S.*)", re.IGNORECASE),  # lspci VPD
    re.compile(
        r"^(\s*(?:Serial Number|Serial No\.?|serial|sn|subnqn|hostnqn|hostname|nodename)\s*[:=]\s*)(\S.*)$", re.I
    ),
)


# "key": "value" pairs in text that is not one JSON document (fio output with a prefix, concatenated documents)
JSONISH_PAIR = re.compile(r'("([A-Za-z_ -]{2,20})"\s*:\s*)"(?:[^"\\]|\\.)*"')


def _scrub_pair(match: re.Match) -> str:
    if _key(match.group(2)) in IDENTIFYING_KEYS:
        return f'{match.group(1)}"{SCRUBBED}"'
    return match.group(0)


@dataclass(frozen=True)
class RawFile:
    path: str
    size: int
    sha256: str


class RawFileNotFound(LookupError):
    pass


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).lower()


def scrub_json(document):
    """A copy of `document` with identifying values replaced, and the replaced strings (to scrub elsewhere)."""
    found: set[str] = set()

    def walk(node, *, root: bool = False):
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                identifying = _key(str(key)) in IDENTIFYING_KEYS
                # lshw's top node is the machine: its id is the hostname
                if root and key == "id" and node.get("class") == "system":
                    identifying = True
                if identifying and isinstance(value, (str, int)) and str(value).strip():
                    found.add(str(value).strip())
                    out[key] = SCRUBBED
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    cleaned = walk(document, root=True)
    # the same values inside other strings (a description naming the host): replaced there too, longest first
    needles = sorted((v for v in found if len(v) >= 4 and v != SCRUBBED), key=len, reverse=True)

    def replace_inside(node):
        if isinstance(node, dict):
            return {key: replace_inside(value) for key, value in node.items()}
        if isinstance(node, list):
            return [replace_inside(item) for item in node]
        if isinstance(node, str):
            for needle in needles:
                node = node.replace(needle, SCRUBBED)
        return node

    return replace_inside(cleaned) if needles else cleaned, found


def scrub_text(text: str) -> str:
    lines = []
    for line in text.splitlines(keepends=True):
        ending = line[len(line.rstrip("\r\n")) :]
        body = line[: len(line) - len(ending)]
        for pattern in TEXT_PATTERNS:
            body = pattern.sub(lambda m: m.group(1) + SCRUBBED, body)
        body = JSONISH_PAIR.sub(_scrub_pair, body)
        lines.append(body + ending)
    return "".join(lines)


def scrub(name: str, data: bytes) -> bytes:
    """The public form of raw file `name`: JSON scrubbed by key, anything else by line patterns."""
    text = data.decode("utf-8", errors="replace")
    if name.endswith(".json"):
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        if document is not None:
            cleaned, _ = scrub_json(document)
            return (json.dumps(cleaned, indent=2, ensure_ascii=False) + "\n").encode()
    return scrub_text(text).encode()


def _open_archive(storage: Storage, storage_name: str):
    handle = storage.open(storage_name, "rb")
    return handle, tarfile.open(fileobj=handle, mode="r|gz")


def bundle_files(*, storage_name: str, storage: Storage | None = None) -> list[RawFile]:
    """The files the bundle's manifest lists (read from its first member)."""
    manifest = _manifest(storage or default_storage, storage_name)
    return [RawFile(e["path"], int(e["size"]), e["sha256"]) for e in manifest.get("files", [])]


def _manifest(storage: Storage, storage_name: str) -> dict:
    handle, archive = _open_archive(storage, storage_name)
    with handle, archive:
        for member in archive:
            if member.name == MANIFEST_NAME and member.isfile() and member.size <= MAX_MANIFEST_BYTES:
                return json.loads(archive.extractfile(member).read())
            break
    raise RawFileNotFound("the bundle does not start with its manifest")


def read_scrubbed(*, storage_name: str, path: str, storage: Storage | None = None) -> bytes:
    """The scrubbed bytes of `path` (relative to files/), which must be listed in the bundle's manifest."""
    storage = storage or default_storage
    handle, archive = _open_archive(storage, storage_name)
    with handle, archive:
        listed: set[str] | None = None
        for member in archive:
            if listed is None:
                if member.name != MANIFEST_NAME or member.size > MAX_MANIFEST_BYTES:
                    raise RawFileNotFound("the bundle does not start with its manifest")
                manifest = json.loads(archive.extractfile(member).read())
                listed = {entry["path"] for entry in manifest.get("files", [])}
                if path not in listed:
                    raise RawFileNotFound(f"{path!r} is not listed in the bundle's manifest")
                continue
            if member.name == FILES_PREFIX + path and member.isfile():
                if member.size > MAX_SERVED_BYTES:
                    raise RawFileNotFound(f"{path!r} is too large to show here; download the bundle instead")
                return scrub(path, archive.extractfile(member).read())
    raise RawFileNotFound(f"{path!r} is not in the bundle")
