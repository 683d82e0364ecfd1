"""The bundle format's fixed parts: its version and names, the limits a reader enforces, the error it raises, the
manifest's JSON Schema and canonical encoding (docs/bundle-format.md)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from importlib import resources

import fastjsonschema
import jsonschema

from nvmedb_client import system_files

FORMAT_VERSION = 2
# format 1 (no `system` declarations) is still read; writers write FORMAT_VERSION
READ_VERSIONS = (1, 2)
MANIFEST_NAME = "manifest.json"
SIGNATURE_NAME = "manifest.sig.json"
FILES_DIR = "files"
BUNDLE_SUFFIX = ".nvmedb.tar.gz"
MAX_SIGNATURE_BYTES = 64 * 1024
MAX_MANIFEST_DEPTH = 64
MAX_PATH_LENGTH = 1024
MAX_NAME_BYTES = 255
_GIB = 1024**3
_MIB = 1024**2
CHUNK_BYTES = 1024 * 1024
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f]")
# names of ASCII letters, digits and "_.-", none of them "." or "..": a path of these passes every check of
# check_relative_path, so a bundle's thousands of such paths skip them
_PLAIN_PATH = re.compile(r"(?!\.\.?(?:/|\Z))[\w.-]{1,255}(?:/(?!\.\.?(?:/|\Z))[\w.-]{1,255})*", re.ASCII)


class BundleError(Exception):
    """A bundle breaks a rule. `code` names the rule (stable, for machines); `message` says it in plain English."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class BundleLimits:
    max_total_bytes: int = 2 * _GIB
    max_file_bytes: int = 256 * _MIB
    max_files: int = 20000
    max_compression_ratio: float = 200
    max_manifest_bytes: int = 16 * _MIB
    # verify_bundle_stream holds up to this many bytes of files in memory; the rest go to a temporary directory
    max_memory_bytes: int = 128 * _MIB
    # tiny bundles compress far better than large ones (tar padding is all zeros); judge the ratio only beyond this
    ratio_check_after_bytes: int = 1 * _MIB


@lru_cache(maxsize=1)
def manifest_schema() -> dict:
    text = resources.files("nvmedb_client").joinpath("schemas/manifest.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def manifest_errors(manifest: object) -> list[str]:
    """Every JSON Schema violation of `manifest`, as "<json path>: <problem>" sentences (empty when valid)."""
    full, fast = _schema_validators()
    try:
        fast(manifest)
    except fastjsonschema.JsonSchemaException:
        pass  # the full validator below lists every violation, with its path
    else:
        return []
    errors = sorted(full.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    return [f"{e.json_path}: {e.message}" for e in errors]


@lru_cache(maxsize=1)
def _schema_validators():
    """jsonschema lists every error but takes ~1 s on a full PTS manifest; fastjsonschema compiles the same schema to
    code that accepts or rejects it in milliseconds. The schema uses only keywords whose meaning draft 7 and draft
    2020-12 share, so the compiled check is run as draft 7 (the newest fastjsonschema knows); tests hold the two to
    the same verdicts."""
    schema = manifest_schema()
    fast = fastjsonschema.compile({**inline_refs(schema), "$schema": "http://json-schema.org/draft-07/schema#"})
    return jsonschema.Draft202012Validator(schema), fast


def inline_refs(schema: dict) -> dict:
    """The schema with each `{"$ref": "…#/$defs/<name>"}` replaced by that definition (recursively; a definition
    that refers to itself keeps its $ref). The same checks: fastjsonschema compiles a $ref into a function call whose
    error path it formats for every item, valid or not, so a full manifest's 1,745 files and 435 runs took 16 ms to
    check; inlined, 6 ms."""
    defs = schema.get("$defs", {})

    def inlined(node, resolving: tuple[str, ...]):
        if isinstance(node, list):
            return [inlined(item, resolving) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) == 1 and "#/$defs/" in ref:
            name = ref.rsplit("#/$defs/", 1)[1]
            if name in defs and name not in resolving:
                return inlined(defs[name], (*resolving, name))
        return {key: inlined(value, resolving) for key, value in node.items()}

    return inlined(schema, ())


def encode_manifest(manifest: dict) -> bytes:
    """The canonical bytes of a manifest: sorted keys, two-space indent, UTF-8, trailing newline."""
    return (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def parse_timestamp(value: str) -> datetime:
    """A schema-valid RFC 3339 UTC timestamp, to the second (Python 3.10 cannot parse every fraction length)."""
    return datetime.fromisoformat(value[:19] + "+00:00")


def bundle_file_name(manifest: dict) -> str:
    stamp = parse_timestamp(manifest["created_at"]).strftime("%Y%m%dT%H%M%SZ")
    return f"nvmedb-{manifest['profile']}-{stamp}{BUNDLE_SUFFIX}"


def is_plain_path(path: str) -> bool:
    """Whether `path` is made of plain ASCII names (check_relative_path accepts it; it may refuse others)."""
    return len(path) <= MAX_PATH_LENGTH and _PLAIN_PATH.fullmatch(path) is not None


def check_relative_path(path: str) -> None:
    if is_plain_path(path):
        return
    if not path or path.startswith("/") or "\\" in path or (len(path) > 1 and path[1] == ":"):
        raise BundleError("unsafe_path", f"{path!r} is not a relative '/'-separated path")
    if CONTROL_CHARACTERS.search(path):
        raise BundleError("unsafe_path", f"{path!r} contains a control character")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise BundleError("unsafe_path", f"{path!r} has an empty, '.' or '..' component")
    if len(path) > MAX_PATH_LENGTH or any(len(part.encode()) > MAX_NAME_BYTES for part in parts):
        raise BundleError(
            "unsafe_path", f"{path[:80]!r}... is longer than {MAX_PATH_LENGTH} characters or has a name over 255 bytes"
        )


def version_problems(manifest: dict) -> list[str]:
    """Rules of a format version that its schema cannot state (format 2: the system declarations are sound)."""
    if manifest.get("format_version") == 2:
        return system_files.declaration_problems(manifest)
    return []
