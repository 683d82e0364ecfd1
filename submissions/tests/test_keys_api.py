"""POST/GET /api/v1/keys/ and /api/v1/me/: registering the key that signs a contributor's bundles."""

import base64

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from nvmedb_client.signing import fingerprint, public_key_bytes
from submissions.models import SigningKey
from submissions.tests.contract import assert_matches_contract

URL = "/api/v1/keys/"


def new_public_key() -> bytes:
    return public_key_bytes(Ed25519PrivateKey.generate())


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_it_registers_a_public_key_for_the_tokens_user(owner, owner_api):
    public = new_public_key()
    response = owner_api.post(URL, {"public_key": b64(public), "name": "lab"}, format="json")
    assert response.status_code == 201, response.content
    key = SigningKey.objects.get()
    assert key.user == owner
    assert bytes(key.public_key) == public
    assert response.json()["fingerprint"] == fingerprint(public) == key.fingerprint
    assert_matches_contract("key_created", response.json())


def test_registering_the_same_key_again_is_harmless(owner_api):
    public = new_public_key()
    assert owner_api.post(URL, {"public_key": b64(public)}, format="json").status_code == 201
    again = owner_api.post(URL, {"public_key": b64(public)}, format="json")
    assert again.status_code == 200
    assert SigningKey.objects.count() == 1


def test_a_key_registered_to_another_account_is_refused(owner_api, stranger_api):
    public = new_public_key()
    assert owner_api.post(URL, {"public_key": b64(public)}, format="json").status_code == 201
    response = stranger_api.post(URL, {"public_key": b64(public)}, format="json")
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
    mine = owner_api.post(URL, {"public_key": b64(new_public_key())}, format="json").json()
    stranger_api.post(URL, {"public_key": b64(new_public_key())}, format="json")
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
