"""A held submission's rows start from the public rows (analysis.factor_rows.rows_of's `base`): they must be exactly
the rows and notes that reading every run again gives, whether the added runs change other units' link verdicts or
not."""

from __future__ import annotations

import random

import pytest

from analysis.factor_rows import rows_of

SEQ, LAT = "bw_1m_read", "lat_4k_mean"


def run(pk: int, unit: int | None, seq: float | None = None, lat: float | None = None, usable=3.5e9, **fields) -> dict:
    headline = {key: value for key, value in ((SEQ, seq), (LAT, lat)) if value is not None}
    return {"id": pk, "unit_id": unit, "submission__uploader_id": pk % 3, "headline": headline,
            "overprovisioning": 0.07, "percentage_used": pk % 5, "max_temperature_k": 320.0, "scheduler": "none",
            "firmware__revision": f"F{pk % 2}", "host__cpu_model": "cpu", "host__kernel": "6.1",
            "pcie_link__generation": 4, "pcie_link__width": 4, "pcie_link__below_capability": False,
            "pcie_link__usable_bandwidth_bytes_per_s": usable, "thermal_flag": False, **fields}  # fmt: skip


def public_runs(seed: int = 3) -> list[dict]:
    """Eight units, three runs each, a few without a known link; throughputs between 2.5 and 3.4 GB/s."""
    rng = random.Random(seed)
    runs = []
    for pk in range(1, 25):
        usable = None if pk % 7 == 0 else rng.choice([3.0e9, 3.5e9])
        runs.append(run(pk, (pk - 1) // 3 + 1, seq=rng.uniform(2.5e9, 3.4e9), lat=rng.uniform(5e4, 9e4), usable=usable))
    return runs


def assert_same_as_fresh(runs: list[dict], base) -> object:
    fresh, reused = rows_of(runs), rows_of(runs, base)
    assert reused.rows == fresh.rows and reused.notes == fresh.notes
    assert [repr(row) for rows in reused.rows.values() for row in rows] == [
        repr(row) for rows in fresh.rows.values() for row in rows
    ]  # the same values of the same types (1 and 1.0 are equal, not the same)
    return reused


@pytest.mark.parametrize(
    ("held", "reuses"),
    [
        ([run(101, 900, seq=2.9e9, lat=7e4), run(102, 900, seq=3.0e9)], True),  # below the two highest
        ([run(103, 901, seq=9.0e9, lat=6e4, usable=9.9e9)], False),  # the new highest: every verdict against it
        (
            [*(run(pk, 2, seq=9.5e9) for pk in (104, 105, 106)), run(107, None, seq=1e9, usable=None)],
            False,
        ),  # a public unit retested faster
        ([run(108, 902, lat=8e4, usable=None)], True),  # no throughput of the first metric, unknown link
        ([], True),
    ],
)
def test_rows_built_on_the_public_rows_are_the_rows_of_every_run(held, reuses):
    public = public_runs()
    base = rows_of(public)
    rows = assert_same_as_fresh(public + held, base)
    first = len(base.rows[SEQ])
    assert all(a is b for a, b in zip(rows.rows[SEQ][:first], base.rows[SEQ], strict=True)) is reuses
    if not reuses:  # the added runs changed some public run's link verdict, and the rows say so
        assert [r.link_limited for r in rows.rows[SEQ][:first]] != [r.link_limited for r in base.rows[SEQ]]


def test_a_base_that_does_not_begin_the_runs_is_not_used():
    public = public_runs()
    base = rows_of(public)
    reordered = public[1:] + public[:1] + [run(200, 903, seq=2.6e9)]
    rows = assert_same_as_fresh(reordered, base)
    assert rows.rows[SEQ][0] is not base.rows[SEQ][0]


def test_held_rows_of_other_seeds_match_a_fresh_read():
    for seed in range(20):
        rng = random.Random(seed)
        public = public_runs(seed)
        base = rows_of(public)
        unit = rng.choice([None, 3, 950])
        held = [run(300 + i, unit, seq=rng.uniform(2e9, 4e9), lat=rng.choice([None, 6e4])) for i in range(2)]
        assert_same_as_fresh(public + held, base)
