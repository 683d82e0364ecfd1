"""Attribution: a measurement is published once, under the account that ran it; a public key belongs to the first
account that registered it; a stranger's copy of a bundle never blocks its owner. Through the API and the real
validation pipeline (tasks run in-process)."""

import base64
import json

from nvmedb_client.signing import registration_proof
from submissions import content, key_registration, services
from submissions.models import FioOutputFingerprint, SigningKey, Submission
from submissions.rules import RULES
from submissions.tests.bundles import bundle_factory
from submissions.tests.conftest import register_key
from submissions.tests.test_keys_api import proven


def scrubbed_copies_of_the_public_raw_files(client, published: dict, target_dir):
    """What anyone can download from a published submission's page: each fio output, scrubbed, saved under the
    sample name the bundle factory reads (wdpc_bs<KiB>KB_read<mix>_round<n>.json)."""
    from analysis.models import Measurement

    target_dir.mkdir()
    copies = []
    rows = Measurement.objects.filter(test_run__submission_id=published["id"]).select_related("round")
    for m in rows.order_by("round__number", "block_size_bytes"):
        response = client.get(f"/submissions/{published['id']}/files/{m.raw_file}")
        assert response.status_code == 200, m.raw_file
        path = target_dir / f"wdpc_bs{m.block_size_bytes // 1024}KB_read{m.read_pct}_round{m.round.number}.json"
        path.write_bytes(response.content)
        copies.append(path)
    return copies


def test_a_stranger_re_signing_published_scrubbed_raw_files_is_rejected_with_the_first_submission_named(
    owner, owner_api, stranger, stranger_api, client, publishable_bundle, upload, tmp_path
):
    published = upload(owner_api, publishable_bundle(register_key(owner)))
    assert published["status"] == "published", published["report"]

    copies = scrubbed_copies_of_the_public_raw_files(client, published, tmp_path / "downloaded")
    # A thief reformats the copies, so only the digest of the measured statistics can recognise them.
    for path in copies:
        path.write_text(json.dumps(json.loads(path.read_bytes()), indent=1, sort_keys=True))
    original = (tmp_path / "publishable-0" / "run" / "fio").iterdir()
    assert {p.read_bytes() for p in copies}.isdisjoint({p.read_bytes() for p in original})
    stolen = upload(stranger_api, publishable_bundle(register_key(stranger), samples=copies))

    assert stolen["status"] == "rejected"
    assert stolen["report"]["rule"] == "content_of_another_account"
    assert stolen["report"]["summary"] == RULES["content_of_another_account"]
    assert (
        f"These fio outputs were first received from another contributor in submission {published['id']}"
        in stolen["report"]["detail"]
    )
    assert not Submission.objects.get(pk=stolen["id"]).test_runs.exists(), "nothing of it reaches the dataset"


def test_the_same_account_may_send_its_own_fio_outputs_again_in_another_bundle(
    owner, owner_api, client, publishable_bundle, upload, tmp_path
):
    published = upload(owner_api, publishable_bundle(register_key(owner)))
    copies = scrubbed_copies_of_the_public_raw_files(client, published, tmp_path / "mine")
    again = upload(owner_api, publishable_bundle(register_key(owner), samples=copies))
    assert again["id"] != published["id"]
    assert again["status"] == "published", again["report"]


def test_a_copy_that_was_never_published_elsewhere_is_not_judged_by_the_fingerprints(
    owner, owner_api, stranger, stranger_api, publishable_bundle, upload
):
    """The rule is about publication: a copy the other account only holds, rejected or pending, claims nothing."""
    stranger_copy = upload(stranger_api, publishable_bundle(bundle_factory.new_signing_key()))
    assert stranger_copy["report"]["rule"] == "unknown_key"
    mine = upload(owner_api, publishable_bundle(register_key(owner)))
    assert mine["status"] == "published", mine["report"]


def test_fingerprints_ignore_what_scrubbing_and_formatting_change_but_not_the_measurements(shared_samples):
    import json

    sample = bundle_factory.default_fio_samples(shared_samples)[0].read_bytes()
    doc = json.loads(sample)
    doc["jobs"][0]["job options"]["filename"] = "/dev/disk/by-id/nvme-[scrubbed]"
    doc["fio version"], doc["timestamp"] = "fio-9.99", 1
    reformatted = json.dumps(doc, indent=2).encode()
    assert content.measurement_digest(reformatted) == content.measurement_digest(sample) is not None
    doc["jobs"][0]["write"]["iops"] += 1
    assert content.measurement_digest(json.dumps(doc).encode()) != content.measurement_digest(sample)


