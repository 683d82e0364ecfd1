"""lspci -vvv parser against every dump in ../shared/samples/lspci/."""

import re

import pytest

from nvmedb_client.system.lspci import load_vendor_names, nvme_devices, parse_lspci


def _sample(shared_samples, needle):
    paths = [p for p in (shared_samples / "lspci").iterdir() if needle in p.name]
    assert len(paths) == 1, needle
    return paths[0].read_text(errors="replace")


def _raw_blocks(text):
    """Device blocks of the raw text keyed by slot, split the plain way: a device starts at an unindented slot."""
    blocks, slot = {}, None
    for line in text.splitlines():
        match = re.match(r"^((?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
        if match:
            slot = match.group(1)
            blocks[slot] = []
        elif slot:
            blocks[slot].append(line)
    return blocks


def _field_line(block, label):
    lines = [line.strip() for line in block if line.strip().startswith(label)]
    return lines[0] if lines else None


def test_every_sample_parses_and_link_values_match_the_raw_lines(shared_samples):
    for path in sorted((shared_samples / "lspci").iterdir()):
        text = path.read_text(errors="replace")
        devices = parse_lspci(text)
        blocks = _raw_blocks(text)
        assert [d.slot for d in devices] == list(blocks), path.name
        for device in devices:
            block = blocks[device.slot]
            cap, sta = _field_line(block, "LnkCap:"), _field_line(block, "LnkSta:")
            if cap is None:
                assert device.link_cap_speed_gts is None and device.link_cap_width is None
            else:
                speed = cap.split("Speed ")[1].split("GT/s")[0]
                assert device.link_cap_speed_gts == float(speed), (path.name, device.slot, cap)
                assert device.link_cap_width == int(cap.split("Width x")[1].split(",")[0].split()[0])
            if sta is None:
                assert device.link_speed_gts is None
                continue
            speed_text = sta.split("Speed ")[1].split(",")[0]
            if speed_text.startswith("unknown"):
                assert device.link_speed_gts is None
            else:
                assert device.link_speed_gts == float(speed_text.split("GT/s")[0]), (path.name, device.slot, sta)
            width_text = sta.split("Width x")[1]
            assert device.link_width == int(re.match(r"\d+", width_text).group())
            for note in ("downgraded", "ok", "overdriven"):
                if f"GT/s ({note})" in sta:
                    assert device.link_speed_note == note
                if re.match(rf"\d+ \({note}\)", width_text):
                    assert device.link_width_note == note
            if "(" not in sta:
                assert device.link_speed_note is None and device.link_width_note is None


def test_payload_sizes_come_from_devcap_and_devctl(shared_samples):
    text = _sample(shared_samples, "pciutils__pciutils__tests__cap-phy32")
    [drive] = parse_lspci(text)
    assert "DevCap: MaxPayload 512 bytes" in text
    assert "MaxPayload 256 bytes, MaxReadReq 256 bytes" in text
    assert drive.max_payload_supported_bytes == 512
    assert drive.max_payload_bytes == 256
    assert drive.max_read_request_bytes == 256


def test_a_gen5_x2_drive_downgraded_to_16gts(shared_samples):
    for needle in ("pciutils__pciutils__tests__cap-phy32", "local__lspci-3.9.0"):
        [drive] = parse_lspci(_sample(shared_samples, needle))
        assert drive.is_nvme
        assert (drive.link_cap_speed_gts, drive.link_cap_width) == (32.0, 2)
        assert (drive.link_speed_gts, drive.link_width) == (16.0, 2)
        assert drive.link_speed_note == "downgraded"
        assert drive.link_width_note is None
        assert drive.express_type == "Endpoint"


def test_stderr_lines_interleaved_in_the_report_are_ignored(shared_samples):
    laptop = _sample(shared_samples, "linuxhw__LsPCI")
    assert "pcilib: Error reading" in laptop
    devices = parse_lspci(laptop)
    assert not any("pcilib" in (d.subsystem or "") + d.description for d in devices)
    # lspci's libkmod warning landed mid-line ("V" + warning + "F Migration"); the line is whole again.
    rendered = _sample(shared_samples, "local__lspci-3.9.0")
    assert "Vlspci: Unable to load libkmod" in rendered
    assert len(parse_lspci(rendered)) == 1


def test_the_laptop_nvme_drive_with_ids_and_overdriven_tunnels(shared_samples):
    devices = parse_lspci(_sample(shared_samples, "linuxhw__LsPCI"))
    [drive] = nvme_devices(devices)
    assert (drive.slot, drive.vendor_id, drive.device_id, drive.class_id) == ("02:00.0", "144d", "a808", "0108")
    assert (drive.link_speed_gts, drive.link_width, drive.link_cap_speed_gts) == (8.0, 4, 8.0)
    assert (drive.max_payload_bytes, drive.max_read_request_bytes) == (256, 512)
    assert drive.driver == "nvme"
    overdriven = [d for d in devices if d.link_width_note == "overdriven"]
    assert overdriven and all(d.link_width == 16 and d.link_cap_width == 1 for d in overdriven)


def test_pre_3_6_format_servers_and_a_link_that_is_down(shared_samples):
    devices = parse_lspci(
        _sample(shared_samples, "ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__lspci_vvv_3")
    )
    drives = nvme_devices(devices)
    assert [d.slot for d in drives] == ["3b:00.0", "3c:00.0", "3d:00.0"]
    assert all((d.link_speed_gts, d.link_width, d.link_speed_note) == (8.0, 4, None) for d in drives)
    assert all(d.numa_node == 0 for d in drives)
    dl360 = parse_lspci(_sample(shared_samples, "Manouchehri__dl360p"))
    assert nvme_devices(dl360) == []
    host_bridge = dl360[0]
    assert (host_bridge.slot, host_bridge.link_speed_gts, host_bridge.link_width) == ("00:00.0", None, 0)
    assert (host_bridge.vendor_id, host_bridge.device_id, host_bridge.class_id) == ("8086", "0e00", "0600")


def test_wrapped_lines_are_joined_to_their_field(shared_samples):
    [bridge] = parse_lspci(_sample(shared_samples, "lspci_vvv_1"))
    assert bridge.slot == "00:00.0"
    assert bridge.express_type == "Root Port"
    assert (bridge.max_payload_supported_bytes, bridge.max_payload_bytes) == (256, 128)
    assert bridge.link_cap_speed_gts is None  # this fragment has no LnkCap


def test_device_headers_with_brackets_in_names_and_ok_annotations(shared_samples):
    devices = parse_lspci(_sample(shared_samples, "cap-exp-lnkcap2"))
    thunderbolt = next(d for d in devices if d.slot == "08:00.0")
    assert thunderbolt.description.endswith("[Alpine Ridge LP 2016]")
    assert thunderbolt.vendor_id is None  # no -nn in this dump
    assert thunderbolt.revision == "01" and thunderbolt.prog_if == "00"
    assert thunderbolt.express_type == "Downstream Port"
    assert all(d.link_speed_note == "ok" and d.link_width_note == "ok" for d in devices)


def test_vendor_and_device_names_split_with_a_vendor_table(shared_samples):
    names = {"144d": "Samsung Electronics Co Ltd", "1022": "Advanced Micro Devices, Inc. [AMD]"}
    devices = parse_lspci(_sample(shared_samples, "linuxhw__LsPCI"), vendor_names=names)
    [drive] = nvme_devices(devices)
    assert drive.vendor_name == "Samsung Electronics Co Ltd"
    assert drive.device_name == "NVMe SSD Controller SM981/PM981/PM983"
    unnamed = next(d for d in devices if d.slot == "00:00.0")  # lspci printed "Device [1022:14e8]"
    assert unnamed.vendor_name == "Advanced Micro Devices, Inc. [AMD]" and unnamed.device_name is None
    [pm174x] = parse_lspci(
        _sample(shared_samples, "pciutils__pciutils__tests__cap-phy32"), vendor_names=names
    )  # no ids: matched by prefix
    assert pm174x.vendor_name == "Samsung Electronics Co Ltd"
    assert (
        parse_lspci(_sample(shared_samples, "pciutils__pciutils__tests__cap-phy32"))[0].vendor_name is None
    )  # no table, no guess


def test_capabilities_denied_without_root_leave_the_link_unknown():
    text = (
        "0000:3b:00.0 Non-Volatile memory controller [0108]: Samsung Electronics Co Ltd NVMe SSD Controller "
        "PM9A1/PM9A3/980PRO [144d:a80a] (prog-if 02 [NVM Express])\n"
        "\tSubsystem: Samsung Electronics Co Ltd SSD 980 PRO [144d:a801]\n"
        "\tCapabilities: <access denied>\n"
        "\tKernel driver in use: nvme\n"
    )
    [drive] = parse_lspci(text)
    assert drive.capabilities_denied
    assert drive.address == "0000:3b:00.0" and drive.is_nvme
    assert drive.link_speed_gts is None and drive.max_payload_bytes is None


def test_load_vendor_names_reads_unindented_lines(tmp_path):
    ids = tmp_path / "pci.ids"
    ids.write_text(
        "# comment\n144d  Samsung Electronics Co Ltd\n\ta808  NVMe SSD Controller\n8086  Intel Corporation\n"
    )
    assert load_vendor_names(ids) == {"144d": "Samsung Electronics Co Ltd", "8086": "Intel Corporation"}


@pytest.mark.parametrize(
    "sample", ["cap-flitmode", "pciutils__pciutils__tests__cap-phy32", "lspci_vvv_3", "linuxhw__LsPCI"]
)
def test_nvme_endpoints_are_found_in_every_sample_that_has_one(shared_samples, sample):
    text = _sample(shared_samples, sample)
    expected = len(re.findall(r"^\S+ Non-Volatile memory controller", text, re.MULTILINE))
    assert len(nvme_devices(parse_lspci(text))) == expected > 0


def _drive_with_link(cap: str, sta: str) -> str:
    return (
        "0000:3b:00.0 Non-Volatile memory controller [0108]: Samsung Electronics Co Ltd NVMe SSD Controller "
        "PM9A1/PM9A3/980PRO [144d:a80a] (prog-if 02 [NVM Express])\n"
        "\tCapabilities: [70] Express (v2) Endpoint, MSI 00\n"
        f"\t\tLnkCap:\tPort #0, Speed {cap}, ASPM L1, Exit Latency L1 <64us\n"
        f"\t\tLnkSta:\t{sta}, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n"
        "\tKernel driver in use: nvme\n"
    )


@pytest.mark.parametrize("width", [12, 32])
def test_the_x12_and_x32_widths_of_the_specification_parse(width):
    [drive] = parse_lspci(_drive_with_link(f"32GT/s, Width x{width}", f"Speed 32GT/s, Width x{width}"))
    assert (drive.link_cap_speed_gts, drive.link_cap_width) == (32.0, width)
    assert (drive.link_speed_gts, drive.link_width) == (32.0, width)
    assert drive.link_unreadable == ()


def test_values_no_pcie_link_has_are_read_as_printed_for_the_server_to_judge():
    [drive] = parse_lspci(_drive_with_link("128GT/s, Width x999", "Speed 128GT/s, Width x999"))
    assert (drive.link_cap_speed_gts, drive.link_cap_width, drive.link_speed_gts, drive.link_width) == (
        128.0,
        999,
        128.0,
        999,
    )


def test_a_link_line_without_a_readable_speed_and_width_is_named():
    [drive] = parse_lspci(_drive_with_link("8GT/s, Width x4", "Speed 8GT/s, Width x4096"))
    assert drive.link_cap_width == 4 and drive.link_speed_gts is None and drive.link_width is None
    assert drive.link_unreadable == ("LnkSta",)
    assert drive.to_dict()["link_unreadable"] == ["LnkSta"]
