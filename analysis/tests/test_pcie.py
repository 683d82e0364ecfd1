"""The PCIe bandwidth model: the seed observations, and every real lspci sample."""

import pytest

from analysis import pcie
from analysis.bundle_system import link_end
from analysis.pcie import LinkEnd, assess_link
from nvmedb_client.system.lspci import parse_lspci

GB = 1e9


def drive(speed, width, *, cap_speed=None, cap_width=None, payload=256):
    return LinkEnd(
        address="01:00.0",
        capable_speed_gts=cap_speed or speed,
        capable_width=cap_width or width,
        speed_gts=speed,
        width=width,
        max_payload_bytes=payload,
    )


def test_a_gen2_x4_slot_reading_1_66_gb_per_s_is_bus_bound():
    # the seed case: a 970 EVO in a PCIe 2.0 x4 slot stops at ~1.6 GB/s because the bus does
    link = assess_link(drive(5.0, 4, cap_speed=8.0))
    utilization = pcie.link_utilization(
        read_bw_bytes_per_s=1.66 * GB,
        write_bw_bytes_per_s=None,
        usable_bandwidth_bytes_per_s=link.usable_bandwidth_bytes_per_s,
    )
    assert pcie.is_bus_bound(utilization)
    assert 0.9 <= utilization < 1.0


def test_the_same_drive_at_gen3_x4_reading_1_1_gb_per_s_is_not_bus_bound():
    link = assess_link(drive(8.0, 4))
    utilization = pcie.link_utilization(
        read_bw_bytes_per_s=1.1 * GB,
        write_bw_bytes_per_s=0.2 * GB,
        usable_bandwidth_bytes_per_s=link.usable_bandwidth_bytes_per_s,
    )
    assert not pcie.is_bus_bound(utilization)
    assert utilization == pytest.approx(1.1 * GB / link.usable_bandwidth_bytes_per_s)


def test_lnkcap_16gts_with_lnksta_8gts_is_below_capability():
    link = assess_link(drive(8.0, 4, cap_speed=16.0))
    assert link.below_capability is True
    assert "8 GT/s (Gen3)" in link.below_capability_reason and "16 GT/s (Gen4)" in link.below_capability_reason


def test_a_link_limited_by_its_upstream_port_is_not_below_capability():
    upstream = LinkEnd(capable_speed_gts=8.0, capable_width=4, speed_gts=8.0, width=4)
    assert assess_link(drive(8.0, 4, cap_speed=16.0), upstream).below_capability is False


def test_a_narrower_width_than_both_ends_support_is_below_capability():
    upstream = LinkEnd(capable_speed_gts=16.0, capable_width=4, speed_gts=16.0, width=2)
    link = assess_link(drive(16.0, 2, cap_width=4), upstream)
    assert link.below_capability is True and "x2" in link.below_capability_reason


@pytest.mark.parametrize(
    ("speed", "encoding"),
    [(2.5, 0.8), (5.0, 0.8), (8.0, 128 / 130), (16.0, 128 / 130), (32.0, 128 / 130), (64.0, 236 / 256)],
)
def test_line_encoding_per_generation(speed, encoding):
    assert pcie.raw_bandwidth(speed, 4) == pytest.approx(speed * 1e9 * 4 * encoding / 8)


def test_a_larger_max_payload_leaves_more_usable_bandwidth():
    small, large = pcie.usable_bandwidth(8.0, 4, 128), pcie.usable_bandwidth(8.0, 4, 512)
    assert small < large < pcie.raw_bandwidth(8.0, 4)
    assert small == pytest.approx(pcie.raw_bandwidth(8.0, 4) * 128 / (128 + 24))


def test_an_unknown_max_payload_assumes_the_reset_default_and_says_so():
    link = assess_link(drive(8.0, 4, payload=None))
    assert link.usable_bandwidth_bytes_per_s == pytest.approx(pcie.usable_bandwidth(8.0, 4, 128))
    assert "128" in link.missing["max_payload_bytes"]


def test_a_link_that_is_down_has_no_bandwidth_and_says_why():
    link = assess_link(LinkEnd(capable_speed_gts=8.0, capable_width=4, speed_gts=None, width=None))
    assert link.usable_bandwidth_bytes_per_s is None
    assert "speed_gts" in link.missing


