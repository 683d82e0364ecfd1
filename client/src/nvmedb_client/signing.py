"""The client's Ed25519 signing key: where it lives, how it is created, and how its public half is named."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

KEY_FILE_NAME = "signing_key.pem"


class SigningKeyError(Exception):
    """The key file is unusable or unsafe; the message says what to do."""


def config_dir() -> Path:
    """$NVMEDB_CONFIG_DIR, else $XDG_CONFIG_HOME/nvmedb, else ~/.config/nvmedb."""
    if os.environ.get("NVMEDB_CONFIG_DIR"):
        return Path(os.environ["NVMEDB_CONFIG_DIR"])
    if os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"]) / "nvmedb"
    return Path.home() / ".config" / "nvmedb"


def key_path(directory: Path | None = None) -> Path:
    return (directory if directory is not None else config_dir()) / KEY_FILE_NAME


def load_signing_key(path: Path) -> Ed25519PrivateKey:
    """Read an existing key file, refusing one that other users could read."""
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SigningKeyError(
            f"the signing key {path} is readable by other users (mode {stat.S_IMODE(mode):04o}); "
            f"run `chmod 600 {path}` and keep it private"
        )
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise SigningKeyError(f"the signing key {path} is not a readable PEM (PKCS8) private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"the signing key {path} is not an Ed25519 key")
    return key


def create_signing_key(directory: Path | None = None, *, force: bool = False) -> Ed25519PrivateKey:
    """Write a new key (file mode 0600, directory mode 0700); refuses to replace one unless `force`."""
    path = key_path(directory)
    if path.exists() and not force:
        raise SigningKeyError(f"a signing key already exists at {path}; use --force to replace it")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    )
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return key


def load_or_create_signing_key(directory: Path | None = None) -> Ed25519PrivateKey:
    path = key_path(directory)
    if path.exists():
        return load_signing_key(path)
    return create_signing_key(directory)


def public_key_bytes(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    """The raw 32-byte public key."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw)


def fingerprint(public_key: bytes) -> str:
    """ "SHA256:<base64 without padding>" of the raw public key, the way OpenSSH names keys."""
    digest = hashlib.sha256(public_key).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def sign(key: Ed25519PrivateKey, data: bytes) -> bytes:
    return key.sign(data)


def verify_signature(public_key: bytes, signature: bytes, data: bytes) -> bool:
    """True when `signature` is a valid Ed25519 signature of `data` by `public_key`."""
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


REGISTRATION_STATEMENT = "nvmedb signing key registration v1"


def registration_statement(*, account: str, public_key: bytes, challenge: str) -> bytes:
    """What a client signs to prove to the site that it holds the private half of the key it registers: the
    account the key is for, the key, and the site's one-time challenge, one per line."""
    lines = [
        REGISTRATION_STATEMENT,
        f"account: {account}",
        f"public key: {base64.b64encode(public_key).decode('ascii')}",
        f"challenge: {challenge}",
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def registration_proof(key: Ed25519PrivateKey, *, account: str, challenge: str) -> str:
    """The base64 signature of the registration statement by `key`."""
    statement = registration_statement(account=account, public_key=public_key_bytes(key), challenge=challenge)
    return base64.b64encode(key.sign(statement)).decode("ascii")
