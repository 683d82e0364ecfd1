"""nvme-cli JSON parsers against the real 1.x and 2.x outputs in ../shared/samples/nvme-cli/."""

import json

import pytest

from nvmedb_client.system.nvme import (
    NvmeParseError,
    parse_id_ctrl,
    parse_id_ns,
    parse_list,
    parse_smart_log,
    parse_version,
    parse_volatile_write_cache,
    to_number,
)


def _samples(shared_samples, *needles):
    paths = sorted(p for p in (shared_samples / "nvme-cli").iterdir() if any(n in p.name for n in needles))
    assert paths, f"no nvme-cli sample matching {needles}"
    return paths


def _as_int(raw):
    """The number a sample shows, read independently of the parser: 310, 310.0 and "310" are all 310."""
    return int(float(str(raw).replace(",", "")))


SMART_COUNTERS = [
    "percent_used",
    "data_units_read",
    "data_units_written",
    "host_read_commands",
    "host_write_commands",
    "power_cycles",
    "power_on_hours",
    "unsafe_shutdowns",
    "media_errors",
    "num_err_log_entries",
    "thm_temp1_trans_count",
    "thm_temp2_trans_count",
]


def test_every_smart_log_sample_parses_to_the_values_it_shows(shared_samples):
    for path in _samples(shared_samples, "smart-log", "smartlog"):
        raw = json.loads(path.read_text())
        parsed = parse_smart_log(path.read_text())

        assert parsed["temperature_k"] == _as_int(raw["temperature"]), path.name
        assert parsed["temperature_c"] == _as_int(raw["temperature"]) - 273, path.name
        for key in SMART_COUNTERS:
            assert parsed[key] == _as_int(raw[key]), (path.name, key)
            assert isinstance(parsed[key], int), (path.name, key)
        assert parsed["data_written_bytes"] == _as_int(raw["data_units_written"]) * 512_000
        assert parsed["data_read_bytes"] == _as_int(raw["data_units_read"]) * 512_000
        assert parsed["warning_temp_time_min"] == _as_int(raw["warning_temp_time"])
        assert parsed["warning_temp_time_s"] == _as_int(raw["warning_temp_time"]) * 60
        assert parsed["critical_comp_time_min"] == _as_int(raw["critical_comp_time"])
        assert parsed["thm_temp1_total_time_s"] == _as_int(raw["thm_temp1_total_time"])
        assert parsed["power_on_s"] == _as_int(raw["power_on_hours"]) * 3600


def test_it_reads_critical_warning_as_an_int_or_as_the_2x_object(shared_samples):
    for path in _samples(shared_samples, "smart-log"):
        raw = json.loads(path.read_text())["critical_warning"]
        expected = _as_int(raw["value"] if isinstance(raw, dict) else raw)
        assert parse_smart_log(path.read_text())["critical_warning"] == expected
    v211 = _samples(shared_samples, "v2.11__nvme-smart-log")[0]
    assert isinstance(json.loads(v211.read_text())["critical_warning"], dict)


def test_a_field_the_output_lacks_is_none_with_a_reason_never_invented(shared_samples):
    # This 1.x fixture spells the key "critical_warrning": the value is missing, not guessed from the typo.
    path = _samples(shared_samples, "nvme_smartlog")[0]
    parsed = parse_smart_log(path.read_text())
    assert parsed["critical_warning"] is None
    assert "critical_warning" in parsed["missing"]
    assert parsed["temperature_sensors"] == [
        {"sensor": 1, "temperature_c": json.loads(path.read_text())["temperature_sensor_1"] - 273}
    ]


def test_float_string_and_comma_numbers_give_the_same_smart_log(shared_samples):
    ints = parse_smart_log(_samples(shared_samples, "nvme-smart-log.json")[0].read_text())
    floats = parse_smart_log(_samples(shared_samples, "smart-log-float")[0].read_text())
    strings = parse_smart_log(_samples(shared_samples, "smart-log-string")[0].read_text())
    with_commas = {
        key: f"{int(value):,}"
        for key, value in json.loads(_samples(shared_samples, "smart-log-string")[0].read_text()).items()
    }
    assert "," in with_commas["data_units_written"]
    assert floats == ints
    assert strings == ints
    assert parse_smart_log(with_commas) == ints


