"""The drive's PCIe link is one the specification allows before it bounds anything (issue 21): an lspci edited to a
link no hardware has, or a negotiated link above its capability, is held with the link named, never published."""

import pytest

from analysis.ingest import ingest_submission
from analysis.models import TestRun
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


def test_an_lspci_without_root_stays_a_missing_link_and_publishes(submission, make_verified, shared_samples):
    """Capabilities lspci could not read (no root) are no link, not a wrong one: recorded missing, as before."""

    def mutate(run_dir, manifest, files):
        path = run_dir / "system" / "lspci.txt"
        kept = [line for line in path.read_text().split("\n") if "LnkCap:" not in line and "LnkSta:" not in line]
        path.write_text("\n".join(kept))
        _pts_claim(run_dir, manifest, files)
        _device(run_dir, manifest, files, shared_samples)

    outcome = ingest_submission(submission=submission, bundle=make_verified(mutate=mutate))
    assert outcome.status == "published", outcome.reasons
    run = TestRun.objects.get(submission=submission)
    assert run.compliant is True and run.pcie_link.usable_bandwidth_bytes_per_s is None
