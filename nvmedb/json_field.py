"""Django's JSONField, its stored values read by orjson.

Django reads every JSON value with the standard library's `json.loads`: a drive's refit and page summary read the
headline of each of its public runs (7,259 small documents per worker path of the ingest benchmark, 11 ms), a drive
page its summary's charts (120 kB). orjson reads them in a third of the time and to the same values, except:

- an integer of 19 digits or more may lie outside the 64 bits orjson reads exactly (it would give a float);
- NaN, Infinity, a lone surrogate or a number too large for a double, which orjson refuses (none can be stored
  through the field, but the standard library reads them should a row hold one).

Such a value is read by the standard library, as before. Values are written with orjson on PostgreSQL too
(`json_text`), where the standard library's text and orjson's store the same value. The field deconstructs as
Django's own, so migrations and historical models see no change.
"""

from __future__ import annotations

import json

import orjson
from django.db import models
from psycopg.types.json import Jsonb

_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0000000000")


def holds_digit_run(data: bytes, length: int) -> bool:
    """Whether `data` holds `length` ASCII digits in a row, as re.search(rb"\\d{length}", data) says, at
    substring-search speed: every digit read as "0", then one search for `length` zeros (the pattern would try each
    digit of a number-heavy document)."""
    return len(data) >= length and b"0" * length in data.translate(_DIGITS_AS_ZERO)


def _may_hold_long_integer(text: str) -> bool:
    """Whether `text` holds 19 digits in a row, searched in its bytes (translating a str is several times slower)."""
    return len(text) >= 19 and holds_digit_run(text.encode("utf-8", "surrogatepass"), 19)


def loads(text: str):
    """orjson.loads(text) where it reads the same value as json.loads, else _STANDARD: the caller uses json.loads."""
    if _may_hold_long_integer(text):
        return _STANDARD
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _STANDARD


_STANDARD = object()  # loads' answer when only the standard library reads the text as it always did


# what orjson would write where the standard library raises: a datetime, a dataclass
_STRICT = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def json_text(value) -> str:
    """json.dumps(value) for a JSONB column: orjson's text where it reads back to the same value (a few times
    faster: the 2,000 JSON values of a bundle's bulk-copied rows took 11 ms with the standard library). The standard
    library writes it when orjson refuses the value (a key that is no string, an integer beyond 64 bits, a datetime)
    or wrote a null, which is how it writes NaN and infinities: the standard library writes those as they are, and
    PostgreSQL refuses them as before instead of storing a null."""
    try:
        text = orjson.dumps(value, option=_STRICT)
    except TypeError:  # orjson.JSONEncodeError among them
        return json.dumps(value)
    return json.dumps(value) if b"null" in text else text.decode()


class JSONField(models.JSONField):
    def get_db_prep_value(self, value, connection, prepared=False):
        """On PostgreSQL the value goes as json_text's (jsonb keeps the value, not the text: a drive's page summary
        is 200 kB of JSON written after every change); elsewhere as Django writes it."""
        if self.encoder is not None or connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        return Jsonb(value if prepared else self.get_prep_value(value), dumps=json_text)

    def from_db_value(self, value, expression, connection):
        if self.decoder is None and type(value) is str:
            document = loads(value)
            if document is not _STANDARD:
                return document
        return super().from_db_value(value, expression, connection)

    def deconstruct(self):
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs
