"""JSON files: parsed, the keys the allow-list names kept at each level, written again."""

from __future__ import annotations

import contextlib
import json
import re

from analysis import privacy
from analysis.raw_allow.kinds import FIO_OUTPUT, KINDS
from analysis.raw_allow.specs import (
    BARE_NAME,
    DEVICE,
    FIO_OPTION_NAMES,
    JSON_SPECS,
    KERNEL_DEVICE,
    LSHW_FIELDS,
    LSHW_NODE,
    MISSING,
    NB,
    NUMERIC_KEY,
    OPTIONS,
    PATH_OPTIONS,
    SS,
    STATS,
    TOKEN,
    N,
    R,
    S,
)
from nvmedb_client.fio_output import parse_fio_output

SCRUBBED = privacy.SCRUBBED

# --- JSON: parse, keep what the spec allows, write again -----------------------------------------------------------


class _Filter:
    def __init__(self, scrubber: privacy.Scrubber):
        self.scrubber = scrubber
        self._keys: dict[str, str | None] = {}  # a json+ output repeats the same few thousand keys in every job

    def string(self, value: str) -> str:
        return self.scrubber.text(value)

    def scalar(self, value, *, numbers_only: bool = False):
        """The value as served, or `_DROP`."""
        if value is None or isinstance(value, bool):
            return value
        if type(value) is int and value >= 100_000:  # a serial number written as a number
            return SCRUBBED if self.scrubber.names(str(value)) else value
        if isinstance(value, (int, float)):
            return value
        if isinstance(value, str) and not numbers_only:
            return self.string(value)
        return _DROP

    def key(self, key: str) -> str | None:
        """A key taken by a "*" spec: a plain token that names no identifier."""
        try:
            return self._keys[key]
        except KeyError:
            pass
        kept = key if TOKEN.match(key) and (NUMERIC_KEY.match(key) or self.string(key) == key) else None
        if len(self._keys) < 100_000:
            self._keys[key] = kept
        return kept

    def device(self, value):
        if isinstance(value, list):
            return [d for d in (self.device(v) for v in value) if d is not _DROP]
        if not isinstance(value, str):
            return self.scalar(value)
        return device_name(value, self.scrubber)

    def apply(self, spec, value):
        if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("missing"), str):
            return {"missing": self.string(value["missing"])}  # a fact that could not be had, wherever it stands
        if isinstance(spec, dict):
            if not isinstance(value, dict):
                return _DROP
            out = {}
            for key, item in value.items():
                sub = spec.get(key, MISSING if key == "missing" else None)
                if sub is None and "*" in spec:
                    if self.key(str(key)) is None:
                        continue
                    sub = spec["*"]
                if sub is None:
                    continue
                kept = self.apply(sub, item)
                if kept is not _DROP:
                    out[key] = kept
            return out
        if isinstance(spec, list):
            if not isinstance(value, list):
                return _DROP
            return [kept for kept in (self.apply(spec[0], item) for item in value) if kept is not _DROP]
        if spec == S:
            return self.scalar(value)
        if spec == N:
            return self.scalar(value, numbers_only=True)
        if spec == R:
            return SCRUBBED if value not in (None, "", [], {}) else value
        if spec == SS:
            if isinstance(value, list):
                return [kept for kept in (self.scalar(item) for item in value) if kept is not _DROP]
            return self.scalar(value)
        if spec == STATS:
            return self.stats(value)
        if spec == NB:
            return self.stats(value) if isinstance(value, dict) else self.scalar(value)
        if spec == OPTIONS:
            if not isinstance(value, dict):
                return _DROP
            out = {}
            for name, option in value.items():
                kept = fio_option(str(name), option, self.scrubber) if isinstance(option, (str, int, float)) else None
                if kept is not None:
                    out[name] = kept
            return out
        if spec == DEVICE:
            return self.device(value)
        if spec == MISSING:
            if isinstance(value, dict):
                return self.apply({"*": S}, value)
            return self.scalar(value)
        if spec == LSHW_NODE:
            return self.lshw(value)
        raise ValueError(f"unknown spec {spec!r}")

    def stats(self, value):
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if self.key(str(key)) is None:
                    continue
                kept = self.stats(item)
                if kept is not _DROP:
                    out[key] = kept
            return out
        if isinstance(value, list):
            return [kept for kept in (self.stats(item) for item in value) if kept is not _DROP]
        return self.scalar(value, numbers_only=True)

    def lshw(self, node):
        if isinstance(node, list):
            return [kept for kept in (self.lshw(item) for item in node) if kept is not _DROP]
        if not isinstance(node, dict):
            return _DROP
        out = self.apply(LSHW_FIELDS, node)
        if "id" in node:  # the machine node is named after the host; any other id names a part ("disk", "cpu:0")
            identifier = SCRUBBED if node.get("class") == "system" else self.scalar(node["id"])
            if identifier is not _DROP:
                out = {"id": identifier, **out}
        if isinstance(node.get("children"), list):
            out["children"] = self.lshw(node["children"])
        return out


