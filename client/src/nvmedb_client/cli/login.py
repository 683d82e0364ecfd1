import platform

import click

from nvmedb_client import data_license
from nvmedb_client.api import ApiError, NvmedbApi
from nvmedb_client.config import ClientConfig, ConfigError, normalize_server, save_config
from nvmedb_client.signing import fingerprint, load_or_create_signing_key, public_key_bytes


@click.command()
@click.option("--server", required=True, help="The nvmedb site, e.g. https://nvmedb.example.org")
@click.option("--token", help="An API token from your profile page on the site (asked for when missing).")
@click.option("--key-name", default=None, help="Name for the signing key on the site [default: this host's name].")
@click.option(
    "--accept-license",
    is_flag=True,
    help=f"Accept that your uploaded results are published under {data_license.SPDX} without being asked "
    "(for scripts).",
)
def login(server: str, token: str | None, key_name: str | None, accept_license: bool) -> None:
    """Save the site's URL and your API token, and register your signing key with the site.

    The data you upload is published under CC BY 4.0 (the code is MIT): login shows the notice and asks you to
    accept it (or pass --accept-license); the site records the acceptance on your account.

    The token is checked with the site and stored in the config directory (mode 0600). The Ed25519 signing key is
    created if missing; its public half is registered to your account so the site accepts the bundles it signs.

    \b
    Example:
      nvmedb-client login --server https://nvmedb.example.org --token nvmedb_AbC...
      nvmedb-client login --server http://127.0.0.1:8000   # asks for the token
      nvmedb-client login --server https://nvmedb.example.org --token nvmedb_AbC... --accept-license
    """
    try:
        server = normalize_server(server)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(data_license.NOTICE)
    if not accept_license and not click.confirm(f"Accept {data_license.SPDX} for the results you upload?"):
        raise click.ClickException(
            f"Not logged in: uploads are published under {data_license.SPDX}. Nothing was saved."
        )
    if not token:
        token = click.prompt(f"API token (create one at {server}/profile/)", hide_input=True).strip()
    key = load_or_create_signing_key()
    public_key = public_key_bytes(key)
    try:
        with NvmedbApi(server, token) as api:
            me = api.me()
            accepted = api.accept_data_license(data_license.SPDX)
            api.register_key(key, account=me["username"], name=key_name or platform.node() or "nvmedb-client")
    except ApiError as exc:
        if exc.status_code == 401:
            raise click.ClickException(f"The site refused the token: {exc.message}") from None
        if exc.code == "key_of_another_account":
            raise click.ClickException(
                "This machine's signing key is registered to another account on the site. Log in with that "
                "account's token, or point NVMEDB_CONFIG_DIR at another directory to make a new key."
            ) from None
        raise click.ClickException(exc.message) from None
    path = save_config(ClientConfig(server=server, token=token))
    click.echo(f"Logged in to {server} as {me['username']}; settings saved in {path}.")
    click.echo(f"Signing key {fingerprint(public_key)} is registered to your account.")
    click.echo(f"Accepted {accepted['license']} for your uploads ({accepted['accepted_at']}).")
