"""A bundle is validated and ingested with the cycle collector paused (nvmedb.collector), which comes back on once
the submission has its verdict, a rejected one's included."""

import gc

from submissions import hooks, pipeline, services
from submissions.models import SubmissionStatus
from submissions.tests.conftest import register_key


def test_the_ingest_runs_with_the_collector_paused_and_it_comes_back(
    collector_on, owner, publishable_bundle, monkeypatch
):
    seen = []
    real_ingest = hooks.ingest.call

    def ingest(**kwargs):
        seen.append(gc.isenabled())
        return real_ingest(**kwargs)

    monkeypatch.setattr(hooks.ingest, "function", ingest)
    with publishable_bundle(register_key(owner)).open("rb") as stream:
        submission, _ = services.submission_create(uploader=owner, stream=stream)
    done = pipeline.submission_validate(submission_id=submission.pk)
    assert done.status == SubmissionStatus.PUBLISHED
    assert seen == [False]
    assert gc.isenabled()


def test_a_bundle_that_fails_in_the_ingest_still_gives_the_collector_back(
    collector_on, owner, publishable_bundle, monkeypatch
):
    def ingest(**kwargs):
        raise ValueError("an ingest that cannot read the bundle")

    monkeypatch.setattr(hooks.ingest, "function", ingest)
    with publishable_bundle(register_key(owner)).open("rb") as stream:
        submission, _ = services.submission_create(uploader=owner, stream=stream)
    done = pipeline.submission_validate(submission_id=submission.pk)
    assert done.status == SubmissionStatus.REJECTED and "ValueError" in done.report["detail"]
    assert gc.isenabled()
