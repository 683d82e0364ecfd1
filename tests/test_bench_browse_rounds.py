"""The browse benchmark's rounds: sizes in turn ascending and descending, each size's samples pooled before its
figures are taken (so the growth compares sizes measured at the same times)."""

from __future__ import annotations

import statistics

from bench import browse_benchmark as bench


def test_the_rounds_go_up_then_down():
    assert bench.round_order([100_000, 1_000_000], 2) == [100_000, 1_000_000, 1_000_000, 100_000]
    assert bench.round_order([1, 2, 3], 3) == [1, 2, 3, 3, 2, 1, 1, 2, 3]
    assert bench.round_order([5], 1) == [5]


def one_round(offset: float, queries: int) -> dict:
    page = {"warm": [1.0 + offset, 2.0 + offset], "warm_cpu": [0.5 + offset, 0.7 + offset],
            "cold": [10.0 + offset, 30.0 + offset], "cold_cpu": [8.0 + offset, 9.0 + offset],
            "queries": queries, "cold_queries": queries + 1}  # fmt: skip
    http = {"warm": [3.0 + offset], "cold": [20.0 + offset, 40.0 + offset]}
    return {
        "size": 1000, "measurements": 1234, "big_submissions": 10, "big_runs": 40,
        "in_process": {"drive list": page},
        "http": {"c1": {"drive list": http},
                 "c8": {"drive page": {"warm": [5.0 + offset], "rps": [300.0 + offset], "cold": [50.0 + offset]}}},
        "write_ms": [100.0 + offset],
    }  # fmt: skip


def test_the_rounds_samples_are_pooled_before_their_figures():
    merged = bench.merged([one_round(0, 4), one_round(100, 5)])

    cold = merged["in_process"]["drive list"]["cold"]
    pooled = [10.0, 30.0, 110.0, 130.0]
    assert cold["p50"] == statistics.median(pooled) and cold["p95"] == bench.percentile(pooled, 0.95)
    assert cold["n"] == 4 and cold["cpu"] == statistics.median([8.0, 9.0, 108.0, 109.0])
    assert merged["in_process"]["drive list"]["queries"] == 5  # the most either round counted
    assert merged["in_process"]["drive list"]["cold_queries"] == 6
    assert merged["http"]["c1"]["drive list"]["cold"]["p95"] == bench.percentile([20.0, 40.0, 120.0, 140.0], 0.95)
    assert merged["http"]["c8"]["drive page"]["warm"]["rps"] == 350.0  # the median of the rounds' req/s
    assert merged["write_ms"]["n"] == 2 and merged["rounds"] == 2 and merged["measurements"] == 1234
