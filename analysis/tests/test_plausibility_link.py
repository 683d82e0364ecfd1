"""The drive's PCIe link is one the specification allows before it bounds anything (issue 21): an lspci edited to a
link no hardware has, or a negotiated link above its capability, is held with the link named, never published."""

import pytest

from analysis.ingest import ingest_submission
from analysis.models import TestRun
from analysis.tests.bundles import full_iops_plan_samples
from analysis.tests.test_plausibility_ingest import _device, _edit_fio, _pts_claim, _scale_direction

DRIVE_LINK = "Speed 8GT/s, Width x4"  # LnkCap and LnkSta of the sample's NVMe controllers (Gen3 x4)


def _lspci(run_dir, *, cap: str = DRIVE_LINK, sta: str = DRIVE_LINK) -> None:
    path = run_dir / "system" / "lspci.txt"
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        if "LnkCap:" in line:
            lines[i] = line.replace(DRIVE_LINK, cap)
        elif "LnkSta:" in line:
            lines[i] = line.replace(DRIVE_LINK, sta)
    path.write_text("\n".join(lines))


def _scale_latency(data, factor):
    """Latencies ÷ factor, so IOPS × latency (Little's law) stays what the queues allow."""
    for kind in ("slat_ns", "clat_ns", "lat_ns"):
        lat = data.get(kind)
        if not isinstance(lat, dict):
            continue
        for key in ("min", "max", "mean", "stddev"):
            if key in lat:
                lat[key] = lat[key] / factor
        for name in ("percentile",):
            if isinstance(lat.get(name), dict):
                lat[name] = {k: v / factor for k, v in lat[name].items()}


def _scaled(factor):
    """Every fio figure of every run × factor, latencies ÷ factor: a faster drive, consistent in itself."""

    def scale(job):
        for direction in ("read", "write"):
            _scale_direction(job[direction], factor)
            _scale_latency(job[direction], factor)

    return scale


def _attack(shared_samples, *, factor, cap, sta=None):
    def mutate(run_dir, manifest, files):
        _lspci(run_dir, cap=cap, sta=sta or cap)
        for run in manifest["runs"]:
            _edit_fio(run_dir, run, _scaled(factor))
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples)  # smart-logs that moved with the scaled bytes

    return mutate


def _not_public(submission):
    assert not TestRun.objects.filter(submission=submission, compliant=True).exists()


def test_the_reported_128_gts_x999_attack_scaled_500_times_is_not_published(submission, make_verified, shared_samples):
    """The published attack: lspci 'Speed 128GT/s, Width x999', fio, latency and smart-logs × 500."""
    bundle = make_verified(mutate=_attack(shared_samples, factor=500, cap="Speed 128GT/s, Width x999"))
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status in ("held", "rejected"), outcome.reasons
    _not_public(submission)
    named = [r for r in outcome.reasons if "128 GT/s x999" in r or "128 GT/s is no PCIe transfer rate" in r]
    assert named, outcome.reasons


def test_a_128_gts_x999_link_with_figures_any_link_could_carry_is_held_naming_it(
    submission, make_verified, shared_samples
):
    bundle = make_verified(mutate=_attack(shared_samples, factor=1, cap="Speed 128GT/s, Width x999"))
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "held", outcome.reasons
    reasons = [r for r in outcome.reasons if r.startswith("pcie_link: ")]
    assert any("LnkCap speed 128 GT/s is no PCIe transfer rate" in r for r in reasons), outcome.reasons
    assert any("LnkSta width x999 is no PCIe link width" in r for r in reasons), outcome.reasons
    _not_public(submission)


def test_a_negotiated_width_above_the_capability_is_held(submission, make_verified, shared_samples):
    bundle = make_verified(
        mutate=_attack(shared_samples, factor=1, cap="Speed 8GT/s, Width x4", sta="Speed 8GT/s, Width x16")
    )
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "held", outcome.reasons
    assert any(
        r.startswith("pcie_link: ") and "negotiated 8 GT/s x16 is above its capability 8 GT/s x4" in r
        for r in outcome.reasons
    ), outcome.reasons
    _not_public(submission)


@pytest.mark.parametrize("width", [12, 32])
def test_x12_and_x32_are_links_but_a_drive_wider_than_x16_is_held(submission, make_verified, shared_samples, width):
    link = f"Speed 8GT/s, Width x{width}"
    outcome = ingest_submission(
        submission=submission, bundle=make_verified(mutate=_attack(shared_samples, factor=1, cap=link))
    )
    run = TestRun.objects.get(submission=submission)
    assert (run.pcie_link.speed_gts, run.pcie_link.width, run.pcie_link.generation) == (8.0, width, 3)
    assert run.pcie_link.usable_bandwidth_bytes_per_s > 0
    if width == 12:
        assert outcome.status == "published", outcome.reasons
    else:
        assert outcome.status == "held", outcome.reasons
        assert any("LnkCap 8 GT/s x32 is wider than any NVMe drive" in r for r in outcome.reasons), outcome.reasons


def test_speed_unknown_for_the_drive_is_held_with_the_reason(submission, make_verified, shared_samples):
    bundle = make_verified(mutate=_attack(shared_samples, factor=1, cap=DRIVE_LINK, sta="Speed unknown, Width x4"))
    outcome = ingest_submission(submission=submission, bundle=bundle)
    assert outcome.status == "held", outcome.reasons
    assert any("LnkSta speed is unknown" in r for r in outcome.reasons), outcome.reasons


