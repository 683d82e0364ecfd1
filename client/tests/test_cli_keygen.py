"""`nvmedb-client keygen` through click's test runner, against a real key directory."""

import base64
import json
import os
import stat

from click.testing import CliRunner

from nvmedb_client.cli import main
from nvmedb_client.signing import fingerprint, load_signing_key, public_key_bytes


def _keygen(tmp_path, *args):
    return CliRunner().invoke(main, ["keygen", *args], env={"NVMEDB_CONFIG_DIR": str(tmp_path / "cfg")})


def test_keygen_creates_a_private_key_and_shows_its_public_half(tmp_path):
    result = _keygen(tmp_path)
    assert result.exit_code == 0, result.output
    path = tmp_path / "cfg" / "signing_key.pem"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    public = public_key_bytes(load_signing_key(path))
    assert "Created a new signing key" in result.output
    assert str(path) in result.output
    assert fingerprint(public) in result.output


def test_keygen_keeps_an_existing_key(tmp_path):
    first = json.loads(_keygen(tmp_path, "--json").output)
    second = json.loads(_keygen(tmp_path, "--json").output)
    assert first["created"] is True and second["created"] is False
    assert second["public_key"] == first["public_key"]
    assert second["fingerprint"] == first["fingerprint"]


def test_keygen_force_replaces_the_key(tmp_path):
    first = json.loads(_keygen(tmp_path, "--json").output)
    replaced = json.loads(_keygen(tmp_path, "--json", "--force").output)
    assert replaced["created"] is True
    assert replaced["public_key"] != first["public_key"]
    on_disk = public_key_bytes(load_signing_key(tmp_path / "cfg" / "signing_key.pem"))
    assert base64.b64encode(on_disk).decode() == replaced["public_key"]


def test_keygen_refuses_a_key_others_can_read(tmp_path):
    _keygen(tmp_path)
    os.chmod(tmp_path / "cfg" / "signing_key.pem", 0o644)
    result = _keygen(tmp_path)
    assert result.exit_code == 1
    assert "readable by other users" in result.output


def test_keygen_signs_a_registration_challenge_with_the_key_it_shows(tmp_path):
    from nvmedb_client.signing import registration_statement, verify_signature

    result = json.loads(_keygen(tmp_path, "--json", "--account", "alice", "--challenge", "abc:123").output)
    public = base64.b64decode(result["public_key"])
    statement = registration_statement(account="alice", public_key=public, challenge="abc:123")
    signature = base64.b64decode(result["registration_signature"])
    assert verify_signature(public, signature, statement)
    assert not verify_signature(
        public, signature, registration_statement(account="bob", public_key=public, challenge="abc:123")
    )
    shown = _keygen(tmp_path, "--account", "alice", "--challenge", "abc:123")
    assert f"Registration signature: {result['registration_signature']}" in shown.output


def test_keygen_wants_the_account_and_the_challenge_together(tmp_path):
    result = _keygen(tmp_path, "--challenge", "abc:123")
    assert result.exit_code != 0 and "--account and --challenge go together" in result.output
