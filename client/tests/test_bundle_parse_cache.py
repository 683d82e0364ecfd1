"""A verified bundle parses each fio output's JSON once for every reader (VerifiedBundle.json_document, fio_output):
the same document for the fio result and for the server's identifier walk, a refusal remembered, orjson optional."""

from __future__ import annotations

import json

import pytest

from nvmedb_client import jsonload
from nvmedb_client.bundle_files import VerifiedBundle
from nvmedb_client.fio_output import parse_fio_output

RESULT = {"fio version": "fio-3.33", "jobs": [{"jobname": "a", "read": {"iops": 1.5}}]}


@pytest.fixture
def bundle(tmp_path):
    files = {
        "fio/clean.json": json.dumps(RESULT).encode(),
        "fio/noisy.json": b"fio: a warning\n" + json.dumps(RESULT).encode(),
    }
    for path, data in files.items():
        (tmp_path / "files" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "files" / path).write_bytes(data)
    manifest = {"files": [{"path": path} for path in files]}
    return VerifiedBundle(manifest=manifest, public_key=b"", fingerprint="", root=tmp_path)


@pytest.fixture
def loads_seen(monkeypatch):
    if jsonload.orjson is None:
        pytest.skip("orjson is not installed")
    loads, seen = jsonload.orjson.loads, []
    monkeypatch.setattr(jsonload.orjson, "loads", lambda data: seen.append(bytes(data)) or loads(data))
    return seen


def test_a_clean_output_is_parsed_once_for_its_result_and_its_document(bundle, loads_seen):
    result = bundle.fio_output("fio/clean.json")
    assert result == RESULT
    assert bundle.json_document("fio/clean.json") is result
    assert bundle.fio_output("fio/clean.json") is result
    assert len(loads_seen) == 1


def test_an_output_with_text_around_its_result_is_read_and_its_refusal_remembered(bundle, loads_seen):
    data = bundle.read_bytes("fio/noisy.json")
    assert bundle.fio_output("fio/noisy.json") == parse_fio_output(data) == RESULT
    for _ in range(2):
        with pytest.raises(jsonload.orjson.JSONDecodeError):
            bundle.json_document("fio/noisy.json")
    assert loads_seen.count(data) == 1  # the whole text tried once, its refusal remembered


def test_without_orjson_the_result_is_the_same(bundle, monkeypatch):
    monkeypatch.setattr(jsonload, "orjson", None)
    assert bundle.fio_output("fio/clean.json") == bundle.fio_output("fio/noisy.json") == RESULT
