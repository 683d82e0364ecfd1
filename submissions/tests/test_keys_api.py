"""POST/GET /api/v1/keys/ and /api/v1/me/: registering the key that signs a contributor's bundles."""

import base64

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nvmedb_client.signing import fingerprint, public_key_bytes, registration_proof
from submissions.models import SigningKey
from submissions.tests.contract import assert_matches_contract

URL = "/api/v1/keys/"


def new_public_key() -> bytes:
    return public_key_bytes(Ed25519PrivateKey.generate())


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def proven(api, key: Ed25519PrivateKey, **body) -> dict:
    """The registration `nvmedb-client login` sends: the public key, the site's challenge for the token's account,
    and the statement's signature by the private key."""
    challenge = api.get(f"{URL}challenge/").json()
    signature = registration_proof(key, account=challenge["account"], challenge=challenge["challenge"])
    return {
        "public_key": b64(public_key_bytes(key)),
        "challenge": challenge["challenge"],
        "signature": signature,
        **body,
    }


def test_it_registers_a_public_key_for_the_tokens_user(owner, owner_api):
    private = Ed25519PrivateKey.generate()
    public = public_key_bytes(private)
    response = owner_api.post(URL, proven(owner_api, private, name="lab"), format="json")
    assert response.status_code == 201, response.content
    key = SigningKey.objects.get()
    assert key.user == owner
    assert bytes(key.public_key) == public
    assert response.json()["fingerprint"] == fingerprint(public) == key.fingerprint
    assert_matches_contract("key_created", response.json())


def test_registering_the_same_key_again_is_harmless(owner_api):
    private = Ed25519PrivateKey.generate()
    assert owner_api.post(URL, proven(owner_api, private), format="json").status_code == 201
    again = owner_api.post(URL, proven(owner_api, private), format="json")
    assert again.status_code == 200
    assert SigningKey.objects.count() == 1


def test_a_key_registered_to_another_account_is_refused(owner_api, stranger_api):
    private = Ed25519PrivateKey.generate()  # one machine's key, used with two accounts' tokens
    assert owner_api.post(URL, proven(owner_api, private), format="json").status_code == 201
    response = stranger_api.post(URL, proven(stranger_api, private), format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "key_of_another_account"
    assert SigningKey.objects.count() == 1


def test_a_key_that_is_not_ed25519_is_refused(owner_api):
    response = owner_api.post(URL, {"public_key": b64(b"short")}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_public_key",
        "detail": "An Ed25519 public key is 32 bytes; this one is 5.",
    }
    response = owner_api.post(URL, {"public_key": "%%%not base64"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_public_key"
    assert SigningKey.objects.count() == 0


def test_keys_need_a_token(db, anonymous_api):
    assert anonymous_api.post(URL, {"public_key": b64(new_public_key())}, format="json").status_code == 401
    assert SigningKey.objects.count() == 0


def test_a_contributor_lists_and_revokes_only_their_own_keys(owner_api, stranger_api):
    mine = owner_api.post(URL, proven(owner_api, Ed25519PrivateKey.generate()), format="json").json()
    stranger_api.post(URL, proven(stranger_api, Ed25519PrivateKey.generate()), format="json")
    listed = owner_api.get(URL).json()
    assert [k["fingerprint"] for k in listed] == [mine["fingerprint"]]
    assert stranger_api.delete(f"{URL}{mine['id']}/").status_code == 404
    revoked = owner_api.delete(f"{URL}{mine['id']}/")
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    assert SigningKey.objects.get(pk=mine["id"]).revoked_at is not None


def test_me_names_the_tokens_owner(owner_api, owner):
    response = owner_api.get("/api/v1/me/")
    assert response.status_code == 200
    assert response.json()["username"] == "owner"
    assert response.json()["token_prefix"] == owner.api_tokens.get().prefix
    assert_matches_contract("me", response.json())


def test_auth_endpoints_are_rate_limited_per_address(owner_api, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "auth_ip": "3/minute"},
    }
    codes = [owner_api.get("/api/v1/me/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


def test_an_oversized_key_request_is_refused_before_parsing(owner_api):
    response = owner_api.post(URL, {"public_key": "A" * 20000}, format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "too_large"
    assert SigningKey.objects.count() == 0


# --- proof of possession -------------------------------------------------------------------------------------------


def test_a_key_sent_without_proof_is_refused_with_what_to_do(owner_api):
    response = owner_api.post(URL, {"public_key": b64(new_public_key())}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "proof_required"
    assert (
        "GET /api/v1/keys/challenge/" in response.json()["detail"]
        and "nvmedb-client login" in response.json()["detail"]
    )
    assert SigningKey.objects.count() == 0


def test_someone_elses_public_key_cannot_be_claimed_without_its_private_half(owner_api, stranger_api):
    """The attack proof of possession stops: the stranger copies the owner's public key (it is public) and signs
    the statement with a key of their own."""
    owners = Ed25519PrivateKey.generate()
    body = proven(stranger_api, Ed25519PrivateKey.generate(), public_key=b64(public_key_bytes(owners)))
    response = stranger_api.post(URL, body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_proof"
    assert "does not verify with this public key" in response.json()["detail"]
    assert SigningKey.objects.count() == 0
    assert owner_api.post(URL, proven(owner_api, owners), format="json").status_code == 201


def test_a_proof_made_for_another_account_or_challenge_is_refused(owner_api, stranger_api):
    private = Ed25519PrivateKey.generate()
    strangers = proven(stranger_api, private)
    response = owner_api.post(URL, strangers, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_challenge", response.json()
    assert "another account" in response.json()["detail"]
    mine = proven(owner_api, private)
    signed_for_stranger = registration_proof(private, account="stranger", challenge=mine["challenge"])
    response = owner_api.post(URL, {**mine, "signature": signed_for_stranger}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_proof"
    response = owner_api.post(URL, {**mine, "challenge": mine["challenge"] + "x"}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_challenge"
    response = owner_api.post(URL, {**mine, "signature": "%%%"}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_proof"
    assert SigningKey.objects.count() == 0


def test_an_expired_challenge_is_refused(owner_api, monkeypatch):
    from submissions import key_registration

    body = proven(owner_api, Ed25519PrivateKey.generate())
    monkeypatch.setattr(key_registration, "CHALLENGE_MAX_AGE_S", -1)  # every challenge is now too old
    response = owner_api.post(URL, body, format="json")
    assert response.status_code == 400 and response.json()["code"] == "challenge_expired"
    assert SigningKey.objects.count() == 0
