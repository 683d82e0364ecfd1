"""The hostile-bundle corpus (one bundle per crash class of issue 14) against a real Celery worker on PostgreSQL and
Redis: each ends rejected on its first attempt with its reason, none publishes, and the worker lives on to publish
an honest bundle after them."""

import pytest

from analysis.tests.hostile import HOSTILE, hostile_bundle
from submissions import services
from submissions.models import Submission, SubmissionStatus
from submissions.tests.bundles import bundle_factory
from submissions.tests.test_pipeline_integration import (  # noqa: F401 (start_worker is a fixture)
    dataset_rows,
    final,
    publishing_to,
    redis_url,
    start_worker,
    upload,
)

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.celery_worker]


def report_text(submission: Submission) -> str:
    report = submission.report or {}
    return " ".join([report.get("rule", ""), report.get("detail", ""), *report.get("reasons", [])])


def test_every_hostile_bundle_is_rejected_on_its_first_attempt_and_the_worker_survives(
    start_worker,  # noqa: F811 (the fixture imported above)
    owner,
    owner_api,
    shared_samples,
    tmp_path,
):
    key = bundle_factory.new_signing_key()
    services.signing_key_register(user=owner, public_key=bundle_factory.public_key_bytes(key))
    paths = {kind: hostile_bundle(kind, tmp_path / kind, shared_samples, key) for kind in sorted(HOSTILE)}
    honest = bundle_factory.make_bundle(
        tmp_path / "honest", fio_samples=bundle_factory.default_fio_samples(shared_samples), signing_key=key
    )

    worker = start_worker()
    with publishing_to(redis_url(), start_worker.queue):
        submissions = {kind: upload(owner_api, path) for kind, path in paths.items()}
    outcomes = {kind: final(submission, timeout=120, worker=worker) for kind, submission in submissions.items()}

    for kind, done in outcomes.items():
        expected_status, expected_text = HOSTILE[kind][1]
        assert done.status == SubmissionStatus.REJECTED, (kind, done.report)
        assert done.attempts == 1, (kind, done.attempts)
        assert done.report["outcome"] == "rejected"
        if expected_status == "bundle":
            assert done.report["rule"] == expected_text, (kind, done.report)
        else:
            assert done.report["rule"] == "ingest", (kind, done.report)
            assert expected_text in report_text(done), (kind, done.report)
    assert dataset_rows() == 0, "no hostile bundle left a row in the dataset"
    assert worker.process.poll() is None, "the worker is still running"
    assert "Traceback" not in worker.log_text(), worker.log_text()[-4000:]

    with publishing_to(redis_url(), start_worker.queue):
        after = upload(owner_api, honest)
    done = final(after, timeout=90, worker=worker)
    # published, or held when the site holds a new contributor's first submissions for review: either way read whole
    assert done.status in (SubmissionStatus.PUBLISHED, SubmissionStatus.HELD), done.report
    assert done.attempts == 1
    assert dataset_rows() > 0
