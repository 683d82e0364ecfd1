"""Fixtures for the analysis tests: consistent bundles built from real fio samples, and a submission to ingest."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from analysis.tests import bundles


@pytest.fixture
def submission(db, django_user_model):
    from submissions.models import Submission

    user = django_user_model.objects.create_user(username=f"contributor-{uuid.uuid4().hex[:8]}", password="x" * 12)
    return Submission.objects.create(
        uploader=user,
        sha256=hashlib.sha256(uuid.uuid4().bytes).hexdigest(),
        size=1,
        storage_name="test.nvmedb.tar.gz",
        status="ingesting",
    )


@pytest.fixture
def make_verified(tmp_path, shared_samples):
    """Build, sign and verify a bundle; `mutate(run_dir, manifest)` changes it before signing."""
    counter = iter(range(1000))

    def build(**kwargs):
        return bundles.verified_bundle(tmp_path / f"b{next(counter)}", shared_samples, **kwargs)

    return build