def test_the_narrowest_link_on_the_path_bounds_the_bandwidth():
    upstream = LinkEnd(capable_speed_gts=8.0, capable_width=4, speed_gts=8.0, width=4)
    root = LinkEnd(capable_speed_gts=8.0, capable_width=16, speed_gts=5.0, width=1)
    link = assess_link(drive(16.0, 4), upstream, (root,))
    assert (link.path_speed_gts, link.path_width) == (5.0, 1)
    assert link.usable_bandwidth_bytes_per_s == pytest.approx(pcie.usable_bandwidth(5.0, 1, 256))


def _devices(shared_samples, name):
    return parse_lspci((shared_samples / "lspci" / name).read_bytes())


def test_the_model_holds_on_every_negotiated_link_of_every_lspci_sample(shared_samples):
    checked = 0
    for path in sorted((shared_samples / "lspci").iterdir()):
        for device in parse_lspci(path.read_bytes()):
            end = link_end(device)
            link = assess_link(end)
            if end.speed_gts is None or not end.width or end.problems:
                assert link.usable_bandwidth_bytes_per_s is None and link.missing["speed_gts"], path.name
                continue
            gen = pcie.generation(end.speed_gts)
            assert gen == link.generation and 1 <= gen <= 6, (path.name, device.slot)
            wire = end.speed_gts * 1e9 * end.width / 8
            assert 0 < link.usable_bandwidth_bytes_per_s < link.raw_bandwidth_bytes_per_s < wire
            checked += 1
    assert checked >= 30


def test_the_downgraded_gen5_pm1743_is_below_capability(shared_samples):
    for name in (
        "pciutils__pciutils__tests__cap-phy32",
        "local__lspci-3.9.0__rendered_from_pciutils_tests_cap-phy32.txt",
    ):
        (nvme,) = [d for d in _devices(shared_samples, name) if d.is_nvme]
        link = assess_link(link_end(nvme))
        assert (link.generation, link.device.width, link.device.status_note) == (4, 2, "downgraded")
        assert link.below_capability is True
        assert link.usable_bandwidth_bytes_per_s == pytest.approx(pcie.usable_bandwidth(16.0, 2, 256))


def test_the_laptop_drive_behind_its_root_port_runs_at_full_capability(shared_samples):
    devices = {
        d.slot: d
        for d in _devices(
            shared_samples,
            "linuxhw__LsPCI__Notebook__Framework__Laptop__Laptop_13__0EFA89DC0461__FEDORA-41__6.11.5-300.FC41.X86_64__X86_64__4C8183FD48",
        )
    }
    nvme, port = devices["02:00.0"], devices["00:02.4"]
    link = assess_link(link_end(nvme), link_end(port))
    assert link.below_capability is False  # Gen3 x4 drive on a Gen4 port: Gen3 is all both ends support
    assert link.generation == 3 and link.device.max_payload_bytes == 256
    assert "path" not in link.missing


def test_the_three_server_drives_are_gen3_x4(shared_samples):
    drives = [
        d
        for d in _devices(
            shared_samples,
            "opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__lspci_vvv_3",
        )
        if d.is_nvme
    ]
    assert len(drives) == 3
    for d in drives:
        link = assess_link(link_end(d))
        assert (link.generation, link.device.width, link.below_capability) == (3, 4, False)


def test_overdriven_tunnel_ports_are_read_without_error(shared_samples):
    devices = {
        d.slot: d
        for d in _devices(
            shared_samples,
            "linuxhw__LsPCI__Notebook__Framework__Laptop__Laptop_13__0EFA89DC0461__FEDORA-41__6.11.5-300.FC41.X86_64__X86_64__4C8183FD48",
        )
    }
    end = link_end(devices["00:03.1"])
    assert end.status_note == "overdriven"
    assert assess_link(end).generation == 1


def test_the_smallest_max_payload_on_the_path_applies():
    upstream = LinkEnd(capable_speed_gts=8.0, capable_width=4, speed_gts=8.0, width=4, max_payload_bytes=128)
    link = assess_link(drive(8.0, 4, payload=512), upstream)
    assert link.usable_bandwidth_bytes_per_s == pytest.approx(pcie.usable_bandwidth(8.0, 4, 128))


