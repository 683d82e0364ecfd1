"""The frozen JSON contract: responses are compared with tests/responses/<name>.json after replacing values that
change on every run (ids, timestamps, hashes) by placeholders. Set NVMEDB_UPDATE_RESPONSES=1 to rewrite the files,
then review the diff: a change there is a change for every client."""

import json
import os
import re
from pathlib import Path

RESPONSES = Path(__file__).parent / "responses"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_DATETIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_FINGERPRINT = re.compile(r"^SHA256:[A-Za-z0-9+/]{43}$")


# Values that differ on every run whatever their shape.
_VOLATILE_KEYS = {"public_key": "<public_key>", "token_prefix": "<token_prefix>"}


def placeholders(value):
    if isinstance(value, dict):
        return {
            key: _VOLATILE_KEYS.get(key)
            or ("<id>" if key == "id" and isinstance(item, int) else None)
            or placeholders(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [placeholders(item) for item in value]
    if isinstance(value, str):
        if _DATETIME.match(value):
            return "<datetime>"
        if _SHA256.match(value):
            return "<sha256>"
        if _FINGERPRINT.match(value):
            return "<fingerprint>"
        return _UUID.sub("<uuid>", value)
    return value


def assert_matches_contract(name: str, data) -> None:
    path = RESPONSES / f"{name}.json"
    actual = placeholders(json.loads(json.dumps(data)))
    if os.environ.get("NVMEDB_UPDATE_RESPONSES") == "1":
        path.write_text(json.dumps(actual, indent=2, sort_keys=True) + "\n")
    expected = json.loads(path.read_text())
    assert actual == expected, f"the response no longer matches {path.name}"
