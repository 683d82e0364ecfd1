from pathlib import Path

import click

from nvmedb_client.api import upload_bundle


@click.command()
@click.argument("bundle", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--server", help="The site to send to [default: the one saved by `nvmedb-client login`].")
@click.option("--wait", is_flag=True, help="Follow the submission until the site publishes or rejects it.")
def upload(bundle: Path, server: str | None, wait: bool) -> None:
    """Send a bundle to the site and print the submission's URL.

    Network errors and server errors are retried with backoff; sending the same bundle twice is harmless. With
    --wait, the final status is printed (`published`, or `rejected` with the rule that failed), then where the unit
    sits among the other units of its model and what may explain a gap, and the submission's page last; the exit
    code is non-zero unless the submission was published. A trial (a file target or the quick profile) is published
    to you alone: it prints "private trial run: yours alone, never public".

    \b
    Example:
      nvmedb-client upload results/2026-11-23T0102Z.nvmedb.tar.gz --wait
    """
    code = upload_bundle(bundle, server=server, wait=wait, echo=click.echo)
    if code:
        raise SystemExit(code)
