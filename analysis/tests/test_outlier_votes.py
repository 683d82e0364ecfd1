"""Outliers are judged by one voice per independent contributor (the median of their units, each unit the median of
its runs), among contributors past review: crafted populations of fresh accounts, many runs of one unit, one
contributor's many units and the submitter's own runs cannot outvote honest peers."""

import pytest

from analysis.outliers import outlier_flags as _outliers
from analysis.tests.factories import (
    DriveModelFactory,
    PhysicalUnitFactory,
    SubmissionFactory,
    TestRunFactory,
    UserFactory,
)

HONEST = 700_000.0
FAKE = 70_000.0
METRIC = "iops_4k_write"


@pytest.fixture(autouse=True)
def review_first_three(settings):
    settings.NVMEDB_REVIEW_FIRST_N = 3


@pytest.fixture
def drive(db):
    return DriveModelFactory()


def contributor(*, accepted: int):
    """An account with `accepted` published submissions (without runs of the drive under test)."""
    user = UserFactory()
    for _ in range(accepted):
        SubmissionFactory(uploader=user)
    return user


def publish(drive, user, value: float, *, unit=None):
    return TestRunFactory(
        drive_model=drive,
        submission=SubmissionFactory(uploader=user),
        unit=unit or PhysicalUnitFactory(drive_model=drive),
        headline={METRIC: value},
    )


def candidate(drive, user, value: float):
    """The run being ingested: its submission is not published yet."""
    return TestRunFactory(
        drive_model=drive,
        submission=SubmissionFactory(uploader=user, status="ingesting", published_at=None),
        headline={METRIC: value},
    )


def test_five_fresh_accounts_publishing_fakes_cannot_make_an_established_run_an_outlier(drive):
    fresh = [contributor(accepted=0) for _ in range(5)]
    for i, user in enumerate(fresh):
        unit = PhysicalUnitFactory(drive_model=drive)
        for _ in range(2):  # each fake was let through (e.g. approved by mistake); the accounts are still in review
            publish(drive, user, FAKE * (1 + 0.02 * i), unit=unit)
    honest = contributor(accepted=5)
    assert _outliers([candidate(drive, honest, HONEST)]) == []

    # the same population once those accounts are past review: now they are independent voters, and it is flagged
    for user in fresh:
        for _ in range(3):
            SubmissionFactory(uploader=user)
    found = _outliers([candidate(drive, honest, HONEST)])
    assert len(found) == 1
    assert "among 5 independent contributors' units (one voice each)" in found[0][1]


def test_many_runs_of_one_unit_are_one_vote(drive):
    stuffer = contributor(accepted=3)
    unit = PhysicalUnitFactory(drive_model=drive)
    for i in range(20):
        publish(drive, stuffer, FAKE * (1 + 0.001 * i), unit=unit)
    for i in range(4):
        publish(drive, contributor(accepted=3), HONEST * (1 + 0.02 * i))
    assert _outliers([candidate(drive, contributor(accepted=3), HONEST)]) == []


def test_one_contributors_five_units_cannot_outvote_one_other_contributors_unit(drive):
    """Issue 21: a lab (or one person's many serials) is one voice however many units it uploads."""
    lab = contributor(accepted=3)
    for i in range(5):
        publish(drive, lab, FAKE * (1 + 0.02 * i))  # five units of one contributor, all far from the others
    for i in range(4):
        publish(drive, contributor(accepted=3), HONEST * (1 + 0.02 * i))  # four others, one unit each
    assert _outliers([candidate(drive, contributor(accepted=3), HONEST)]) == []  # 5 voices: 4 honest, 1 lab
    # one more independent contributor at the lab's value is still one voice against four
    publish(drive, contributor(accepted=3), FAKE)
    assert _outliers([candidate(drive, contributor(accepted=3), HONEST)]) == []


def test_one_contributors_units_are_one_voice_too_few_to_judge(drive):
    lab = contributor(accepted=3)
    for i in range(5):
        publish(drive, lab, HONEST * (1 + 0.02 * i))  # five units of one lab: one voice, below MIN_PEERS
    # a third of the others (three times as fast would pass the link's bandwidth: the others would be link-limited)
    assert _outliers([candidate(drive, contributor(accepted=3), HONEST / 3)]) == []
    for i in range(4):
        publish(drive, contributor(accepted=3), HONEST * (1 + 0.02 * i))
    found = _outliers([candidate(drive, contributor(accepted=3), HONEST / 3)])
    assert len(found) == 1 and "robust z" in found[0][1] and "5 independent contributors" in found[0][1]


def test_the_submitters_own_runs_are_not_their_peers(drive):
    me = contributor(accepted=3)
    for i in range(6):
        publish(drive, me, FAKE * (1 + 0.01 * i))  # my own earlier (or staged) runs
    for i in range(5):
        publish(drive, contributor(accepted=3), HONEST * (1 + 0.02 * i))
    assert _outliers([candidate(drive, me, HONEST)]) == []
    assert len(_outliers([candidate(drive, me, FAKE)])) == 1


def test_staff_vote_from_their_first_submission(drive):
    for i in range(5):
        publish(drive, UserFactory(is_staff=True), HONEST * (1 + 0.02 * i))
    assert len(_outliers([candidate(drive, contributor(accepted=3), FAKE)])) == 1


def test_trials_are_never_the_peers_of_a_real_run(drive):
    """A file-target run of the pts profile measured a file system: it votes for no device run."""
    for i in range(6):
        TestRunFactory(
            drive_model=drive,
            submission=SubmissionFactory(uploader=contributor(accepted=3)),
            target_kind="file",
            headline={METRIC: FAKE * (1 + i / 100)},
        )
    assert _outliers([candidate(drive, UserFactory(), HONEST)]) == []
    honest = [publish(drive, contributor(accepted=3), HONEST * (1 + i / 100)) for i in range(6)]
    assert honest and _outliers([candidate(drive, UserFactory(), FAKE)]) != []
