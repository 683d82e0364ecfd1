"""first_received.content_matches compares each distinct set of stored figures once (copies of one bundle store the same figures
again and again), reads them as stored text, and only those whose IOPS lie in a range of its own: it must find exactly
what comparing every stored signature one by one finds. Held to that plain form (the matching as it was) on signatures of the shared real SSSPT runs: exact
copies, copies nudged within the tolerance, copies nudged beyond it, and a submission of other runs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pytest

from submissions import content, first_received
from submissions.models import FioOutputFingerprint, MeasurementSignature, Submission


def reference_content_matches(submission) -> dict:
    matches: dict = {}

    def match(submission_id):
        return matches.setdefault(submission_id, first_received.ContentMatch(submission_id))

    own_digests = FioOutputFingerprint.objects.filter(submission=submission)
    digest_paths = defaultdict(set)
    for digest, path in own_digests.values_list("digest", "path"):
        digest_paths[digest].add(path)
    shared = (
        FioOutputFingerprint.objects.filter(digest__in=own_digests.values("digest"))
        .exclude(submission=submission)
        .values_list("submission_id", "digest")
    )
    for submission_id, digest in shared:
        match(submission_id).exact_paths |= digest_paths[digest]
    own = list(
        MeasurementSignature.objects.filter(submission=submission).values_list("id", "direction", "values", "path")
    )
    theirs = list(
        MeasurementSignature.objects.exclude(submission=submission).values_list(
            "id", "submission_id", "direction", "values"
        )
    )
    matched_own, matched_theirs = defaultdict(set), defaultdict(set)
    for own_id, direction, values, path in own:  # every pair of one direction, no index, no range
        for their_id, submission_id, their_direction, their_values in theirs:
            if their_direction == direction and content.figures_agree(values, their_values):
                matched_own[submission_id].add(own_id)
                matched_theirs[submission_id].add(their_id)
                match(submission_id).near_paths.add(path)
    for submission_id, own_ids in matched_own.items():
        total = MeasurementSignature.objects.filter(submission_id=submission_id).count()
        match(submission_id).share = len(own_ids) / len(own)
        match(submission_id).reverse_share = len(matched_theirs[submission_id]) / max(1, total)
    return matches


def nudged(fingerprints, factor: float, *, every: int = 1) -> list:
    """The signatures with every `every`-th one's figures scaled by `factor` (its digests dropped: an edited copy)."""
    out = []
    for index, found in enumerate(f for f in fingerprints if f.kind == content.SIGNATURE):
        if index % every == 0:
            values = tuple(None if v is None else v * factor for v in found.values)
            found = replace(found, values=values)
        out.append(found)
    return out


def without_max_latency(fingerprints) -> list:
    """The signatures with their largest latency missing, as from outputs that do not report it (digests dropped)."""
    return [replace(f, values=(*f.values[:6], None)) for f in fingerprints if f.kind == content.SIGNATURE]


@pytest.mark.django_db
def test_grouped_matching_finds_what_one_by_one_matching_finds(shared_samples, django_user_model):
    runs = sorted((shared_samples / "ssspt-hp-iops-1").glob("*.json"))
    assert len(runs) > 60
    first = content.file_fingerprints(shared_samples, runs[:40])
    other = content.file_fingerprints(shared_samples, runs[40:60])
    owner, copier, third = (django_user_model.objects.create(username=name) for name in ("owner", "copier", "third"))
    variants = [
        (owner, first),
        (owner, first),  # resent as is
        (copier, first),  # an exact copy
        (copier, nudged(first, 1 + 5e-5)),  # within the tolerance: equal figures nowhere, agreeing ones everywhere
        (third, nudged(first, 1 + 5e-4, every=2)),  # half beyond the tolerance
        (third, other + nudged(first, 1 - 3e-5, every=3)),
        (owner, without_max_latency(other)),  # a figure missing: it matches only where it is missing too
        (copier, without_max_latency(other)),
        (third, nudged(without_max_latency(other), 1 + 5e-5, every=2)),
    ]
    submissions = []
    for index, (user, fingerprints) in enumerate(variants):
        submission = Submission.objects.create(uploader=user, sha256=f"{index:064x}", size=1, storage_name=f"b{index}")
        content.record_fingerprints(submission=submission, fingerprints=fingerprints)
        submissions.append(submission)

    compared = 0
    for submission in submissions:
        expected = {k: vars(m) for k, m in reference_content_matches(submission).items()}
        assert {k: vars(m) for k, m in first_received.content_matches(submission).items()} == expected
        # and from the rows the ingest reads while it locks them
        locked = first_received.lock_fingerprints(submission)
        assert {k: vars(m) for k, m in first_received.content_matches(submission, locked).items()} == expected
        compared += sum(1 for m in expected.values() if m["near_paths"])
    assert compared >= 20  # near matches were really found, not only agreed on being absent


def test_recording_again_stores_the_same_rows_and_a_shared_digest_once(django_user_model):
    user = django_user_model.objects.create(username="resender")
    submission = Submission.objects.create(uploader=user, sha256="f" * 64, size=1, storage_name="b-again")
    fingerprints = [
        content.Fingerprint(content.BYTES, "d" * 64, "fio/a.json"),
        content.Fingerprint(content.BYTES, "d" * 64, "fio/b.json"),  # the same bytes in a second output
        content.Fingerprint(content.MEASUREMENTS, "e" * 64, "fio/a.json"),
        content.Fingerprint(content.SIGNATURE, "", "fio/a.json", direction="read", values=(1, 2.5, 3, 4, 5, 6, 7.5)),
        content.Fingerprint(content.SIGNATURE, "", "fio/a.json", direction="write", values=(2.0, 4.0)),
    ]

    def stored():
        digests = sorted(
            FioOutputFingerprint.objects.filter(submission=submission).values_list("kind", "digest", "path")
        )
        signatures = sorted(
            MeasurementSignature.objects.filter(submission=submission).values_list(
                "path", "direction", "iops", "max_latency_ns", "values"
            )
        )
        return digests, signatures

    content.record_fingerprints(submission=submission, fingerprints=fingerprints)
    first = stored()
    assert first == (
        [(content.BYTES, "d" * 64, "fio/a.json"), (content.MEASUREMENTS, "e" * 64, "fio/a.json")],
        [("fio/a.json", "read", 2.5, 7.5, [1, 2.5, 3, 4, 5, 6, 7.5]), ("fio/a.json", "write", 4.0, None, [2.0, 4.0])],
    )
    content.record_fingerprints(submission=submission, fingerprints=fingerprints)  # a second validation attempt
    assert stored() == first
