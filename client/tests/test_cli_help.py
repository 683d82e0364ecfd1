"""Every command explains itself: `--help` works and shows an example (sqlite-utils' test_docs idea)."""

import pytest
from click.testing import CliRunner

from nvmedb_client.cli import COMMANDS, main


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help_with_an_example(name):
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example:" in result.output
    assert f"nvmedb-client {name}" in result.output


def test_the_top_level_help_lists_every_command():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output
