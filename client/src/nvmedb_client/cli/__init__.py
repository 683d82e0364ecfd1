"""The `nvmedb-client` command line. Each subcommand lives in its own module and is imported only when used."""

import importlib

import click

from nvmedb_client import __version__

# name -> "module:attribute" of the click command
COMMANDS = {
    "plan": "nvmedb_client.cli.plan:plan",
    "collect": "nvmedb_client.cli.collect:collect",
    "run": "nvmedb_client.cli.run:run",
    "verify": "nvmedb_client.cli.verify:verify",
    "keygen": "nvmedb_client.cli.keygen:keygen",
    "login": "nvmedb_client.cli.login:login",
    "upload": "nvmedb_client.cli.upload:upload",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)


@click.group(cls=LazyGroup)
@click.version_option(__version__, prog_name="nvmedb-client")
def main() -> None:
    """Measure an NVMe drive with the SNIA PTS v2.0.2 and contribute the result to nvmedb.

    \b
    Example:
      nvmedb-client plan
      nvmedb-client run --device /dev/nvme0n1 --upload
    """
