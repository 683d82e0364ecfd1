"""The content digests are taken of the standard library's canonical JSON: the fast writer must give the same bytes,
or copies of content published before would no longer be recognised."""

import json
import random

import pytest

from nvmedb_client.fio_output import FioOutputError, parse_fio_output
from submissions.content import (
    MEASURED_KEYS,
    _spelled_as_the_standard_library,
    canonical_json,
    measurement_digest,
    result_digest,
)


def standard(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def test_every_real_fio_sample_gets_the_standard_librarys_bytes(shared_samples):
    checked = 0
    paths = [*(shared_samples / "fio").glob("*.json"), *(shared_samples / "ssspt-hp-iops-1").glob("*.json")]
    for path in sorted(paths):
        try:
            doc = parse_fio_output(path.read_bytes())
        except FioOutputError:
            continue
        assert canonical_json(doc) == standard(doc), path.name
        if result_digest(doc) is not None:
            assert result_digest(doc) == measurement_digest(path.read_bytes())
        checked += 1
    assert checked > 300


def test_orjsons_bytes_are_taken_for_every_real_fio_result(shared_samples):
    """The fast writer's check passes the usual fio result: the digests do not fall back to the slow writer."""
    orjson = pytest.importorskip("orjson")
    checked = 0
    for path in sorted((shared_samples / "ssspt-hp-iops-1").glob("*.json")):
        jobs = parse_fio_output(path.read_bytes())["jobs"]
        measured = [{key: job[key] for key in MEASURED_KEYS if key in job} for job in jobs]
        assert _spelled_as_the_standard_library(orjson.dumps(measured, option=orjson.OPT_SORT_KEYS)), path.name
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("value", [1e-05, -1e-05, [0.00001234], {"a": [-0.00009]}, "é", "\x7f"])
def test_orjsons_bytes_are_refused_where_they_differ(value):
    orjson = pytest.importorskip("orjson")
    fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    assert fast != standard(value)
    assert not _spelled_as_the_standard_library(fast)
    assert canonical_json(value) == standard(value)


@pytest.mark.parametrize("value", [{"a": 1e16}, {"a": -2.5e-300}, [1, 1e20], 5e-324, 1.5e300])
def test_every_number_with_an_exponent_goes_to_the_standard_library(value):
    """orjson spells some of these as the standard library does, not all of them (its own versions differ): an
    exponent is never trusted."""
    orjson = pytest.importorskip("orjson")
    assert not _spelled_as_the_standard_library(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    assert canonical_json(value) == standard(value)


def random_value(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth < 4 and roll < 0.25:
        return {random_text(rng): random_value(rng, depth + 1) for _ in range(rng.randint(0, 6))}
    if depth < 4 and roll < 0.4:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 6))]
    if roll < 0.65:
        number = rng.random() * 10 ** rng.uniform(-12, 24) * rng.choice((1, -1))
        return float(int(number)) if rng.random() < 0.2 else number
    if roll < 0.8:
        return rng.choice((0, 1, -1, 2**63 - 1, 2**64, -(2**63), 10**30, rng.randint(-(10**12), 10**12)))
    if roll < 0.9:
        return random_text(rng)
    return rng.choice((True, False, None, 0.0, -0.0, 1e-5, 1e16, 5e-324, 1.7976931348623157e308))


def random_text(rng: random.Random) -> str:
    alphabet = 'abcdeE019.-_ "\\/\n\t\x00\x1f\x7f\x80éℵ\U0001f600'
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))


def test_any_json_value_gets_the_standard_librarys_bytes():
    rng = random.Random(12)
    for _ in range(20_000):
        value = random_value(rng)
        assert canonical_json(value) == standard(value), value


@pytest.mark.parametrize(
    "value", [[1, -0.00002], {"k": [0.00003, 2]}, {"a": {"b": 0.00004}}, [1.5e-7], {"E": 1e16}, {"x": 2.5e-8}]
)
def test_a_small_value_or_exponent_anywhere_in_the_dump_is_refused(value):
    """The searches start from ".0000" and "e" (or "E", when the dump holds one) and look around them: a small value
    after any separator, or a minus, and every exponent is found."""
    orjson = pytest.importorskip("orjson")
    assert not _spelled_as_the_standard_library(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    assert canonical_json(value) == standard(value)


@pytest.mark.parametrize("value", [{"10.000000": 0.5, "99.990000": 12}, {"E": 1.0, "note": "E-mail"}, [0.0001, 10.0]])
def test_percentile_keys_and_text_keep_the_fast_path(value):
    """fio's percentile keys hold ".0000" after a digit, and an "E" in text is no exponent: neither is refused."""
    orjson = pytest.importorskip("orjson")
    fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    assert _spelled_as_the_standard_library(fast)
    assert fast == standard(value)