def test_an_lspci_without_root_stays_a_missing_link_and_publishes(submission, make_verified, shared_samples, tmp_path):
    """Capabilities lspci could not read (no root) are no link, not a wrong one: recorded missing, as before; a run
    of the whole PTS plan stays compliant without it."""

    def mutate(run_dir, manifest, files):
        path = run_dir / "system" / "lspci.txt"
        kept = [line for line in path.read_text().split("\n") if "LnkCap:" not in line and "LnkSta:" not in line]
        path.write_text("\n".join(kept))
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples)

    samples = full_iops_plan_samples(shared_samples, tmp_path / "samples")
    outcome = ingest_submission(submission=submission, bundle=make_verified(samples=samples, mutate=mutate))
    assert outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission)
    assert run.compliant is True and run.pcie_link.usable_bandwidth_bytes_per_s is None


def _another_submission(django_user_model):
    import hashlib
    import uuid

    from submissions.models import Submission

    user = django_user_model.objects.create_user(username=f"other-{uuid.uuid4().hex[:8]}", password="x" * 12)
    return Submission.objects.create(
        uploader=user, sha256=hashlib.sha256(uuid.uuid4().bytes).hexdigest(), size=1, storage_name="o.nvmedb.tar.gz"
    )


def _published_honest_unit(submission, make_verified, shared_samples):
    """An honest Gen3 x4 run of the sample's drive model (Samsung PM983, MZ1LB960HAJQ, an M.2 22110 drive)."""
    outcome = ingest_submission(
        submission=submission, bundle=make_verified(mutate=_attack(shared_samples, factor=1, cap=DRIVE_LINK))
    )
    assert outcome.status == "published", outcome.reasons
    submission.status = "published"
    submission.save()
    return TestRun.objects.get(submission=submission).drive_model


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("M.2 2280", 4),
        ("m.2 22110", 4),
        ("U.2", 4),
        ("U.3 15mm", 4),
        ("E1.S 9.5mm", 8),
        ("EDSFF E1.L", 8),
        ("E3.S 1T", 16),
        ("HHHL AIC", 16),
        ("add-in card", 16),
        ("", None),
        ("2.5-inch", None),
    ],
)
def test_the_widest_link_of_each_form_factor(text, width):
    from analysis.plausibility import form_factor_width

    assert form_factor_width(text) == width


def test_a_gen5_x16_capability_on_an_m2_drive_model_is_held(
    submission, make_verified, shared_samples, django_user_model
):
    """The second reported attack, Gen5 x16 with figures × 40, on a drive model whose form factor is recorded."""
    model = _published_honest_unit(submission, make_verified, shared_samples)
    model.form_factor = "M.2 22110"
    model.save()
    attack = _another_submission(django_user_model)
    bundle = make_verified(mutate=_attack(shared_samples, factor=40, cap="Speed 32GT/s, Width x16"))
    outcome = ingest_submission(submission=attack, bundle=bundle)
    assert outcome.status == "held", outcome.reasons
    assert (
        "pcie_link: the drive's link (3b:00.0): LnkCap 32 GT/s x16 is wider than the drive model's form factor "
        "'M.2 22110' carries (x4)"
    ) in outcome.reasons, outcome.reasons
    _not_public(attack)


def test_a_capability_beyond_every_published_unit_of_the_model_is_held(
    submission, make_verified, shared_samples, django_user_model, settings
):
    settings.NVMEDB_REVIEW_FIRST_N = 0  # every contributor counts as past review
    _published_honest_unit(submission, make_verified, shared_samples)
    attack = _another_submission(django_user_model)
    bundle = make_verified(mutate=_attack(shared_samples, factor=40, cap="Speed 32GT/s, Width x16"))
    outcome = ingest_submission(submission=attack, bundle=bundle)
    assert outcome.status == "held", outcome.reasons
    assert any(
        r.startswith("pcie_link: ")
        and "LnkCap 32 GT/s x16 is beyond 8 GT/s x4, the fastest and widest any of the 1 "
        "published units of this drive model reports"
        in r
        for r in outcome.reasons
    ), outcome.reasons


def test_without_a_link_the_figures_meet_the_fastest_link_the_model_can_have(
    submission, make_verified, shared_samples, django_user_model, settings
):
    settings.NVMEDB_REVIEW_FIRST_N = 0
    _published_honest_unit(submission, make_verified, shared_samples)

    def mutate(run_dir, manifest, files):
        path = run_dir / "system" / "lspci.txt"
        kept = [line for line in path.read_text().split("\n") if "LnkCap:" not in line and "LnkSta:" not in line]
        path.write_text("\n".join(kept))
        for run in manifest["runs"]:
            _edit_fio(run_dir, run, _scaled(20))  # 1 MiB reads at ~7.8 GB/s, twice what Gen3 x4 carries
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples)

    attack = _another_submission(django_user_model)
    outcome = ingest_submission(submission=attack, bundle=make_verified(mutate=mutate))
    assert outcome.status == "held", outcome.reasons
    assert any(
        r.startswith("link_bandwidth: ") and "8 GT/s x4 link, the fastest this drive model can have" in r
        for r in outcome.reasons
    ), outcome.reasons
