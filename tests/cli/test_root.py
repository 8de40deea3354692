"""The root command: ``prmkit --version`` needs no sub-command."""

from __future__ import annotations

from typer.testing import CliRunner

from prmkit import __version__
from prmkit.cli import app


def test_version_prints_and_exits_zero_without_a_command():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == __version__
