"""`nvmedb-client keygen`: create the Ed25519 key that signs result bundles."""

from __future__ import annotations

import base64
import json

import click

from nvmedb_client.signing import (
    SigningKeyError,
    create_signing_key,
    fingerprint,
    key_path,
    load_signing_key,
    public_key_bytes,
    registration_proof,
)


@click.command()
@click.option("--force", is_flag=True, help="Replace an existing key (bundles signed with the old key stay valid).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--account", help="Your user name on the site, to sign a registration challenge (with --challenge).")
@click.option("--challenge", help="The challenge the site's profile page shows when you add a key by hand.")
def keygen(force: bool, as_json: bool, account: str | None, challenge: str | None) -> None:
    """Create the Ed25519 key that signs your result bundles, and show its public half.

    The key is stored as signing_key.pem (mode 0600) in the config directory: $NVMEDB_CONFIG_DIR, else
    $XDG_CONFIG_HOME/nvmedb, else ~/.config/nvmedb. An existing key is kept unless you pass --force;
    `nvmedb-client run` creates the key on first use, so you rarely need this command.

    \b
    To add the key on the site's profile page instead of with `nvmedb-client login`, pass your user name and the
    challenge the page shows: the printed registration signature proves to the site that you hold the private key.

    \b
    Example:
      nvmedb-client keygen
      NVMEDB_CONFIG_DIR=/etc/nvmedb nvmedb-client keygen --json
      nvmedb-client keygen --account alice --challenge 'eyJ1Ijo...'
    """
    if (account is None) != (challenge is None):
        raise click.ClickException(
            "--account and --challenge go together: the signature answers one account's challenge"
        )
    path = key_path()
    try:
        if path.exists() and not force:
            key = load_signing_key(path)
            created = False
        else:
            key = create_signing_key(force=force)
            created = True
    except SigningKeyError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot use the signing key at {path}: {exc.strerror or exc}") from exc

    public = public_key_bytes(key)
    result = {
        "path": str(path),
        "created": created,
        "public_key": base64.b64encode(public).decode("ascii"),
        "fingerprint": fingerprint(public),
    }
    if account is not None and challenge is not None:
        result["registration_signature"] = registration_proof(key, account=account, challenge=challenge.strip())
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(("Created a new signing key" if created else "Using the existing signing key") + f" at {path}")
    click.echo(f"Public key:  {result['public_key']}")
    click.echo(f"Fingerprint: {result['fingerprint']}")
    if "registration_signature" in result:
        click.echo(f"Registration signature: {result['registration_signature']}")
