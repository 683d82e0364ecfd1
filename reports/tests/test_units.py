"""Display units: decimal MB/s and GB/s, µs and ms from ns, °C from K, a missing value never shown as zero."""

from reports import units


def test_bandwidth_is_decimal_and_labelled():
    assert units.bandwidth(3_500_000_000) == "3.50 GB/s"
    assert units.bandwidth(472_330_000) == "472 MB/s"


def test_latency_comes_from_nanoseconds():
    assert units.latency(17_000) == "17.0 µs"
    assert units.latency(2_500_000) == "2.50 ms"


def test_temperature_comes_from_kelvin_and_iops_are_labelled():
    assert units.temperature(318.15) == "45 °C"
    assert units.iops(553_000) == "553k IOPS"
    assert units.iops(2_436.7) == "2.44k IOPS"


def test_missing_values_stay_missing():
    for formatter in (units.iops, units.bandwidth, units.latency, units.temperature, units.capacity):
        assert formatter(None) == units.MISSING
    assert units.headline_cell(None, None) is None