def test_it_refuses_json_that_is_not_a_smart_log(shared_samples):
    ocp = _samples(shared_samples, "ocp_command")[0]
    with pytest.raises(NvmeParseError, match="not an nvme smart-log"):
        parse_smart_log(ocp.read_text())
    with pytest.raises(NvmeParseError, match="printed nothing"):
        parse_smart_log("")


def test_id_ctrl_trims_padding_and_converts_thresholds(shared_samples):
    path = _samples(shared_samples, "id_ctrl")[0]
    raw = json.loads(path.read_text())
    parsed = parse_id_ctrl(path.read_text())
    assert raw["sn"] != raw["sn"].strip()  # the sample really is padded
    assert parsed["serial"] == raw["sn"].strip()
    assert parsed["model"] == raw["mn"].strip()
    assert parsed["firmware"] == raw["fr"].strip()
    assert parsed["vid"] == raw["vid"]
    assert parsed["vid_hex"] == f"{raw['vid']:04x}"
    assert parsed["ssvid"] == raw["ssvid"]
    assert parsed["tnvmcap_bytes"] == raw["tnvmcap"]
    assert parsed["unvmcap_bytes"] == raw["unvmcap"]
    assert parsed["wctemp_c"] == raw["wctemp"] - 273
    assert parsed["cctemp_c"] == raw["cctemp"] - 273
    assert parsed["fna"] == raw["fna"]
    assert parsed["crypto_erase_supported"] is bool(raw["fna"] & 0b100)
    assert parsed["sanicap"] == raw["sanicap"]
    assert parsed["sanitize_crypto_erase_supported"] is bool(raw["sanicap"] & 1)
    assert parsed["oacs"] == raw["oacs"]
    assert parsed["format_nvm_supported"] is bool(raw["oacs"] & 0b10)
    assert parsed["volatile_write_cache_present"] is bool(raw["vwc"] & 1)


def test_id_ctrl_records_unreported_thresholds_and_capacity_as_missing(shared_samples):
    raw = json.loads(_samples(shared_samples, "id_ctrl")[0].read_text())
    parsed = parse_id_ctrl({**raw, "wctemp": 0, "tnvmcap": 0})
    assert parsed["wctemp_c"] is None and "wctemp_c" in parsed["missing"]
    assert parsed["tnvmcap_bytes"] is None and "optional" in parsed["missing"]["tnvmcap_bytes"]
    without_sanicap = {key: value for key, value in raw.items() if key != "sanicap"}
    assert parse_id_ctrl(without_sanicap)["sanitize_block_erase_supported"] is None


def test_nvme_list_flat_1x_shape(shared_samples):
    path = _samples(shared_samples, "go.d.plugin__modules__nvme__testdata__nvme-list.json")[0]
    raw = json.loads(path.read_text())["Devices"]
    parsed = parse_list(path.read_text())
    assert [entry["device_path"] for entry in parsed] == [device["DevicePath"] for device in raw]
    assert [entry["serial"] for entry in parsed] == [device["SerialNumber"] for device in raw]
    assert parsed[0]["physical_size_bytes"] == raw[0]["PhysicalSize"]
    assert parsed[0]["sector_size_bytes"] == raw[0]["SectorSize"]
    assert parsed[0]["nsid"] == raw[0]["NameSpace"]


def test_nvme_list_2_11_subsystem_tree(shared_samples):
    path = _samples(shared_samples, "v2.11__nvme-list")[0]
    controllers = [
        controller
        for subsystem in json.loads(path.read_text())["Devices"][0]["Subsystems"]
        for controller in subsystem["Controllers"]
    ]
    parsed = parse_list(path.read_text())
    assert len(parsed) == sum(len(controller["Namespaces"]) for controller in controllers)
    assert parsed[0]["device_path"] == "/dev/" + controllers[0]["Namespaces"][0]["NameSpace"]
    assert parsed[0]["pci_address"] == controllers[0]["Address"]
    assert parsed[0]["firmware"] == controllers[0]["Firmware"]
    assert parsed[0]["nsid"] == controllers[0]["Namespaces"][0]["NSID"]


