"""Each export row's CSV record, spelled when the row is written, so a CSV download sends stored text.

PostgreSQL spent most of a CSV export's time spelling ~60 typed columns of a million rows (float8out, CSV quoting):
a `COPY` of the typed export rows took 2.7 s where a `COPY` of the stored records takes 0.9 s. The record is
exactly what the typed row gave (the test suite compares the two on data crafted to break it):

- on PostgreSQL it is spelled in SQL by the functions `COPY … WITH (FORMAT csv)` uses (each type's output function,
  `::text`), quoted as COPY quotes (a cell holding `,`, `"`, CR or LF; an empty string as `""`, NULL as nothing);
- elsewhere by `writers.csv_record`, as `writers.write_csv` spells the same row read back.

A record is stored without its line end. PostgreSQL sends the records with `COPY … TO STDOUT` in text format, which
escapes a backslash and the control characters \\b \\f \\n \\r \\t \\v with a backslash (and nothing else in a
single-column row): `unescape_copy_text` turns them back, so any text survives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.db import models

from datasets import writers

_COPY_ESCAPES = {b"\\": b"\\", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"v": b"\v"}
_ESCAPED = re.compile(rb"\\(.)", re.DOTALL)


def unescape_copy_text(data: bytes) -> bytes:
    """Bytes of a single-column `COPY … TO STDOUT` (text format) with its escapes undone. Every backslash in that
    output starts an escape of two bytes, so one pass from the left is exact; whole rows only (an escape never spans
    two)."""
    if b"\\" not in data:  # nearly always: memchr, not a regex
        return data
    return _ESCAPED.sub(lambda m: _COPY_ESCAPES[m.group(1)], data)


# --- PostgreSQL: SQL that spells a row's record -------------------------------------------------------------------


def _text_cell(ref: str) -> str:
    # the characters that make writers._csv_field quote a cell, as COPY does: one list for both spellings
    needs_quotes = " OR ".join(f"strpos({ref}, chr({ord(char)})) > 0" for char in sorted(writers.QUOTED))
    return (
        f"CASE WHEN {ref} IS NULL THEN '' WHEN {ref} = '' THEN '\"\"' "
        f"WHEN {needs_quotes} THEN '\"' || replace({ref}, '\"', '\"\"') || '\"' ELSE {ref} END"
    )


def _cell_sql(ref: str, field: models.Field) -> str:
    if isinstance(field, models.BooleanField):
        return f"CASE WHEN {ref} THEN 'true' WHEN NOT {ref} THEN 'false' ELSE '' END"
    if isinstance(field, models.TextField | models.CharField):
        return _text_cell(ref)
    # numbers with their output functions (float8out, int8out), as COPY spells them; a UUID never needs quotes
    return f"COALESCE(({ref})::text, '')"


def record_sql(refs: Sequence[str], fields: Sequence[models.Field]) -> str:
    """A PostgreSQL expression for the CSV record of the cells `refs` (SQL expressions of each field's stored type)."""
    return "concat_ws(',', " + ", ".join(_cell_sql(ref, f) for ref, f in zip(refs, fields, strict=True)) + ")"


# --- elsewhere: the same record spelled in Python ----------------------------------------------------------------


def record(values: Sequence, fields: Sequence[models.Field]) -> str:
    """The CSV record of `values` (one per field, as written) as writers.write_csv spells them once stored and read
    back: a float column's integer comes back a float."""
    cells = []
    for value, field in zip(values, fields, strict=True):
        if value is not None and isinstance(field, models.FloatField):
            value = float(value)
        elif value is not None and isinstance(field, models.BooleanField):
            value = "true" if value else "false"
        elif value is not None and not isinstance(value, int | float | str):
            value = str(value)  # a UUID
        cells.append(value)
    return writers.csv_record(cells)
