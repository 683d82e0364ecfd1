import pytest

from analysis.values import optional_int


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(42, 42), (42.9, 42), ("42", 42), (" 42.0 ", 42), ("0x2a", 42), ("0X2A", 42), (0, 0)],
)
def test_numbers_in_any_spelling_become_ints(raw, expected):
    assert optional_int(raw) == expected


@pytest.mark.parametrize(
    "raw", [None, True, False, "", "n/a", "0xzz", [], {}, float("inf"), float("nan"), "inf", "nan"]
)
def test_anything_else_is_missing_not_guessed(raw):
    assert optional_int(raw) is None
