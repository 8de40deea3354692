"""The root command: ``prmkit --version`` needs no sub-command."""

from __future__ import annotations

from typer.testing import CliRunner

from prmkit import __version__
from prmkit.cli import app


def test_version_prints_and_exits_zero_without_a_command():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == __version__


def test_option_value_the_config_refuses_is_one_line_naming_the_flag():
    result = CliRunner().invoke(app, ["serve", "world-oracle", "--max-json-depth", "1000"])
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == "error: --max-json-depth: input should be less than or equal to 500, found 1000"
    )
    assert "Traceback" not in result.output
