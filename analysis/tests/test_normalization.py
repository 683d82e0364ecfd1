"""Over-provisioning, drive identity, wear, temperature and unwritten-data estimates."""

import json

import pytest

from analysis import thermal, unwritten
from analysis.identity import canonical_name, drive_slug, identity_from_id_ctrl, serial_hash, vendor_name
from analysis.overprovisioning import overprovisioning
from analysis.wear import wear_from_smart
from nvmedb_client.system import nvme

ID_CTRL = (
    "nvme-cli/opencomputeproject__ocp-diag-autoval-ssd__src__autoval_ssd__unittest__mock__util_outputs__id_ctrl.json"
)


def test_a_1_92_tb_drive_exposed_as_1_6_tb_hides_a_sixth_of_its_capacity():
    share, reason = overprovisioning(raw_capacity_bytes=1_920_000_000_000, exposed_bytes=1_600_000_000_000)
    assert share == pytest.approx(1 - 1.6 / 1.92) and reason == ""


def test_a_drive_exposing_everything_has_no_extra_overprovisioning():
    assert overprovisioning(raw_capacity_bytes=10**12, exposed_bytes=10**12)[0] == 0


@pytest.mark.parametrize(
    ("raw", "exposed", "words"), [(0, 10**9, "tnvmcap"), (10**9, None, "namespace"), (10**9, 2 * 10**9, "larger")]
)
def test_overprovisioning_that_cannot_be_known_says_why(raw, exposed, words):
    share, reason = overprovisioning(raw_capacity_bytes=raw, exposed_bytes=exposed)
    assert share is None and words in reason


def _id_ctrl(**fields):
    doc = {
        "vid": 0x144D,
        "ssvid": 0x144D,
        "sn": "S4EVNF0M123456P     ",
        "fr": "2B2QEXM7",
        "tnvmcap": 500107862016,
        "wctemp": 358,
        "cctemp": 358,
        "mn": "Samsung SSD 970 EVO Plus 500GB          ",
    }
    doc.update(fields)
    return nvme.parse_id_ctrl(json.dumps(doc))


def test_padding_and_case_do_not_split_one_drive_model():
    a = identity_from_id_ctrl(_id_ctrl())
    b = identity_from_id_ctrl(_id_ctrl(mn="  Samsung SSD 970 EVO Plus 500GB\x00\x00", sn="OTHER"))
    assert a.name == b.name == "Samsung SSD 970 EVO Plus 500GB"
    assert (a.vendor, a.capacity_bytes) == ("Samsung", 500107862016)
    assert drive_slug(a.name, a.capacity_bytes) == "samsung-ssd-970-evo-plus-500gb"


def test_capacity_variants_are_distinct_models():
    small = identity_from_id_ctrl(_id_ctrl())
    large = identity_from_id_ctrl(_id_ctrl(mn="Samsung SSD 970 EVO Plus 1TB", tnvmcap=1000204886016))
    assert (small.model_number, small.capacity_bytes) != (large.model_number, large.capacity_bytes)
    assert drive_slug(small.name, small.capacity_bytes) != drive_slug(large.name, large.capacity_bytes)


def test_the_brand_in_the_model_number_wins_over_the_controller_maker():
    assert vendor_name(model_number="Seagate FireCuda 530 ZP4000GM30023", vid=0x1987, ssvid=0x1BB1) == "Seagate"
    assert vendor_name(model_number="ZP4000GM30023", vid=0x1987, ssvid=0x1BB1) == "Seagate"
    assert vendor_name(model_number="ZP4000GM30023", vid=0x1987) == "Phison"
    assert vendor_name(model_number="XYZ", vid=0xABCD) == "Unknown vendor (PCI 0xabcd)"


def test_a_bare_part_number_gets_its_vendor_in_front():
    assert canonical_name("Samsung", "SAMSUNG MZQL21T9HCJR-00A07") == "Samsung MZQL21T9HCJR-00A07"
    assert canonical_name("Intel", "INTEL SSDPEKKW256G8") == "Intel SSDPEKKW256G8"


def test_the_real_id_ctrl_sample_maps_its_pci_vendor_id(shared_samples):
    identity = identity_from_id_ctrl(nvme.parse_id_ctrl((shared_samples / ID_CTRL).read_bytes()))
    assert identity.vendor == "Samsung"  # the sanitised sample says "Unknown" in mn; vid 0x144d says Samsung
    assert identity.capacity_bytes == 900185481216 and identity.firmware == "EDA76F2Q"


def test_the_serial_hash_is_keyed_stable_and_never_the_serial():
    one = serial_hash("S4EVNF0M123456P", key="k1", model_number="m")
    assert one == serial_hash(" S4EVNF0M123456P ", key="k1", model_number="m")
    assert one != serial_hash("S4EVNF0M123456P", key="k2", model_number="m")
    assert "S4EVNF0M123456P" not in one and len(one) == 64


def test_wear_comes_from_the_first_smart_log(shared_samples):
    smart = nvme.parse_smart_log(
        (shared_samples / "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json").read_bytes()
    )
    wear = wear_from_smart(smart)
    assert (wear.percentage_used, wear.power_on_hours) == (2, 4974)
    assert wear.data_written_bytes == 136157684 * 512_000
    assert wear_from_smart(None).missing["power_on_hours"]


def test_a_growing_throttle_counter_flags_the_run(shared_samples):
    text = (shared_samples / "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json").read_text()
    before = nvme.parse_smart_log(text)
    hot = json.loads(text) | {"temperature": 352, "thm_temp1_trans_count": 3}
    after = nvme.parse_smart_log(json.dumps(hot))
    verdict = thermal.assess([(before, after)], warning_k=358, critical_k=363)
    assert verdict.throttled and "thm_temp1_trans_count +3" in verdict.reason
    assert verdict.max_temperature_k == 352
    calm = thermal.assess([(before, before)], warning_k=358, critical_k=363)
    assert not calm.throttled and calm.max_temperature_k == 310


def test_reaching_the_warning_temperature_flags_the_run(shared_samples):
    text = (shared_samples / "nvme-cli/netdata__go.d.plugin__modules__nvme__testdata__nvme-smart-log.json").read_text()
    after = nvme.parse_smart_log(json.dumps(json.loads(text) | {"temperature": 360}))
    verdict = thermal.assess([(nvme.parse_smart_log(text), after)], warning_k=358, critical_k=363)
    assert verdict.throttled and "warning threshold" in verdict.reason


def test_reads_before_any_write_since_the_purge_are_flagged():
    gib = 1024**3
    runs = [
        unwritten.RunIO("read-first", "tp", "read", 100, 0),
        unwritten.RunIO("fill", "tp", "write", 0, 2 * gib),
        unwritten.RunIO("read-after", "tp", "read", 100, 0),
        unwritten.RunIO("new-block-read", "iops", "randrw", 100, 0),
    ]
    flagged = unwritten.unwritten_reads(runs, active_range_bytes=gib)
    assert set(flagged) == {"read-first", "new-block-read"}


def test_random_writes_cover_the_range_only_gradually():
    gib = 1024**3
    runs = [unwritten.RunIO("w", "b", "randwrite", 0, gib), unwritten.RunIO("r", "b", "randrw", 65, 0)]
    coverage = unwritten.unwritten_reads(runs, active_range_bytes=gib)["r"]
    assert coverage == pytest.approx(1 - 2.718281828**-1, rel=1e-6)
    runs[0] = unwritten.RunIO("w", "b", "randwrite", 0, 6 * gib)
    assert unwritten.unwritten_reads(runs, active_range_bytes=gib) == {}
