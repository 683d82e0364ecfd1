"""The server-rendered pages, through the test client."""

import gzip
import re

from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from submissions import services
from submissions.models import ApiToken, SigningKey, Submission, SubmissionStatus
from submissions.selectors import api_token_by_raw


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_signing_up_logs_the_new_contributor_in(db, client):
    response = client.post(
        "/signup/",
        {
            "username": "newcomer",
            "email": "",
            "password1": "a-long-passphrase-9",
            "password2": "a-long-passphrase-9",
            "accept_data_license": "on",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == "/profile/"
    assert client.get("/profile/").context["user"].username == "newcomer"


def test_sign_up_explains_a_bad_form(db, client):
    response = client.post("/signup/", {"username": "x", "password1": "a", "password2": "b"})
    assert response.status_code == 200
    assert "password fields didn’t match" in response.content.decode()


def test_log_in_page_works_and_is_rate_limited(owner, client, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "auth_ip": "2/minute"},
    }
    assert client.get("/accounts/login/").status_code == 200
    wrong = {"username": "owner", "password": "wrong"}
    assert client.post("/accounts/login/", wrong).status_code == 200
    assert client.post("/accounts/login/", wrong).status_code == 200
    assert client.post("/accounts/login/", {"username": "owner", "password": "owner-password-1"}).status_code == 429


def test_the_profile_needs_a_login(db, client):
    response = client.get("/profile/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_new_token_is_shown_once_and_stored_only_hashed(owner):
    client = logged_in(owner)
    response = client.post("/profile/tokens/", {"name": "lab server"})
    assert response.status_code == 200
    raw = response.context["new_token"]
    assert raw in response.content.decode()
    assert response["Cache-Control"] == "no-store"
    token = ApiToken.objects.get(user=owner)
    assert token.name == "lab server"
    assert raw not in (token.digest, token.prefix) and token.digest != raw
    assert api_token_by_raw(raw) == token
    assert raw not in client.get("/profile/").content.decode(), "the profile never shows it again"


def test_tokens_are_renamed_and_revoked_from_the_profile(owner, stranger):
    token, _ = services.api_token_create(user=owner, name="old")
    client = logged_in(owner)
    client.post(f"/profile/tokens/{token.pk}/", {"action": "rename", "name": "new"})
    client.post(f"/profile/tokens/{token.pk}/", {"action": "revoke"})
    token.refresh_from_db()
    assert token.name == "new"
    assert token.revoked_at is not None
    theirs, _ = services.api_token_create(user=stranger)
    assert client.post(f"/profile/tokens/{theirs.pk}/", {"action": "revoke"}).status_code == 404


def test_signing_keys_are_added_and_revoked_from_the_profile(owner):
    import base64

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from nvmedb_client.signing import fingerprint, public_key_bytes, registration_proof

    private = Ed25519PrivateKey.generate()
    public = public_key_bytes(private)
    client = logged_in(owner)
    page = client.get("/profile/").content.decode()
    challenge = re.search(r'name="challenge" value="([^"]+)"', page)[1]
    assert f"--account owner --challenge {challenge}" in page
    signature = registration_proof(private, account="owner", challenge=challenge)
    form = {"public_key": base64.b64encode(public).decode(), "name": "desk", "challenge": challenge}
    unproven = client.post("/profile/keys/", {**form, "signature": ""})
    assert unproven.status_code == 400 and not SigningKey.objects.filter(user=owner).exists()
    wrong = registration_proof(Ed25519PrivateKey.generate(), account="owner", challenge=challenge)
    refused = client.post("/profile/keys/", {**form, "signature": wrong})
    assert refused.status_code == 400 and "does not verify with this public key" in refused.content.decode()
    response = client.post("/profile/keys/", {**form, "signature": signature})
    assert response.status_code == 302
    key = SigningKey.objects.get(user=owner)
    assert fingerprint(public) in client.get("/profile/").content.decode()
    bad = client.post("/profile/keys/", {"public_key": "bm90IGEga2V5"})
    assert bad.status_code == 400
    assert "32 bytes" in bad.content.decode()
    client.post(f"/profile/keys/{key.pk}/revoke/")
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_a_bundle_is_uploaded_through_the_page(owner, bundle_storage):
    client = logged_in(owner)
    assert client.get("/submissions/upload/").status_code == 200
    body = gzip.compress(b"offline run")
    response = client.post("/submissions/upload/", {"bundle": SimpleUploadedFile("run.nvmedb.tar.gz", body)})
    submission = Submission.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/submissions/{submission.pk}/"
    assert (bundle_storage / submission.storage_name).read_bytes() == body


def test_the_upload_page_refuses_a_file_that_is_too_large(owner, settings):
    settings.NVMEDB_MAX_BUNDLE_BYTES = 1000
    response = logged_in(owner).post(
        "/submissions/upload/", {"bundle": SimpleUploadedFile("big.nvmedb.tar.gz", gzip.compress(b"a") + b"\0" * 1500)}
    )
    assert response.status_code == 413
    assert "larger than this site accepts" in response.content.decode()
    assert Submission.objects.count() == 0


def test_the_upload_page_checks_the_csrf_token(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.post(
        "/submissions/upload/", {"bundle": SimpleUploadedFile("x.nvmedb.tar.gz", gzip.compress(b"x"))}
    )
    assert response.status_code == 403
    assert Submission.objects.count() == 0


def test_the_upload_page_refuses_a_file_that_is_not_gzip(owner):
    response = logged_in(owner).post("/submissions/upload/", {"bundle": SimpleUploadedFile("x.txt", b"hello")})
    assert response.status_code == 400
    assert "not a gzip-compressed tar archive" in response.content.decode()


def test_the_submission_page_shows_the_report_and_lets_only_the_owner_withdraw(owner, stranger):
    client = logged_in(owner)
    client.post("/submissions/upload/", {"bundle": SimpleUploadedFile("r.nvmedb.tar.gz", gzip.compress(b"r"))})
    submission = Submission.objects.get()
    Submission.objects.filter(pk=submission.pk).update(
        status=SubmissionStatus.REJECTED,
        report={
            "outcome": "rejected",
            "rule": "hash_mismatch",
            "summary": "A file's SHA-256 does not match",
            "detail": "files/fio/x.json <b>changed</b>",
            "reasons": [],
        },
    )
    page = client.get(f"/submissions/{submission.pk}/").content.decode()
    assert "A file&#x27;s SHA-256 does not match" in page
    assert "&lt;b&gt;changed&lt;/b&gt;" in page, "report text is escaped"
    assert "Withdraw" in page
    assert logged_in(stranger).get(f"/submissions/{submission.pk}/").status_code == 404
    assert logged_in(stranger).post(f"/submissions/{submission.pk}/withdraw/").status_code == 404
    response = client.post(f"/submissions/{submission.pk}/withdraw/")
    assert response.status_code == 302
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.WITHDRAWN


def test_create_contributor_prints_a_working_token(db, capsys):
    call_command("create_contributor", "alice", "--email", "alice@example.org")
    raw = capsys.readouterr().out.strip()
    token = api_token_by_raw(raw)
    assert token is not None and token.user.username == "alice"
    assert re.fullmatch(r"nvmedb_[A-Za-z0-9_-]{43}", raw)
    assert not token.user.has_usable_password()


def test_create_contributor_refuses_an_existing_name(owner):
    import pytest
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="already exists"):
        call_command("create_contributor", "owner")


def test_staff_reject_a_submission_with_a_reason_in_the_admin(owner, staff):
    submission, _ = services.submission_create(uploader=owner, stream=__import__("io").BytesIO(gzip.compress(b"s")))
    client = logged_in(staff)
    url = "/admin/submissions/submission/"
    form = {"action": "reject_submissions", "_selected_action": [str(submission.pk)]}
    assert client.post(url, form).status_code == 200  # asks for the reason
    response = client.post(url, {**form, "apply": "1", "reason": "not a real drive"})
    assert response.status_code == 302
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.REJECTED
    assert submission.report["rule"] == "moderation"
    assert submission.report["detail"] == "not a real drive"
