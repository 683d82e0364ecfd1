"""The one strict, bounded JSON reader: the same verdicts with and without orjson."""

import json

import pytest

from nvmedb_client import jsonload
from nvmedb_client.jsonload import JsonError


@pytest.fixture(params=["orjson", "stdlib"])
def parser(request, monkeypatch):
    if request.param == "stdlib":
        monkeypatch.setattr(jsonload, "orjson", None)
    elif jsonload.orjson is None:
        pytest.skip("orjson is not installed")
    return request.param


@pytest.mark.parametrize("text", ["NaN", "[NaN]", '{"a": Infinity}', '{"a": -Infinity}', '{"runtime_s": NaN}'])
def test_it_refuses_nan_and_infinity(parser, text):
    with pytest.raises(JsonError, match="not strict JSON"):
        jsonload.loads(text, what="run.json")


@pytest.mark.parametrize("text", ["1e400", "[-1e400]", "1" + "0" * 400])
def test_it_refuses_a_number_beyond_a_double(parser, text):
    with pytest.raises(JsonError, match="not strict JSON"):
        jsonload.loads(text)


def test_it_reads_integers_beyond_64_bits_as_doubles_with_both_parsers(parser):
    assert jsonload.loads("[18446744073709551615, 123456789012345678901234567890]") == [
        18446744073709551615,
        1.2345678901234568e29,
    ]


def test_it_refuses_a_document_nested_deeper_than_the_limit(parser):
    deep = "[" * 65 + "]" * 65
    with pytest.raises(JsonError, match="nested deeper than 64 levels"):
        jsonload.loads(deep, what="facts.json")
    at_the_limit = jsonload.loads("[" * 64 + "]" * 64)
    for _ in range(63):
        at_the_limit = at_the_limit[0]
    assert at_the_limit == []


def test_a_very_deep_document_is_refused_before_it_is_parsed(parser):
    deep = b"[" * 5_000_000 + b"]" * 5_000_000
    with pytest.raises(JsonError, match="nested deeper"):
        jsonload.loads(deep, what="id-ctrl")


def test_brackets_inside_strings_do_not_count_as_nesting(parser):
    text = json.dumps({"note": "[" * 500, "list": [[1]]})
    assert jsonload.loads(text, max_depth=3)["note"] == "[" * 500


def test_it_refuses_a_lone_surrogate_escape(parser):
    with pytest.raises(JsonError):
        jsonload.loads('{"mn": "\\ud800x"}')
    assert jsonload.loads('"\\ud83d\\ude00"') == "\U0001f600"


def test_it_refuses_a_document_over_the_size_limit_before_reading_it(parser):
    with pytest.raises(JsonError, match="more than the limit of 10"):
        jsonload.loads(b'{"a": "0123456789"}', max_bytes=10)


def test_it_refuses_non_utf8_unless_asked_to_replace(parser):
    data = b'{"mn": "\xff\xfe drive"}'
    with pytest.raises(JsonError, match="not UTF-8"):
        jsonload.loads(data)
    assert jsonload.loads(data, replace_invalid_utf8=True)["mn"] == "\ufffd\ufffd drive"


def test_the_message_names_the_document(parser):
    with pytest.raises(JsonError) as caught:
        jsonload.loads("{", what="files/system/facts.json")
    assert str(caught.value).startswith("files/system/facts.json is not strict JSON")
    assert isinstance(caught.value, ValueError)


def test_both_parsers_read_every_shared_sample_alike(shared_samples, monkeypatch):
    paths = sorted((shared_samples / "nvme-cli").glob("*.json")) + sorted((shared_samples / "lshw").glob("*.json"))
    paths += sorted((shared_samples / "ssspt-hp-iops-1").glob("*.json"))[:20]
    with_orjson = [jsonload.loads(path.read_bytes(), replace_invalid_utf8=True) for path in paths]
    monkeypatch.setattr(jsonload, "orjson", None)
    without = [jsonload.loads(path.read_bytes(), replace_invalid_utf8=True) for path in paths]
    assert with_orjson == without
