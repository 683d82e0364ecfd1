"""The content digests are taken of the standard library's canonical JSON: the fast writer must give the same bytes,
or copies of content published before would no longer be recognised."""

import json
import random

from nvmedb_client.fio_output import FioOutputError, parse_fio_output
from submissions.content import canonical_json, measurement_digest, result_digest


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