def test_outputs_that_record_no_io_or_are_not_fio_results_give_no_fingerprint():
    failed = {"fio version": "fio-3.33", "jobs": [{"jobname": "x", "read": {"io_bytes": 0}, "write": {"io_bytes": 0}}]}
    import json

    assert content.measurement_digest(json.dumps(failed).encode()) is None
    assert content.measurement_digest(b"fio: pid=0, err=2/file:filesetup.c:1, error=No such file or directory") is None
    assert content.measurement_digest(b"[" * 100_000) is None


def test_validating_twice_records_each_fingerprint_once(owner, owner_api, publishable_bundle, upload):
    published = upload(owner_api, publishable_bundle(register_key(owner)))
    count = FioOutputFingerprint.objects.filter(submission_id=published["id"]).count()
    assert count > 0
    services.submission_validate(submission_id=Submission.objects.get(pk=published["id"]).pk)
    assert FioOutputFingerprint.objects.filter(submission_id=published["id"]).count() == count


# --- keys ----------------------------------------------------------------------------------------------------------


def test_a_revoked_key_stays_bound_so_another_account_cannot_take_it_over(
    owner, owner_api, stranger, stranger_api, publishable_bundle, upload
):
    key = register_key(owner)
    bundle = publishable_bundle(key)
    published = upload(owner_api, bundle)
    owner_key = SigningKey.objects.get(user=owner)
    owner_api.delete(f"/api/v1/keys/{owner_key.pk}/")

    # the stranger even holds the private key (a shared machine): the key stays the owner's
    response = stranger_api.post("/api/v1/keys/", proven(stranger_api, key), format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "key_of_another_account"
    assert "first account that registered it, even after it is revoked" in response.json()["detail"]
    assert SigningKey.objects.filter(fingerprint=owner_key.fingerprint).count() == 1

    replayed = upload(stranger_api, bundle)
    assert replayed["id"] != published["id"]
    assert replayed["status"] == "rejected"
    assert replayed["report"]["rule"] == "foreign_key"


def test_the_profile_page_refuses_another_accounts_key_too(owner, stranger):
    from django.test import Client

    key = register_key(owner)
    services.signing_key_revoke(key=owner.signing_keys.get())
    client = Client()
    client.force_login(stranger)
    public = base64.b64encode(bundle_factory.public_key_bytes(key)).decode()
    challenge = key_registration.challenge_issue(user=stranger)["challenge"]
    signature = registration_proof(key, account=stranger.get_username(), challenge=challenge)
    form = {"public_key": public, "name": "mine now", "challenge": challenge, "signature": signature}
    response = client.post("/profile/keys/", form)
    assert response.status_code == 400
    assert "bound to another account" in response.content.decode()
    assert not stranger.signing_keys.exists()


# --- duplicates ----------------------------------------------------------------------------------------------------


def test_a_stranger_uploading_the_owners_bundle_first_neither_blocks_nor_publishes(
    owner, owner_api, stranger_api, publishable_bundle, upload
):
    bundle = publishable_bundle(register_key(owner))
    theirs = upload(stranger_api, bundle)
    assert theirs["status"] == "rejected"
    assert theirs["report"]["rule"] == "foreign_key", "the bundle's key is the owner's, not theirs"

    mine = upload(owner_api, bundle)
    assert mine["id"] != theirs["id"]
    assert mine["status"] == "published", mine["report"]
    assert Submission.objects.get(pk=mine["id"]).uploader == owner


def test_submissions_published_before_digests_existed_are_fingerprinted_by_a_command(
    owner, owner_api, stranger, stranger_api, client, publishable_bundle, upload, tmp_path
):
    from django.core.management import call_command

    published = upload(owner_api, publishable_bundle(register_key(owner)))
    FioOutputFingerprint.objects.filter(submission_id=published["id"]).delete()  # as before this rule existed
    call_command("fingerprint_submissions")
    assert FioOutputFingerprint.objects.filter(submission_id=published["id"]).exists()
    call_command("fingerprint_submissions")  # again: nothing to do, nothing doubled

    copies = scrubbed_copies_of_the_public_raw_files(client, published, tmp_path / "downloaded")
    stolen = upload(stranger_api, publishable_bundle(register_key(stranger), samples=copies))
    assert stolen["report"]["rule"] == "content_of_another_account"


def test_fio_outputs_imported_from_another_tool_cannot_be_published_as_a_contributors_own(
    owner, owner_api, shared_samples, publishable_bundle, upload
):
    """The bundle factory's runs are the very SSSPT outputs of ../shared/samples/ssspt-hp-iops-1, imported here."""
    from django.core.management import call_command

    call_command("import_results", str(shared_samples / "ssspt-hp-iops-1"), "--format", "ssspt")
    imported = Submission.objects.get(uploader__username="nvmedb-import")
    assert imported.status == "published"

    claimed = upload(owner_api, publishable_bundle(register_key(owner)))
    assert claimed["report"]["rule"] == "content_of_another_account"
    assert str(imported.pk) in claimed["report"]["detail"]