def _end(cap_speed, cap_width, speed, width, address="01:00.0", unreadable=()):
    problems = pcie.link_problems(
        capable_speed_gts=cap_speed, capable_width=cap_width, speed_gts=speed, width=width, unreadable=unreadable
    )
    return LinkEnd(
        address=address,
        capable_speed_gts=cap_speed,
        capable_width=cap_width,
        speed_gts=speed,
        width=width or None,
        max_payload_bytes=256,
        problems=problems,
    )


@pytest.mark.parametrize("speed", [2.5, 5.0, 8.0, 16.0, 32.0, 64.0])
@pytest.mark.parametrize("width", [1, 2, 4, 8, 12, 16, 32])
def test_every_speed_and_width_of_the_specification_is_a_link(speed, width):
    end = _end(speed, width, speed, width)
    assert end.problems == () and end.valid
    link = assess_link(end)
    assert link.problems == () and link.usable_bandwidth_bytes_per_s == pytest.approx(
        pcie.usable_bandwidth(speed, width, 256)
    )


def test_128_gts_and_x999_are_no_link_and_get_no_bandwidth():
    link = assess_link(_end(128.0, 999, 128.0, 999))
    assert link.usable_bandwidth_bytes_per_s is None and link.raw_bandwidth_bytes_per_s is None
    assert link.generation is None and link.below_capability is None
    text = " ".join(link.problems)
    assert "LnkCap speed 128 GT/s is no PCIe transfer rate" in text and "LnkSta width x999" in text
    assert all(problem.startswith("the drive's link (01:00.0): ") for problem in link.problems)


@pytest.mark.parametrize(
    ("speed", "width", "words"),
    [(8.0, 999, "LnkSta width x999"), (128.0, 4, "LnkSta speed 128 GT/s"), (8.0, 3, "LnkSta width x3")],
)
def test_a_valid_speed_with_an_invalid_width_or_the_reverse_is_no_link(speed, width, words):
    link = assess_link(_end(8.0, 4, speed, width))
    assert link.usable_bandwidth_bytes_per_s is None
    assert any(words in problem for problem in link.problems), link.problems


def test_negotiated_above_capability_is_contradictory():
    wider = assess_link(_end(16.0, 4, 16.0, 16))
    assert wider.usable_bandwidth_bytes_per_s is None
    assert wider.problems == ("the drive's link (01:00.0): negotiated 16 GT/s x16 is above its capability 16 GT/s x4",)
    faster = assess_link(_end(8.0, 4, 32.0, 4))
    assert "negotiated 32 GT/s x4 is above its capability 8 GT/s x4" in faster.problems[0]


def test_unknown_speed_a_down_link_and_an_unreadable_line_are_problems():
    assert "LnkSta speed is unknown" in _end(16.0, 4, None, 4).problems[0]
    assert _end(16.0, 4, 16.0, 0).problems == ("LnkSta width x0: the link is down",)
    assert _end(16.0, 4, None, None, unreadable=("LnkSta",)).problems == (
        "its LnkSta line holds no readable speed and width",
    )
    assert _end(16.0, 4, None, None).problems == ("lspci shows its LnkCap but not its LnkSta",)


def test_no_link_lines_at_all_is_no_problem_only_no_link():
    end = _end(None, None, None, None)
    link = assess_link(end)
    assert end.problems == () and link.problems == ()
    assert link.usable_bandwidth_bytes_per_s is None and "speed_gts" in link.missing


def test_a_port_on_the_path_with_no_valid_link_is_named_and_bounds_nothing():
    port = _end(16.0, 4, 16.0, 64, address="00:01.1")
    link = assess_link(_end(8.0, 4, 8.0, 4), port)
    assert link.problems == (
        "the link of 00:01.1 on the drive's path: LnkSta width x64 is no PCIe link width "
        "(x1, x2, x4, x8, x12, x16, x32)",
    )
    assert (link.path_speed_gts, link.path_width) == (8.0, 4)
