"""nvmedb.json_field reads every stored JSON value to what Django's own JSONField reads, faster where orjson can."""

from __future__ import annotations

import io
import json
import math
from contextlib import redirect_stdout

import pytest
from django.core.management import call_command
from django.db import models

from analysis.models import Host
from nvmedb import json_field


def same(a, b, *, ordered: bool = True) -> bool:
    """Equal, with the same types all the way down (1 and 1.0 are not the same value read); keys in the same order
    unless not `ordered` (PostgreSQL's jsonb keeps its own)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        keys_agree = list(a) == list(b) if ordered else sorted(a) == sorted(b)
        return keys_agree and all(same(a[k], b[k], ordered=ordered) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y, ordered=ordered) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def test_every_json_sample_reads_as_the_standard_library_reads_it(shared_samples):
    read = 0
    for path in sorted(shared_samples.rglob("*.json")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = json.loads(text)
        except ValueError:
            continue
        document = json_field.loads(text)
        if document is json_field._STANDARD:
            continue
        assert same(document, expected), path
        read += 1
    assert read > 500  # fio json+ outputs, nvme-cli and lshw documents read by orjson


@pytest.mark.parametrize(
    "text",
    [
        '{"serial": 123456789012345678901234}',  # beyond 64 bits: orjson would read a float
        '{"n": -9223372036854775809}',
        '{"n": 18446744073709551616}',
        '{"ratio": NaN, "top": Infinity}',  # what json.dumps writes on SQLite
        '{"huge": 1e400}',
        '"\\ud800 a lone surrogate"',
        '{"n": 9223372036854775807}',  # 19 digits: within 64 bits, but every such run is left to the standard library
    ],
)
def test_what_orjson_would_misread_or_refuse_is_read_by_the_standard_library(text):
    assert json_field.loads(text) is json_field._STANDARD
    field = json_field.JSONField()
    assert same(field.from_db_value(text, None, None), json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        '{"n": 922337203685477580, "m": -922337203685477580, "f": 0.1, "z": -0.0, "e": 1.5e300, "s": "123"}',
        '{"a": 1, "a": 2}',  # a repeated key: the last one, as json.loads has it
        '{"name": "Samsung SSD 980 PRO 1TB \\u00e9\\ud83d\\ude00", "list": [true, false, null, "", {}]}',
    ],
)
def test_what_orjson_reads_is_the_same_value(text):
    document = json_field.loads(text)
    assert document is not json_field._STANDARD
    assert same(document, json.loads(text))


def test_a_value_that_is_no_json_is_returned_as_django_returns_it():
    field = json_field.JSONField()
    assert field.from_db_value("plain text", None, None) == "plain text"  # a key transform's string on SQLite
    assert field.from_db_value(None, None, None) is None


def test_a_field_with_its_own_decoder_keeps_it():
    class Tagged(json.JSONDecoder):
        def decode(self, s, *args, **kwargs):
            return {"decoded": super().decode(s)}

    field = json_field.JSONField(decoder=Tagged)
    assert field.from_db_value('{"a": 1}', None, None) == {"decoded": {"a": 1}}


@pytest.mark.django_db
def test_stored_values_come_back_the_same_through_the_database():
    missing = {"serial": 123456789012345678901234, "bandwidth": 3.5e9, "why": "lspci: not run ✓", "n": [1, 2.0]}
    host = Host.objects.create(fingerprint="c" * 64, cpu_model="EPYC", missing=missing)
    assert same(Host.objects.get(pk=host.pk).missing, missing, ordered=False)
    assert same(Host.objects.filter(pk=host.pk).values_list("missing", flat=True).get(), missing, ordered=False)


def test_the_field_deconstructs_as_djangos_own_so_no_migration_is_needed():
    name, path, args, kwargs = json_field.JSONField(default=dict, blank=True).deconstruct()
    assert path == "django.db.models.JSONField"
    assert isinstance(json_field.JSONField(), models.JSONField)


@pytest.mark.django_db
def test_no_model_change_is_left_without_a_migration():
    out = io.StringIO()
    with redirect_stdout(out):
        call_command("makemigrations", "--check", "--dry-run")
    assert "No changes detected" in out.getvalue()


@pytest.mark.parametrize("length", [1, 19, 20])
def test_a_run_of_digits_is_found_as_the_regular_expression_finds_it(length):
    import random
    import re

    rng = random.Random(length)
    pattern = re.compile(rb"\d{%d}" % length)
    found = 0
    for _ in range(3000):  # nine characters in ten a digit: runs of every length, up to the whole text
        data = bytes(rng.choice(b"0123456789" * 6 + b".,- e\x00\xff") for _ in range(rng.randint(0, 60)))
        assert json_field.holds_digit_run(data, length) == bool(pattern.search(data)), data
        found += json_field.holds_digit_run(data, length)
    assert 100 < found < 3000  # some with the run, some without


@pytest.mark.django_db
def test_what_is_written_is_what_djangos_own_writing_stores_and_nan_is_still_refused():
    from django.db import DataError, IntegrityError, transaction

    values = {"why": "lspci: not run ✓", "big": 2**70, "n": [1, 2.0, None, 1e-05], "nested": {"k": [True]}, 3: "x"}
    host = Host.objects.create(fingerprint="d" * 64, cpu_model="EPYC", missing=values)
    own = Host.objects.get(pk=host.pk).missing
    host.missing = json.loads(json.dumps(values))  # as Django's own field would store it: keys as strings
    assert same(own, host.missing, ordered=False)
    # PostgreSQL refuses the NaN token, SQLite the column's JSON_VALID check: as with Django's own field
    with pytest.raises((DataError, IntegrityError)), transaction.atomic():
        Host.objects.create(fingerprint="e" * 64, cpu_model="EPYC", missing={"ratio": math.nan})