def test_nvme_list_without_devices_and_the_sanitized_sample(shared_samples):
    assert parse_list(_samples(shared_samples, "nvme-list-empty")[0].read_text()) == []
    ocp = parse_list(_samples(shared_samples, "nvme_list")[0].read_text())
    assert ocp[0]["device_path"] == "/dev/nvme0n1"
    assert ocp[0]["nsid"] is None  # this sample has no NameSpace key
    with pytest.raises(NvmeParseError, match="no 'Devices'"):
        parse_list('{"critical_warning": 0}')


def test_id_ns_picks_the_current_lba_format():
    # nvme-cli prints id-ns this way in 1.x and 2.x; no id-ns sample exists in ../shared, so the shape is built here.
    doc = {
        "nsze": 1875385008,
        "ncap": 1875385008,
        "nuse": 1000,
        "nlbaf": 1,
        "flbas": 1,
        "lbafs": [{"ms": 0, "ds": 9, "rp": 2}, {"ms": 8, "ds": 12, "rp": 0}],
    }
    parsed = parse_id_ns(json.dumps(doc))
    assert parsed["lba_format_index"] == 1
    assert parsed["lba_data_size_bytes"] == 4096
    assert parsed["lba_metadata_size_bytes"] == 8
    assert parsed["size_bytes"] == 1875385008 * 4096
    assert parsed["used_bytes"] == 1000 * 4096
    assert parse_id_ns({**doc, "flbas": 0})["size_bytes"] == 1875385008 * 512


def test_id_ns_uses_the_high_bits_of_flbas_and_reports_an_unknown_format():
    formats = [{"ms": 0, "ds": 9, "rp": 0}] * 16 + [{"ms": 0, "ds": 12, "rp": 0}]
    doc = {"nsze": 10, "ncap": 10, "nuse": 0, "nlbaf": 16, "flbas": 0b0010_0000, "lbafs": formats}
    assert parse_id_ns(doc)["lba_format_index"] == 16
    assert parse_id_ns(doc)["lba_data_size_bytes"] == 4096
    broken = parse_id_ns({**doc, "lbafs": []})
    assert broken["size_bytes"] is None
    assert "no LBA format 16" in broken["missing"]["lba_data_size_bytes"]


def test_volatile_write_cache_from_get_feature_output():
    # The three spellings nvme-cli 1.x and 2.x print for feature 0x06.
    assert parse_volatile_write_cache("get-feature:0x06 (Volatile Write Cache), Current value:0x00000001\n")["enabled"]
    assert not parse_volatile_write_cache("get-feature:0x6 (Volatile Write Cache), Current value:00000000")["enabled"]
    assert parse_volatile_write_cache("get-feature:0x6 (Volatile Write Cache), Current value:0x000001")["value"] == 1
    with pytest.raises(NvmeParseError):
        parse_volatile_write_cache("NVMe status: INVALID_FIELD")


def test_nvme_version_of_2x_and_1x():
    assert parse_version("nvme version 2.3 (git 2.3)\nlibnvme version 1.3 (git 1.3)\n") == {
        "nvme-cli": "2.3",
        "libnvme": "1.3",
    }
    assert parse_version("nvme version 1.16\n") == {"nvme-cli": "1.16", "libnvme": None}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (7, 7),
        (7.0, 7),
        (7.5, 7.5),
        ("7", 7),
        (" 1,234,567 ", 1234567),
        ("2.5", 2.5),
        ("abc", None),
        (None, None),
        (True, None),
        (False, None),
        (2**64 - 1, 2**64 - 1),
        (2**64, None),
        (-(2**64), None),
    ],
)
def test_numbers_in_every_spelling(raw, expected):
    assert to_number(raw) == expected
