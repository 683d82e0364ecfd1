"""The outlier vote is on what the factor model leaves unexplained (analysis.outliers): a unit whose gap a recorded
factor explains (a Gen2 slot) is not an outlier; the same gap on a unit at the reference conditions is; without a
model the vote falls back to the raw value and says so."""

import pytest

from analysis.outliers import outlier_flags
from analysis.tests.factories import (
    DriveModelFactory,
    FirmwareFactory,
    PcieLinkFactory,
    PhysicalUnitFactory,
    SubmissionFactory,
    TestRunFactory,
    UserFactory,
)

METRIC = "bw_1m_read"
NORMAL = 6.5e9  # bytes/s, a Gen4 x4 drive's sequential read
GEN2_USABLE = 5e9 * 4 * 8 / 10 / 8 * 256 / 280  # Gen2 x4 after 8b/10b and TLP overhead, ~1.83 GB/s
GEN2_READ = 1.75e9


@pytest.fixture(autouse=True)
def review_first_three(settings):
    settings.NVMEDB_REVIEW_FIRST_N = 3


@pytest.fixture
def drive(db):
    return DriveModelFactory()


def established():
    user = UserFactory()
    for _ in range(3):
        SubmissionFactory(uploader=user)
    return user


def gen2_link():
    return PcieLinkFactory(speed_gts=5.0, generation=2, path_speed_gts=5.0, usable_bandwidth_bytes_per_s=GEN2_USABLE)


def run(drive, user, value, *, link=None, status="published", unit=None, firmware="1B2QEXM7"):
    published = {} if status == "published" else {"published_at": None}
    return TestRunFactory(
        drive_model=drive,
        test="tp",
        submission=SubmissionFactory(uploader=user, status=status, **published),
        unit=unit or PhysicalUnitFactory(drive_model=drive),
        firmware=FirmwareFactory(drive_model=drive, revision=firmware),
        pcie_link=link or PcieLinkFactory(),
        headline={METRIC: value},
    )


def peers(drive, *, gen2: int = 2):
    for i in range(6):  # normal units, ±1.5 % unit noise
        run(drive, established(), NORMAL * (1 + 0.006 * (i - 2.5)))
    for i in range(gen2):  # other contributors' units in a Gen2 slot
        run(drive, established(), GEN2_READ * (1 + 0.01 * i), link=gen2_link())


def test_a_gap_the_link_explains_is_not_an_outlier(drive):
    peers(drive)
    candidate = run(drive, established(), GEN2_READ * 1.005, link=gen2_link(), status="ingesting")
    assert outlier_flags([candidate]) == []


def test_a_unit_alone_at_a_level_is_explained_by_it_not_flagged(drive):
    peers(drive, gen2=0)
    candidate = run(drive, established(), GEN2_READ, link=gen2_link(), status="ingesting")
    assert outlier_flags([candidate]) == []


def test_the_same_gap_unexplained_is_an_outlier(drive):
    peers(drive)
    candidate = run(drive, established(), GEN2_READ * 1.005, status="ingesting")  # a Gen4 x4 link: nothing explains it
    found = outlier_flags([candidate])
    assert len(found) == 1
    reason = found[0][1]
    assert found[0][0] == candidate
    assert reason.endswith("labelled, not held. Factors: none explains it")
    assert "among 8 independent contributors' units" in reason and len(reason) <= 300


def test_a_contributor_with_many_units_is_one_vote(drive):
    """Six units of one lab all far from four others: one voice, so the candidate (with the four) is no outlier."""
    lab = established()
    for i in range(6):
        run(drive, lab, NORMAL * 0.5 * (1 + 0.01 * i))
    for i in range(4):
        run(drive, established(), NORMAL * (1 + 0.01 * i))
    assert outlier_flags([run(drive, established(), NORMAL, status="ingesting")]) == []
    for i in range(4):  # four more independent voices at the lab's value: now the candidate is the odd one
        run(drive, established(), NORMAL * 0.5 * (1 + 0.01 * i))
    found = outlier_flags([run(drive, established(), NORMAL * 0.3, status="ingesting")])
    assert len(found) == 1 and "among 9 independent contributors' units" in found[0][1]


def test_without_a_model_the_raw_value_is_judged_and_the_reason_says_so(drive):
    """Five units that each differ in firmware leave no residual degrees of freedom: too few units for a model."""
    for i in range(6):
        run(drive, established(), NORMAL * (1 + 0.005 * i), firmware=f"FW{i}")
    found = outlier_flags([run(drive, established(), NORMAL * 0.3, status="ingesting")])
    assert len(found) == 1
    assert "judged on the raw value, no factor model (too few units" in found[0][1]


def test_a_firmware_no_other_unit_runs_explains_nothing_yet(drive):
    """One unit cannot tell a firmware from its own difference: its gap is judged as if at the reference firmware."""
    peers(drive, gen2=0)
    found = outlier_flags([run(drive, established(), NORMAL * 0.5, status="ingesting", firmware="OLDFW")])
    assert len(found) == 1 and "firmware OLDFW (this unit only, not counted)" in found[0][1]
    for i in range(2):  # two other contributors' units run it, as slow: now the firmware is measured, and explains it
        run(drive, established(), NORMAL * 0.5 * (1 + 0.01 * i), firmware="OLDFW")
    assert outlier_flags([run(drive, established(), NORMAL * 0.5, status="ingesting", firmware="OLDFW")]) == []


def test_a_peer_alone_at_a_measured_condition_is_no_voice(drive):
    """The fit passes through a lone Gen2 unit (its residual is 0 by construction): as a voice it would only shrink
    the spread of the others' residuals."""
    peers(drive, gen2=1)
    found = outlier_flags([run(drive, established(), NORMAL * 0.6, status="ingesting")])
    assert len(found) == 1 and "among 6 independent contributors' units" in found[0][1]
