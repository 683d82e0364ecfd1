"""Who received a measurement first: the submission of another account, received earlier, that already holds (nearly)
all of a submission's content (its digests and signatures: submissions.content).

Two accounts' copies of one measurement are judged one after the other: `lock_fingerprints` locks every stored row
sharing a digest with the submission or a signature whose indexed figures (IOPS, largest latency) lie within the
tolerance of one of its own's, and returns those rows as it locked them, so `first_received_conflict` compares them
without reading them again.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, Q, TextField
from django.db.models.functions import Cast

from submissions.content import (
    INDEXED_FIGURES,
    NEAR_SHARE,
    NEAR_TOLERANCE,
    agreeing_bounds,
    agreeing_range,
    figures_agree,
)
from submissions.lookups import rows_any_of, rows_within
from submissions.models import FioOutputFingerprint, MeasurementSignature, Submission, SubmissionStatus

EXACT_RULE = "content_of_another_account"
NEAR_RULE = "near_duplicate"


@dataclass
class ContentMatch:
    """Another submission holding content of this one: `share` of this one's signatures match one of its, and
    `reverse_share` of its signatures match one of this one's; `exact_paths` are this one's fio outputs whose digest
    it holds too."""

    submission_id: object
    share: float = 0.0
    reverse_share: float = 0.0
    exact_paths: set = field(default_factory=set)
    near_paths: set = field(default_factory=set)

    @property
    def is_copy(self) -> bool:
        """Whether the two hold the same content: a shared digest, or at least NEAR_SHARE of either one's signatures
        matching the other's (either way: padding a copy with runs of one's own does not hide it). The one received
        later is the copy."""
        return bool(self.exact_paths) or max(self.share, self.reverse_share) >= NEAR_SHARE


@dataclass
class ContentRows:
    """A submission's stored content and every stored row that could match it: `digest_paths` its digests (→ its
    fio outputs holding each), `signatures` its signatures (id, direction, its content.INDEXED_FIGURES, figures as
    stored text, path); `digest_rows` (submission id, digest) of the rows sharing a digest, and `signature_rows` (id,
    submission id, direction, IOPS, figures as stored text) of the signatures whose indexed figures lie within the
    tolerance of one of its own's (content.agreeing_bounds), its own included."""

    digest_paths: dict[str, set[str]]
    signatures: list[tuple]
    digest_rows: list[tuple]
    signature_rows: list[tuple]


def content_rows(submission: Submission, *, lock: bool = False) -> ContentRows:
    """What `content_matches` compares, read in three queries; with `lock`, the rows sharing a digest or lying within
    the bounds of one of its signatures are locked (SELECT ... FOR UPDATE, in id order) by the query that reads them,
    until the transaction ends."""
    # the rows sharing a digest with this submission's, its own among them (its digests and their paths): the digests
    # go as an array of a subquery (lookups.AnyOf), not as a join with one: with its fresh rows not yet in the table's
    # statistics, PostgreSQL joined a subquery row by row (37 ms for one bundle's 754 digests, against 1 ms by the index)
    own_digests = FioOutputFingerprint.objects.filter(submission=submission).values("digest")
    columns = ("id", "submission_id", "digest", "path")
    digest_rows = rows_any_of(FioOutputFingerprint.objects.all(), "digest", own_digests, columns, lock=lock)
    digest_paths = defaultdict(set)
    for _, submission_id, digest, path in digest_rows:
        if submission_id == submission.pk:
            digest_paths[digest].add(path)
    # the figures as stored text: copies of one bundle store the same figures again and again, each text is parsed
    # once, and only where another submission's signature lies in a range to compare them with
    stored = MeasurementSignature.objects.annotate(figures=Cast("values", TextField()))
    own = stored.filter(submission=submission)
    signatures = list(own.values_list("id", "direction", *INDEXED_FIGURES, "figures", "path"))
    boxes = [(direction, agreeing_bounds(indexed)) for _, direction, *indexed, _, _ in signatures]
    columns = ("id", "submission_id", "direction", "iops", "figures")
    signature_rows = rows_within(stored, "direction", tuple(INDEXED_FIGURES), boxes, columns, lock=lock)
    return ContentRows(dict(digest_paths), signatures, [row[1:3] for row in digest_rows], signature_rows)


def lock_fingerprints(submission: Submission) -> ContentRows:
    """Locks every fingerprint row sharing a digest with `submission`, and every signature row whose IOPS and largest
    latency lie within the tolerance of one of its signatures', in id order, until the transaction ends: two
    accounts' copies of one measurement lock each other's rows, so they are judged one after the other, and only the
    first publishes. Returns the rows as it locked them (`first_received_conflict` judges by them)."""
    return content_rows(submission, lock=True)


