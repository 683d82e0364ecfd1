"""Through the whole intake: an upload whose figures are impossible, or whose compliance claim has no evidence, ends
rejected or held with the gate's rule in its report, never published (tasks run in-process, as in test_validation)."""

import json

import pytest

from nvmedb_client.bundle import write_bundle
from submissions import services
from submissions.models import Submission
from submissions.tests.bundles import bundle_factory


def _scale_first_4k_run(run_dir, manifest, files):
    run = next(r for r in manifest["runs"] if r["block_size_bytes"] == 4096)
    path = run_dir / run["output_file"]
    doc = json.loads(path.read_text())
    for job in doc["jobs"]:
        for direction in ("read", "write"):
            for key in ("iops", "bw", "bw_bytes", "io_bytes", "io_kbytes", "total_ios"):
                job[direction][key] = job[direction][key] * 10**6
    path.write_text(json.dumps(doc))


def _declare_compliant(run_dir, manifest, files):
    manifest["profile"] = "pts"
    manifest["compliance"] = {"compliant": True, "reasons": []}


@pytest.fixture
def owner_key(owner):
    key = bundle_factory.new_signing_key()
    services.signing_key_register(user=owner, public_key=bundle_factory.public_key_bytes(key), name="test")
    return key


@pytest.mark.parametrize(
    "mutate, status, rule",
    [(_scale_first_4k_run, "rejected", "link_iops"), (_declare_compliant, "held", "compliance_evidence")],
)
def test_an_implausible_upload_is_never_published(
    tmp_path, shared_samples, owner_api, owner_key, django_capture_on_commit_callbacks, mutate, status, rule
):
    run_dir, manifest, files = bundle_factory.make_run_dir(
        tmp_path / "work", bundle_factory.default_fio_samples(shared_samples)
    )
    mutate(run_dir, manifest, files)
    path = write_bundle(
        run_dir=run_dir, manifest=manifest, files=files, signing_key=owner_key, out_path=tmp_path / "b.nvmedb.tar.gz"
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_api.post(
            "/api/v1/submissions/", data=path.read_bytes(), content_type="application/octet-stream"
        )
    assert response.status_code == 202, response.content
    result = owner_api.get(response.json()["url"]).json()

    assert result["status"] == status, result["report"]
    assert any(reason.startswith(f"{rule}: ") for reason in result["report"]["reasons"]), result["report"]
    submission = Submission.objects.get(pk=result["id"])
    assert submission.published_at is None and submission.attempts == 1
