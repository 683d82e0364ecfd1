"""Django's JSONField, its stored values read by orjson.

Django reads every JSON value with the standard library's `json.loads`: a drive's refit and page summary read the
headline of each of its public runs (7,259 small documents per worker path of the ingest benchmark, 11 ms), a drive
page its summary's charts (120 kB). orjson reads them in a third of the time and to the same values, except:

- an integer of 19 digits or more may lie outside the 64 bits orjson reads exactly (it would give a float);
- NaN, Infinity, a lone surrogate or a number too large for a double, which orjson refuses (SQLite can hold what
  `json.dumps` wrote).

Such a value is read by the standard library, as before. The field deconstructs as Django's own, so migrations and
historical models see no change.
"""

from __future__ import annotations

import orjson
from django.db import models

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


class JSONField(models.JSONField):
    def from_db_value(self, value, expression, connection):
        if self.decoder is None and type(value) is str:
            document = loads(value)
            if document is not _STANDARD:
                return document
        return super().from_db_value(value, expression, connection)

    def deconstruct(self):
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs
