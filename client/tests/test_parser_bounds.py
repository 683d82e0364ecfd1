"""Each parser bounds sizes, depths and numbers before doing work proportional to a value (issue 14's crash classes)."""

import copy
import json

import pytest

from nvmedb_client.fio_output import FioOutputError, parse_fio_output, summarize
from nvmedb_client.system import lshw, lspci, nvme

FIO_SAMPLE = "fio/local__fio-3.33__randrw_jsonplus.json"
ID_CTRL = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)
SMART = "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json"


def fio_doc(shared_samples) -> dict:
    return parse_fio_output((shared_samples / FIO_SAMPLE).read_bytes())


def test_an_id_ns_lba_format_with_ds_1e9_is_missing_with_the_reason_not_allocated():
    text = json.dumps({"nsze": 1000, "ncap": 1000, "nuse": 10, "flbas": 0, "lbafs": [{"ds": 1e9, "ms": 0, "rp": 0}]})
    parsed = nvme.parse_id_ns(text)
    assert parsed["lba_formats"][0]["data_size_bytes"] is None
    assert "ds=1000000000.0, outside 9..16" in parsed["missing"]["lba_format_0"]
    assert parsed["size_bytes"] is None


def test_an_id_ns_with_a_real_lba_size_still_gives_the_namespace_size():
    text = json.dumps({"nsze": 1000, "ncap": 1000, "nuse": 10, "flbas": 1, "lbafs": [{"ds": 9}, {"ds": 12}]})
    assert nvme.parse_id_ns(text)["size_bytes"] == 1000 * 4096


@pytest.mark.parametrize("lbafs", [5, "abc", {"ds": 9}, [5, None]])
def test_an_id_ns_with_lbafs_of_another_shape_has_no_formats(lbafs):
    parsed = nvme.parse_id_ns(json.dumps({"nsze": 1, "flbas": 0, "lbafs": lbafs}))
    assert parsed["lba_formats"] == []


@pytest.mark.parametrize("value", ["1" + "0" * 400, "9" * 5000, 2**64, -(2**64), "1e400", 1e300])
def test_an_nvme_number_beyond_2_to_the_64_is_missing_with_the_reason(shared_samples, value):
    doc = json.loads((shared_samples / SMART).read_text())
    doc["temperature"] = value
    parsed = nvme.parse_smart_log(json.dumps(doc))
    assert parsed["temperature_k"] is None
    assert "not a number below 2**64" in parsed["missing"]["temperature_k"]


def test_a_smart_log_with_a_10_to_the_400_literal_is_not_strict_json():
    with pytest.raises(nvme.NvmeParseError, match="not strict JSON"):
        nvme.parse_smart_log('{"temperature": 1' + "0" * 400 + ', "data_units_written": 1}')


def test_a_smart_log_sensor_key_with_thousands_of_digits_is_ignored(shared_samples):
    doc = json.loads((shared_samples / SMART).read_text())
    doc["temperature_sensor_" + "9" * 5000] = 300
    assert (
        nvme.parse_smart_log(json.dumps(doc))["temperature_sensors"]
        == nvme.parse_smart_log((shared_samples / SMART).read_text())["temperature_sensors"]
    )


@pytest.mark.parametrize("vid", [1.5, -1, 2**40])
def test_an_id_ctrl_vendor_id_that_is_no_pci_id_has_no_hex_form(shared_samples, vid):
    doc = json.loads((shared_samples / ID_CTRL).read_text())
    doc["vid"] = vid
    assert nvme.parse_id_ctrl(json.dumps(doc))["vid_hex"] is None


def test_a_deep_id_ctrl_is_refused_by_depth():
    text = '{"mn": "x", "psds": ' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(nvme.NvmeParseError, match="nested deeper than 16 levels"):
        nvme.parse_id_ctrl(text)


def test_nvme_list_ignores_subsystems_of_another_shape():
    text = json.dumps({"Devices": [{"Subsystems": [5, {"Controllers": "x", "Namespaces": [{"NameSpace": "n"}]}]}]})
    assert [entry["device_path"] for entry in nvme.parse_list(text)] == ["/dev/n"]


