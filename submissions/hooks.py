"""What intake asks of the app holding the dataset, one named slot each. That app (analysis) fills the slots in its
AppConfig.ready(), so submissions imports none of its modules: intake depends on this contract, the dataset on
intake, never the other way round. Calling a slot nobody filled raises HookNotRegistered, naming the slot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from nvmedb_client.bundle import VerifiedBundle
    from submissions.models import Submission

OutcomeStatus = Literal["published", "held", "rejected"]


@dataclass(frozen=True)
class IngestOutcome:
    """What became of a submission: published, held for review (rows kept, not public) or rejected (no rows).
    `review_hold` says whether the hold intake asked for (a new contributor's review) was applied: a trial's never
    is, since a trial is never public and review would hold nothing back."""

    status: OutcomeStatus
    reasons: list[str] = field(default_factory=list)
    review_hold: bool = False


class Ingest(Protocol):
    def __call__(self, *, submission: Submission, bundle: VerifiedBundle, review_reason: str = "") -> IngestOutcome:
        """Store `bundle`'s rows for `submission`; with a `review_reason` they are stored as held from the start."""


class RefreshDataset(Protocol):
    def __call__(self, *, submission: Submission) -> object:
        """`submission` left (or changed its place in) the public dataset: its drive models' aggregates follow."""


class RunsFollowStatus(Protocol):
    def __call__(self, *, submission: Submission, status: str, reasons: list[str]) -> object:
        """The dataset's half of a status change: a held or rejected submission's runs are not compliant."""


class SubmissionPage(Protocol):
    def __call__(self, *, submission: Submission, with_files: bool, viewer_id: int | None, owner_view: bool) -> dict:
        """The dataset's rows and sections of a submission's page, as template context."""


class Explain(Protocol):
    def __call__(self, submission: Submission) -> dict | None:
        """Why the submission's unit differs from the others of its model; None when there is nothing to place."""


class ClearReviewFlags(Protocol):
    def __call__(self, *, submission: Submission) -> int:
        """Staff approved `submission`: the held-for-review and outlier flags leave its runs; returns how many."""


class HookNotRegistered(RuntimeError):
    pass


F = TypeVar("F", bound=Callable)


class Hook(Generic[F]):
    """One slot: `register` fills it (the last registration wins), `call` is the registered function."""

    def __init__(self, name: str, purpose: str) -> None:
        self.name = name
        self.purpose = purpose
        self.function: F | None = None

    def register(self, function: F) -> None:
        self.function = function

    @property
    def call(self) -> F:
        if self.function is None:
            raise HookNotRegistered(
                f"Intake's '{self.name}' hook ({self.purpose}) is not registered: the app holding the dataset "
                "registers it in its AppConfig.ready(); is it in INSTALLED_APPS?"
            )
        return self.function


ingest: Hook[Ingest] = Hook("ingest", "store a verified bundle's dataset rows")
refresh_dataset: Hook[RefreshDataset] = Hook("refresh_dataset", "recompute the aggregates a submission counts in")
runs_follow_status: Hook[RunsFollowStatus] = Hook("runs_follow_status", "the runs' compliance follows a status")
submission_page: Hook[SubmissionPage] = Hook("submission_page", "the dataset rows of a submission's page")
explain: Hook[Explain] = Hook("explain", "why a submission's unit differs from the others of its model")
clear_review_flags: Hook[ClearReviewFlags] = Hook("clear_review_flags", "approval lifts held and outlier flags")
