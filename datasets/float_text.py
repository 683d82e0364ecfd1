"""A float spelled as PostgreSQL writes it, so a CSV reads the same from either database.

PostgreSQL's float8out (extra_float_digits = 1, its default since version 12) writes the shortest digits that read
back as the same double, as Python's repr does, but spells them its own way: a whole number without ".0"
(`100000`, not `100000.0`), scientific notation from 1e15 (repr waits for 1e16), `-0`, `NaN`, `Infinity`. Below
1e-4 and from 1e16 the two agree (`1e-05`, `1.5e+20`), but for one case: a whole number beyond 2^53 whose shortest
digits fall exactly half-way to the next double, which repr accepts (reading them back rounds to the even neighbour,
this number) and float8out does not (it writes one digit more). A `COPY … WITH (FORMAT csv)` of the export rows
spells its floats this way (datasets.pg_copy, datasets.csv_lines); the Python writers spell them with
`postgres_float`.
"""

from __future__ import annotations

import math
from decimal import Context, Decimal

_SCIENTIFIC_FROM = 1e15  # float8out's fixed notation ends here; repr's at 1e16
_EXACT = Context(prec=400)  # enough digits for any double's midpoints, exactly


def postgres_float(value: float) -> str:
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    text = _shortest(value)
    if "e" in text:
        return text
    if abs(value) >= _SCIENTIFIC_FROM:
        return _scientific(text)
    return text[:-2] if text.endswith(".0") else text


def _shortest(value: float) -> str:
    """repr(value), or, where its digits lie exactly half-way to a neighbouring double, the shortest digits strictly
    between the two midpoints (as float8out chooses)."""
    text = repr(value)
    if abs(value) < 2**53 or not value.is_integer():  # only there can a short decimal be a midpoint
        return text
    exact = Decimal(value)
    low = _EXACT.divide(_EXACT.add(exact, Decimal(math.nextafter(value, -math.inf))), 2)
    high = _EXACT.divide(_EXACT.add(exact, Decimal(math.nextafter(value, math.inf))), 2)
    if low < Decimal(text) < high:
        return text
    for digits in range(len(Decimal(text).normalize().as_tuple().digits) + 1, 18):
        candidate = f"{value:.{digits - 1}e}"
        if low < Decimal(candidate) < high:
            return candidate  # d.ddde+XX: from 2^53, float8out writes scientific notation
    return text


def _scientific(text: str) -> str:
    """`d.ddde+XX` of the digits of `text` (a number's repr-style spelling)."""
    sign, digits, exponent = Decimal(text).normalize().as_tuple()
    leading = exponent + len(digits) - 1
    mantissa = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    return ("-" if sign else "") + f"{mantissa}e{'+' if leading >= 0 else '-'}{abs(leading):02d}"
