"""Contributors' Ed25519 signing keys: registering, revoking, and judging the key that signed a bundle."""

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from nvmedb_client import signing
from submissions.models import SigningKey

KEY_OF_ANOTHER_ACCOUNT = (
    "This public key is bound to another account: a key stays with the first account that registered it, even after "
    "it is revoked. Create a new key with `nvmedb-client keygen` and register that one."
)


class KeyOfAnotherAccount(Exception):
    pass


class InvalidPublicKey(ValueError):
    pass


def public_key_fingerprint(public_key: bytes) -> str:
    return signing.fingerprint(public_key)


def check_public_key(public_key: bytes) -> None:
    if len(public_key) != 32:
        raise InvalidPublicKey(f"An Ed25519 public key is 32 bytes; this one is {len(public_key)}.")
    try:
        Ed25519PublicKey.from_public_bytes(public_key)
    except ValueError as exc:
        raise InvalidPublicKey(f"Not an Ed25519 public key: {exc}") from None


@transaction.atomic
def signing_key_register(*, user: AbstractBaseUser, public_key: bytes, name: str = "") -> tuple[SigningKey, bool]:
    """Registers an Ed25519 public key for `user`; returns (key, created). A public key stays bound to the first
    account that registered it, revoked or not, so a signature always points at exactly one contributor. Callers on
    a contributor's behalf (the API, the profile page) go through submissions.key_registration, which first checks
    that the contributor holds the private key."""
    check_public_key(public_key)
    fp = public_key_fingerprint(public_key)
    existing = SigningKey.objects.select_for_update().filter(fingerprint=fp).first()
    if existing is None:
        try:
            with transaction.atomic():
                key = SigningKey.objects.create(
                    user=user, public_key=public_key, fingerprint=fp, name=name.strip()[:100]
                )
        except IntegrityError:  # registered by someone else a moment ago
            existing = SigningKey.objects.get(fingerprint=fp)
        else:
            return key, True
    if existing.user_id != user.pk:
        raise KeyOfAnotherAccount(KEY_OF_ANOTHER_ACCOUNT)
    if existing.revoked_at is not None:
        raise InvalidPublicKey("You revoked this key; create a new signing key instead of reusing it.")
    return existing, False


def signing_key_revoke(*, key: SigningKey) -> SigningKey:
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key


@dataclass(frozen=True)
class KeyCheck:
    rule: str  # "" when the key is good
    key: SigningKey | None


def check_signing_key(*, uploader_id: int, public_key: bytes, fingerprint: str) -> KeyCheck:
    """Tells apart a good key, a revoked key, another account's key and a key nobody registered."""
    keys = list(SigningKey.objects.filter(fingerprint=fingerprint))
    own = [k for k in keys if k.user_id == uploader_id and bytes(k.public_key) == public_key]
    active = [k for k in own if k.revoked_at is None]
    if active:
        return KeyCheck(rule="", key=active[0])
    if own:
        return KeyCheck(rule="revoked_key", key=own[0])
    if keys:
        return KeyCheck(rule="foreign_key", key=None)
    return KeyCheck(rule="unknown_key", key=None)
