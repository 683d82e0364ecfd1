"""The Ed25519 signing key: where it lives, its file permissions, and what it signs."""

import base64
import hashlib
import os
import stat

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from nvmedb_client.signing import (
    SigningKeyError,
    config_dir,
    create_signing_key,
    fingerprint,
    key_path,
    load_or_create_signing_key,
    load_signing_key,
    public_key_bytes,
    sign,
    verify_signature,
)


def test_the_config_dir_follows_nvmedb_config_dir_then_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NVMEDB_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert config_dir() == tmp_path / "home" / ".config" / "nvmedb"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_dir() == tmp_path / "xdg" / "nvmedb"
    monkeypatch.setenv("NVMEDB_CONFIG_DIR", str(tmp_path / "explicit"))
    assert config_dir() == tmp_path / "explicit"


def test_a_new_key_is_private_to_its_owner(tmp_path):
    directory = tmp_path / "cfg"
    load_or_create_signing_key(directory)
    path = key_path(directory)
    assert path.name == "signing_key.pem"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS8
    assert list(directory.iterdir()) == [path]  # no temporary file left behind


def test_the_key_is_created_once_and_then_reused(tmp_path):
    first = load_or_create_signing_key(tmp_path)
    second = load_or_create_signing_key(tmp_path)
    assert public_key_bytes(first) == public_key_bytes(second)


def test_the_key_is_created_in_the_config_dir_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("NVMEDB_CONFIG_DIR", str(tmp_path / "cfg"))
    key = load_or_create_signing_key()
    assert public_key_bytes(load_signing_key(tmp_path / "cfg" / "signing_key.pem")) == public_key_bytes(key)


def test_an_existing_key_is_never_replaced_without_force(tmp_path):
    original = create_signing_key(tmp_path)
    with pytest.raises(SigningKeyError, match="--force"):
        create_signing_key(tmp_path)
    assert public_key_bytes(load_signing_key(key_path(tmp_path))) == public_key_bytes(original)
    replaced = create_signing_key(tmp_path, force=True)
    assert public_key_bytes(replaced) != public_key_bytes(original)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660])
def test_a_key_file_other_users_can_read_is_refused(tmp_path, mode):
    create_signing_key(tmp_path)
    os.chmod(key_path(tmp_path), mode)
    with pytest.raises(SigningKeyError, match="readable by other users.*chmod 600"):
        load_or_create_signing_key(tmp_path)


def test_a_key_of_another_type_is_refused(tmp_path):
    path = key_path(tmp_path)
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.write_bytes(pem)
    path.chmod(0o600)
    with pytest.raises(SigningKeyError, match="not an Ed25519 key"):
        load_signing_key(path)


def test_a_garbled_key_file_is_refused(tmp_path):
    path = key_path(tmp_path)
    path.write_text("not a key\n")
    path.chmod(0o600)
    with pytest.raises(SigningKeyError, match="not a readable PEM"):
        load_signing_key(path)


def test_the_fingerprint_is_the_sha256_of_the_raw_public_key(tmp_path):
    public = public_key_bytes(create_signing_key(tmp_path))
    assert len(public) == 32
    value = fingerprint(public)
    assert value.startswith("SHA256:") and not value.endswith("=")
    digest = base64.b64decode(value.removeprefix("SHA256:") + "=")
    assert digest == hashlib.sha256(public).digest()


def test_a_signature_verifies_only_for_its_data_and_key(tmp_path):
    key = create_signing_key(tmp_path)
    other = create_signing_key(tmp_path / "other")
    signature = sign(key, b"manifest bytes")
    assert verify_signature(public_key_bytes(key), signature, b"manifest bytes")
    assert not verify_signature(public_key_bytes(key), signature, b"manifest bytes!")
    assert not verify_signature(public_key_bytes(other), signature, b"manifest bytes")
    assert not verify_signature(b"short", signature, b"manifest bytes")