class _Drop:
    def __repr__(self) -> str:
        return "<dropped>"


_DROP = _Drop()


def device_name(value: str, scrubber: privacy.Scrubber) -> str:
    """A device or file name as served: a kernel device name (`/dev/nvme0n1`) or a bare file name, scrubbed; a by-id
    path as `/dev/disk/by-id/[scrubbed]`; any other path (it names a directory of somebody's machine) replaced."""
    parts = []
    for part in value.split(":") if not privacy.BY_ID_PATH.search(value) else [value]:
        if KERNEL_DEVICE.match(part) or BARE_NAME.match(part):
            parts.append(scrubber.text(part))
        elif privacy.BY_ID_PATH.match(part):
            parts.append(privacy.BY_ID_PATH.match(part).group(1) + SCRUBBED)
        else:
            parts.append(SCRUBBED)
    return ":".join(parts)


OPTION_VALUE = re.compile(r"[A-Za-z0-9_.,:/%+=<>${}\-]{0,400}\Z")


def fio_option(name: str, value, scrubber: privacy.Scrubber) -> str | None:
    """One fio option as served (its value; "" for a flag), or None when it is not on the allow-list."""
    text = str(value)
    if name == "directory":
        return SCRUBBED
    if name == "filename":
        return device_name(text, scrubber)
    if name in PATH_OPTIONS:  # a log file prefix: its last component
        return scrubber.text(text.rstrip("/").rsplit("/", 1)[-1]) if OPTION_VALUE.match(text) else SCRUBBED
    if name not in FIO_OPTION_NAMES or not OPTION_VALUE.match(text):
        return None
    return scrubber.text(text)


def reemit_json(kind: str, data: bytes, scrubber: privacy.Scrubber) -> str:
    """The served form of a JSON file of `kind`: its allowed fields, laid out two spaces an indent. A file that is
    not readable as its kind is not shown (a sentence says so)."""
    try:
        if kind == FIO_OUTPUT:
            document = parse_fio_output(data)  # text around it, several documents: the one that counts
        else:
            text = data.decode("utf-8", errors="replace")
            document = privacy._loads(data, text)
        kept = _Filter(scrubber).apply(JSON_SPECS[kind], document)
        if kept is _DROP:
            raise ValueError("not the shape of its kind")
        return _dumps(kept)
    except (ValueError, RecursionError, TypeError):
        return f"[not shown: this file could not be read as {KINDS[kind]}]\n"
    except Exception:  # noqa: BLE001 - parse_fio_output's own errors; never a server error for a hostile file
        return f"[not shown: this file could not be read as {KINDS[kind]}]\n"


def _dumps(document) -> str:
    """Two spaces an indent; orjson when it can write the document (the standard library's indenting encoder is pure
    Python, ten times slower on a large fio output)."""
    if privacy.orjson is not None:
        with contextlib.suppress(TypeError, privacy.orjson.JSONEncodeError):
            return privacy.orjson.dumps(document, option=privacy.orjson.OPT_INDENT_2).decode() + "\n"
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
