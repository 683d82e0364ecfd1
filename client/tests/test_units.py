"""The shared formatting rules: a unit on every value, 3 significant digits, latency and bytes scaled per magnitude."""

import math
import random

import pytest

from nvmedb_client import units


@pytest.mark.parametrize(
    ("value_ns", "shown"),
    [
        (850, "850 ns"),
        (17_000, "17.0 µs"),
        (99_940, "99.9 µs"),
        (999_999, "1.00 ms"),  # rounding carries into the next unit, never "1,000 µs"
        (100_000_000, "100 ms"),  # never "100k µs"
        (2_500_000_000, "2.50 s"),
    ],
)
def test_latency_picks_its_unit_by_magnitude(value_ns, shown):
    assert units.latency(value_ns) == shown


def test_values_have_three_significant_digits():
    assert units.significant(19.484600999999998) == "19.5"
    assert units.significant(46.187846640000004) == "46.2"
    assert units.significant(9.996) == "10.0"
    assert units.significant(0.0012345) == "0.00123"
    assert units.significant(123_456.7) == "123,457"  # whole numbers are never cut


def test_iops_take_k_and_m_suffixes():
    assert units.iops(950) == "950 IOPS"
    assert units.iops(2_436.7) == "2.44k IOPS"
    assert units.iops(553_000) == "553k IOPS"
    assert units.iops(1_234_567) == "1.23M IOPS"


def test_bandwidth_and_sizes_are_decimal_with_a_binary_twin():
    assert units.bandwidth(3_500_000_000) == "3.50 GB/s"
    assert units.bandwidth(472_330_000) == "472 MB/s"
    assert units.bandwidth_binary(3_500_000_000) == "3.26 GiB/s"
    assert units.size(1_024_209_543_168) == "1.02 TB"
    assert units.size_both(1_024_209_543_168) == "1.02 TB (954 GiB)"


def test_a_missing_value_is_never_zero():
    for formatter in (units.iops, units.latency, units.bandwidth, units.size, units.temperature, units.percent):
        assert formatter(None) == units.MISSING
    assert units.iops(0) == "0 IOPS"


def test_units_follow_the_metric_name():
    assert units.by_unit(units.metric_unit("total_iops"), 19.4846) == "19.5 IOPS"
    assert units.by_unit(units.metric_unit("write_bw_bytes_per_s"), 46.187846640000004e6) == "46.2 MB/s"
    assert units.by_unit(units.metric_unit("lat_mean_ns"), 46_187.8) == "46.2 µs"
    assert units.block_size(4096) == "4 KiB" and units.block_size(1_048_576) == "1 MiB"


def test_log_axes_are_labelled_at_decades_only():
    assert units.decades(3_200, 500_000) == [1e3, 1e4, 1e5, 1e6]
    assert [units.decade_label(t, "ns") for t in units.decades(3e3, 2e8)] == [
        "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s",
    ]  # fmt: skip
    assert [units.decade_label(t, "IOPS") for t in units.decades(3e3, 2e6)] == [
        "1k IOPS", "10k IOPS", "100k IOPS", "1M IOPS", "10M IOPS",
    ]  # fmt: skip
    with pytest.raises(ValueError):
        units.decades(0, 10)


def test_the_cli_prints_sizes_by_the_same_rules():
    from click.testing import CliRunner

    from nvmedb_client.cli import main

    result = CliRunner().invoke(main, ["plan", "--edition", "client", "--size", "512GB"])
    assert result.exit_code == 0, result.output
    assert "capacity 512 GB (477 GiB)" in result.output


def test_the_safety_checks_state_sizes_by_the_same_rules(tmp_path):
    from nvmedb_client import safety

    with pytest.raises(safety.UnsafeTargetError, match=r"size 512 B is below the minimum of 16\.8 MB \(16\.0 MiB\)"):
        safety.check_file_target(tmp_path / "target.img", 512)


def test_the_scale_is_chosen_as_rounding_each_value_would_choose_it():
    """_scaled skips formatting values that cannot round to 1 or more; it picks what formatting each one would."""
    rng = random.Random(7)
    edges = [0.999, 0.9995, 0.99949999999, 0.99950000001, 1.0, 0.99899999, math.nextafter(0.999, 0), math.inf]
    edges += [math.nextafter(1.0, 0), math.nextafter(units._ROUNDS_BELOW_ONE, 0), units._ROUNDS_BELOW_ONE, math.nan]
    values = edges + [-v for v in edges] + [rng.uniform(0.99, 1.01) for _ in range(20_000)]
    values += [10 ** rng.uniform(-6, 6) for _ in range(20_000)]
    for value in values:
        assert units._rounds_to_one_or_more(value) == (abs(float(f"{value:.{units.DIGITS}g}")) >= 1), value


@pytest.mark.parametrize(
    "ratio, unit, shown",
    [(0.25, "%", "−75%"), (1.5, "%", "+50%"), (1.0401, "%", "+4.0%"), (0.9996, "%", "+0.0%"), (0.3, "", "−70"),
     (1.2, "", "20")],
)  # fmt: skip
def test_a_ratio_is_shown_as_a_signed_change(ratio, unit, shown):
    """Two digits at 10 % and beyond, one decimal below; a change that rounds to nothing has no minus sign; interval
    bounds (unit "") are signed only when negative."""
    assert units.change(ratio, unit) == shown
