"""Issue 23's intake seam: submissions imports nothing from analysis (it asks through submissions.hooks, which
analysis fills at start-up), a slot nobody filled says so, and review is decided before the ingest publishes."""

import ast
from pathlib import Path

import pytest

from submissions import hooks, pipeline, services
from submissions.models import Submission, SubmissionStatus
from submissions.tests.conftest import register_key

SUBMISSIONS = Path(__file__).resolve().parents[1]
DATASET_APPS = {"analysis", "browse", "datasets", "importers"}  # intake reaches them only through submissions.hooks


def imported_modules(path: Path) -> set[str]:
    """Every module `path` imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_no_intake_module_imports_the_dataset_or_its_read_side():
    sources = [p for p in SUBMISSIONS.rglob("*.py") if "tests" not in p.relative_to(SUBMISSIONS).parts]
    assert len(sources) > 20, "the scan reads intake's modules"
    offenders = {
        str(path.relative_to(SUBMISSIONS)): sorted(m for m in imported_modules(path) if m.split(".")[0] in DATASET_APPS)
        for path in sources
    }
    assert {path: modules for path, modules in offenders.items() if modules} == {}


def test_every_slot_is_filled_at_start_up_and_an_empty_one_names_itself():
    slots = [hooks.ingest, hooks.refresh_dataset, hooks.runs_follow_status, hooks.submission_page, hooks.explain,
             hooks.clear_review_flags]  # fmt: skip
    assert all(slot.function is not None for slot in slots), [slot.name for slot in slots if slot.function is None]
    empty = hooks.Hook("refresh_dataset", "recompute the aggregates a submission counts in")
    with pytest.raises(hooks.HookNotRegistered, match="'refresh_dataset' hook .*AppConfig.ready"):
        empty.call(submission=None)


def test_a_site_without_an_ingest_leaves_the_submission_to_retry_instead_of_blaming_the_bundle(
    owner, publishable_bundle, monkeypatch
):
    with publishable_bundle(register_key(owner)).open("rb") as stream:
        submission, _ = services.submission_create(uploader=owner, stream=stream)
    monkeypatch.setattr(hooks.ingest, "function", None)
    with pytest.raises(hooks.HookNotRegistered):
        pipeline.submission_validate(submission_id=submission.pk)
    assert Submission.objects.get(pk=submission.pk).status == SubmissionStatus.INGESTING


def test_review_is_decided_before_the_ingest_so_nothing_is_taken_back_out(
    settings, owner, owner_api, publishable_bundle, upload, monkeypatch
):
    """A new contributor's submission reaches the ingest already held: its rows are stored held (no aggregate ever
    counts them), and intake never has to refresh the dataset to take it back out."""
    from analysis.models import DriveModelAggregate, Flag, TestRun

    settings.NVMEDB_REVIEW_FIRST_N = 1
    seen, refreshed = [], []
    real_ingest = hooks.ingest.call

    def ingest(**kwargs):
        seen.append(kwargs["review_reason"])
        return real_ingest(**kwargs)

    monkeypatch.setattr(hooks.ingest, "function", ingest)
    monkeypatch.setattr(hooks.refresh_dataset, "function", lambda *, submission: refreshed.append(submission.pk))
    held = upload(owner_api, publishable_bundle(register_key(owner)))

    assert held["status"] == "held" and held["report"]["rule"] == "review"
    assert len(seen) == 1 and "first 1 submissions are published after staff review them" in seen[0]
    assert refreshed == [], "the ingest stored it held; nothing had to be taken back out of the aggregates"
    models = TestRun.objects.filter(submission_id=held["id"]).values_list("drive_model_id", flat=True)
    assert models and not DriveModelAggregate.objects.filter(drive_model_id__in=models).exists()
    assert Flag.objects.filter(submission_id=held["id"], kind="held_for_review", reason__contains=seen[0][:40]).exists()
