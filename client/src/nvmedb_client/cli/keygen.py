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
)


@click.command()
@click.option("--force", is_flag=True, help="Replace an existing key (bundles signed with the old key stay valid).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def keygen(force: bool, as_json: bool) -> None:
    """Create the Ed25519 key that signs your result bundles, and show its public half.

    The key is stored as signing_key.pem (mode 0600) in the config directory: $NVMEDB_CONFIG_DIR, else
    $XDG_CONFIG_HOME/nvmedb, else ~/.config/nvmedb. An existing key is kept unless you pass --force;
    `nvmedb-client run` creates the key on first use, so you rarely need this command.

    \b
    Example:
      nvmedb-client keygen
      NVMEDB_CONFIG_DIR=/etc/nvmedb nvmedb-client keygen --json
    """
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
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(("Created a new signing key" if created else "Using the existing signing key") + f" at {path}")
    click.echo(f"Public key:  {result['public_key']}")
    click.echo(f"Fingerprint: {result['fingerprint']}")
