"""CSV cells that a spreadsheet would run as a formula (CSV injection), made inert.

A text cell that starts with = + - @ (or a tab or carriage return, which some spreadsheets skip before looking for
one) is a formula when Excel, LibreOffice or Google Sheets open the file: `=HYPERLINK(...)` makes a link that leaks
data, `-2+3+cmd|...` ran commands through DDE. Such a cell gets a leading apostrophe, which spreadsheets treat as
"this is text" and do not show. Only text columns are touched: a number like -5 stays a number. JSON, NDJSON and
Parquet keep every value verbatim: they are not opened by spreadsheets as code, and their readers want the data.
"""

from __future__ import annotations

from django.db.models import CharField, Func

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
NEUTRALISER = "'"


def spreadsheet_safe(cell):
    """`cell` with a leading apostrophe when it is text a spreadsheet would read as a formula; anything else as is."""
    if isinstance(cell, str) and cell.startswith(FORMULA_PREFIXES):
        return NEUTRALISER + cell
    return cell


class SpreadsheetSafeText(Func):
    """`spreadsheet_safe` in SQL (PostgreSQL), for the CSV that `COPY` writes.

    The first character is compared by its code (`ascii` gives the code point in UTF-8, 0 for an empty string):
    `left(…, 1)` built a one-letter string per cell and cost 1.4 of the 7.2 s of server CPU of a 1 M-row
    measurements export."""

    def as_sql(self, compiler, connection, **extra_context):
        # the expression is written three times, so its parameters are passed three times (a template would not)
        sql, params = compiler.compile(self.source_expressions[0])
        text = f"CAST({sql} AS text)"
        codes = ", ".join(str(ord(c)) for c in FORMULA_PREFIXES)
        quote = "''''"  # SQL for a string holding one apostrophe
        return f"CASE WHEN ascii({text}) IN ({codes}) THEN {quote} || {text} ELSE {text} END", (
            *params,
            *params,
            *params,
        )

    output_field = CharField()