def content_matches(submission: Submission, rows: ContentRows | None = None) -> dict[object, ContentMatch]:
    """Every other submission (any account, any status) sharing a digest or a signature with `submission`; `rows`:
    its content_rows, when the caller read (and locked) them."""
    rows = rows if rows is not None else content_rows(submission)
    matches: dict[object, ContentMatch] = {}

    def match(submission_id) -> ContentMatch:
        found = matches.get(submission_id)
        if found is None:
            found = matches[submission_id] = ContentMatch(submission_id)
        return found

    for submission_id, digest in rows.digest_rows:
        if submission_id != submission.pk:
            match(submission_id).exact_paths |= rows.digest_paths[digest]
    # each direction's signatures of other submissions, by IOPS: (IOPS, id, submission id, figures as stored text)
    theirs_by_direction: dict[str, list[tuple]] = defaultdict(list)
    for their_id, submission_id, direction, iops, figures in rows.signature_rows:
        if submission_id != submission.pk:
            theirs_by_direction[direction].append((iops, their_id, submission_id, figures))
    for theirs in theirs_by_direction.values():
        theirs.sort()
    parsed: dict[str, list] = {}  # stored text -> figures: copies of one bundle store the same figures again and again
    matched_own, matched_theirs = defaultdict(set), defaultdict(set)
    for own_id, direction, iops, *_, figures, path in rows.signatures if theirs_by_direction else ():
        theirs = theirs_by_direction.get(direction, ())
        low, high = agreeing_range(iops)
        start = bisect_left(theirs, (low,))
        values = None
        for their_iops, their_id, submission_id, their_figures in theirs[start:]:
            if their_iops > high:
                break
            # equal figures agree (the check would only confirm it, figure by figure)
            if their_figures != figures:
                values = parsed_figures(parsed, figures) if values is None else values
                if not figures_agree(values, parsed_figures(parsed, their_figures)):
                    continue
            matched_own[submission_id].add(own_id)
            matched_theirs[submission_id].add(their_id)
            match(submission_id).near_paths.add(path)
    totals = dict(
        MeasurementSignature.objects.filter(submission_id__in=list(matched_own))
        .values("submission_id")
        .annotate(n=Count("id"))
        .values_list("submission_id", "n")
    )
    for submission_id, own_ids in matched_own.items():
        theirs = max(1, totals.get(submission_id, 1))
        match(submission_id).share = len(own_ids) / len(rows.signatures)
        match(submission_id).reverse_share = len(matched_theirs[submission_id]) / theirs
    return matches


def parsed_figures(parsed: dict[str, list], text: str) -> list:
    found = parsed.get(text)
    if found is None:
        found = parsed[text] = json.loads(text)
    return found


def claims_content() -> Q:
    """Submissions that hold on to their content: any not rejected (received, being validated, held, published,
    withdrawn), and any published at some point (a later rejection by staff does not hand it to someone else)."""
    return Q(published_at__isnull=False) | ~Q(status=SubmissionStatus.REJECTED)


def _received(submission: Submission) -> tuple:
    return (submission.created, str(submission.pk))


@dataclass(frozen=True)
class Conflict:
    submission_id: object
    paths: list[str]
    rule: str = EXACT_RULE
    share: float = 1.0
    reverse_share: float = 1.0

    def sentence(self) -> str:
        shown = ", ".join(self.paths[:3]) + (f" and {len(self.paths) - 3} more" if len(self.paths) > 3 else "")
        if self.rule == NEAR_RULE:
            return (
                f"{self.share:.0%} of the measurements in these fio outputs match, within a relative "
                f"{NEAR_TOLERANCE:g}, {self.reverse_share:.0%} of those of submission {self.submission_id}, which "
                f"another contributor sent first ({shown}): a near-duplicate, the same measurement with small edits; "
                "a measurement is published once, under the account that ran it."
            )
        return (
            f"These fio outputs were first received from another contributor in submission {self.submission_id} "
            f"({shown}); a measurement is published once, under the account that ran it."
        )


def first_received_conflict(submission: Submission, rows: ContentRows | None = None) -> Conflict | None:
    """The submission received first of those holding (nearly) all of `submission`'s content, when it is another
    account's: `submission` is then a copy. None when `submission` came first or its own account did (re-sending
    one's own runs is allowed). `rows`: what lock_fingerprints returned, when the caller locked them."""
    matches = {k: m for k, m in content_matches(submission, rows).items() if m.is_copy}
    if not matches:
        return None
    holders = Submission.objects.filter(claims_content(), pk__in=list(matches)).only("pk", "created", "uploader_id")
    earlier = [other for other in holders if _received(other) < _received(submission)]
    if not earlier:
        return None
    first = min(earlier, key=_received)
    if first.uploader_id == submission.uploader_id:
        return None
    found = matches[first.pk]
    if found.exact_paths:
        return Conflict(submission_id=first.pk, paths=sorted(found.exact_paths), rule=EXACT_RULE)
    return Conflict(
        submission_id=first.pk,
        paths=sorted(found.near_paths),
        rule=NEAR_RULE,
        share=found.share,
        reverse_share=found.reverse_share,
    )


first_publisher_conflict = first_received_conflict  # the name before held and imported submissions counted too


def later_copies(submission: Submission) -> list[Submission]:
    """Published submissions of other accounts, received after `submission`, that hold (nearly) all of their content
    from it: copies that got published before `submission` was (a held original, or one received before this rule).
    With no published submission of another account received since, there is nothing to compare (a burst of one
    account's resends, say)."""
    candidates = Submission.objects.filter(status=SubmissionStatus.PUBLISHED, created__gte=submission.created)
    if not candidates.exclude(uploader_id=submission.uploader_id).exists():
        return []
    matches = {k: m for k, m in content_matches(submission).items() if m.is_copy}
    if not matches:
        return []
    published = (
        Submission.objects.filter(pk__in=list(matches), status=SubmissionStatus.PUBLISHED)
        .exclude(uploader_id=submission.uploader_id)
        .order_by("created")
    )
    return [other for other in published if _received(other) > _received(submission)]
