"""Proof of possession for a signing key a contributor registers: the site hands out a challenge bound to the
account, the client signs the registration statement (nvmedb_client.signing.registration_statement: the account,
the key and the challenge) with the private key, and the key is stored only when that signature verifies. Without
it anyone could register someone else's public key to their own account and claim the bundles it signs."""

from __future__ import annotations

import base64
import binascii
import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.core import signing

from nvmedb_client.signing import registration_statement, verify_signature
from submissions import keys
from submissions.models import SigningKey

CHALLENGE_SALT = "nvmedb.submissions.signing-key-challenge"
CHALLENGE_MAX_AGE_S = 15 * 60
HOW = (
    "`nvmedb-client login` does this; by hand, run `nvmedb-client keygen --account <user name> --challenge "
    "<challenge>` and send the registration signature it prints."
)


class InvalidProof(ValueError):
    """The registration carries no proof, or one that does not hold: `code` names which."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def challenge_issue(*, user: AbstractBaseUser) -> dict:
    """A challenge for `user`, valid CHALLENGE_MAX_AGE_S: signed by the site, so nothing needs storing."""
    value = signing.dumps({"u": user.pk, "n": secrets.token_urlsafe(16)}, salt=CHALLENGE_SALT)
    return {"challenge": value, "account": user.get_username(), "expires_in_s": CHALLENGE_MAX_AGE_S}


def proof_check(*, user: AbstractBaseUser, public_key: bytes, challenge: str, signature: str) -> None:
    if not challenge or not signature:
        raise InvalidProof(
            "proof_required",
            "A key is registered with proof that you hold its private half: get a challenge "
            f"(GET /api/v1/keys/challenge/) and send it with the signature of the registration statement. {HOW}",
        )
    try:
        payload = signing.loads(challenge, salt=CHALLENGE_SALT, max_age=CHALLENGE_MAX_AGE_S)
    except signing.SignatureExpired:
        raise InvalidProof(
            "challenge_expired", f"The challenge is older than {CHALLENGE_MAX_AGE_S // 60} minutes; get a new one."
        ) from None
    except signing.BadSignature:
        raise InvalidProof("invalid_challenge", "The challenge was not issued by this site.") from None
    if not isinstance(payload, dict) or payload.get("u") != user.pk:
        raise InvalidProof("invalid_challenge", "The challenge was issued to another account.")
    try:
        raw = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidProof("invalid_proof", "The signature is not valid base64.") from None
    statement = registration_statement(account=user.get_username(), public_key=public_key, challenge=challenge)
    if not verify_signature(public_key, raw, statement):
        raise InvalidProof(
            "invalid_proof",
            "The signature does not verify with this public key: it must be the signature, by this key's private "
            f"half, of the registration statement for your account and this challenge. {HOW}",
        )


def signing_key_register_proven(
    *, user: AbstractBaseUser, public_key: bytes, name: str, challenge: str, signature: str
) -> tuple[SigningKey, bool]:
    """keys.signing_key_register, once the contributor proved they hold the private key."""
    keys.check_public_key(public_key)
    proof_check(user=user, public_key=public_key, challenge=challenge, signature=signature)
    return keys.signing_key_register(user=user, public_key=public_key, name=name)