@pytest.mark.parametrize(
    "change",
    [
        {"children": 5},
        {"children": {"id": "core"}},
        {"children": [{"id": "cpu", "class": "processor", "configuration": ["cores", 4]}]},
        {"children": [{"id": "memory", "class": "memory", "size": "9" * 5000}]},
        {"children": [{"id": "memory", "class": "memory", "size": 2**70}]},
    ],
)
def test_lshw_nodes_of_another_shape_are_missing_not_a_crash(change):
    parsed = lshw.parse_lshw(json.dumps({"id": "host", "class": "system", **change}))
    assert parsed["memory_bytes"] is None


def test_a_deep_lshw_tree_is_refused():
    node: dict = {"id": "leaf", "class": "bus"}
    for _ in range(40):
        node = {"id": "bus", "class": "bus", "children": [node]}
    with pytest.raises(lshw.LshwParseError, match="nested deeper"):
        lshw.parse_lshw(json.dumps(node))


@pytest.mark.parametrize("value", [1e20, 2**63, -1e19])
def test_fio_figures_beyond_2_to_the_63_are_no_measurement(shared_samples, value):
    doc = copy.deepcopy(fio_doc(shared_samples))
    doc["jobs"][0]["read"]["iops"] = value
    with pytest.raises(FioOutputError, match="beyond the limit"):
        summarize(doc)


def test_fio_io_bytes_beyond_bigint_are_no_measurement(shared_samples):
    doc = copy.deepcopy(fio_doc(shared_samples))
    doc["jobs"][0]["write"]["io_bytes"] = 2**64 + 1
    with pytest.raises(FioOutputError, match="write_bytes"):
        summarize(doc)


def test_fio_output_with_nan_is_not_strict_json(shared_samples):
    text = (shared_samples / FIO_SAMPLE).read_text()
    broken = text.replace('"iops" : ', '"iops" : NaN, "x" : ', 1)
    assert broken != text
    with pytest.raises(FioOutputError, match="NaN is not a JSON number"):
        parse_fio_output(broken)


def test_fio_output_with_a_10_to_the_400_timestamp_is_not_strict_json(shared_samples):
    text = (shared_samples / FIO_SAMPLE).read_text()
    doc = json.loads(text)
    broken = text.replace(f'"timestamp" : {doc["timestamp"]}', '"timestamp" : 1' + "0" * 400, 1)
    assert broken != text
    with pytest.raises(FioOutputError, match="too large for a double"):
        parse_fio_output(broken)


def test_fio_output_nested_past_the_limit_is_refused_before_parsing():
    with pytest.raises(FioOutputError, match="nested deeper than 32 levels"):
        parse_fio_output('{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}")


def test_fio_percentiles_beyond_a_double_are_no_measurement(shared_samples):
    doc = copy.deepcopy(fio_doc(shared_samples))
    percentiles = doc["jobs"][0]["read"]["clat_ns"]["percentile"]
    percentiles[next(iter(percentiles))] = 1e300
    with pytest.raises(FioOutputError, match="percentile"):
        summarize(doc)


def test_lspci_figures_with_thousands_of_digits_or_two_dots_are_not_read():
    text = (
        "3b:00.0 Non-Volatile memory controller [0108]: Samsung Electronics Co Ltd [144d:a808]\n"
        "\t\tLnkCap:\tPort #0, Speed 8GT/s, Width x4, ASPM L1\n"
        f"\t\tLnkSta:\tSpeed 1.2.3GT/s, Width x{'9' * 5000}\n"
        f"\tNUMA node: {'9' * 5000}\n"
    )
    [device] = lspci.parse_lspci(text)
    assert (device.link_cap_speed_gts, device.link_cap_width) == (8.0, 4)
    assert (device.link_speed_gts, device.link_width, device.numa_node) == (None, None, None)


def test_an_lspci_report_beyond_its_size_limit_is_refused_before_parsing():
    with pytest.raises(lspci.LspciParseError, match="more than the limit"):
        lspci.parse_lspci(b"00:00.0 Host bridge: x\n" * (lspci.MAX_REPORT_BYTES // 20))
