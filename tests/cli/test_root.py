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
    result = CliRunner().invoke(app, ["serve", "arithmetic-oracle", "--max-json-depth", "1000"])
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == "error: --max-json-depth: Input should be less than or equal to 500, found 1000"
    )
    assert "Traceback" not in result.output


def _commands(cmd, path=()):
    """Every leaf command of the app with its path (``eval bon``...)."""
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), cmd


def test_every_option_of_every_command_has_help():
    import typer

    missing = [
        f"prmkit {path} {p.opts[0]}"
        for path, cmd in _commands(typer.main.get_command(app))
        for p in cmd.params
        if p.opts and p.opts[0].startswith("-") and not (p.help or "").strip()
    ]
    assert not missing, missing


def test_a_default_with_a_newline_is_shown_readably():
    """A raw newline in ``[default: ...]`` breaks the help table; such options show an escaped form."""
    import typer

    raw = [
        f"prmkit {path} {p.opts[0]}"
        for path, cmd in _commands(typer.main.get_command(app))
        for p in cmd.params
        if isinstance(p.default, str) and "\n" in p.default and not isinstance(p.show_default, str)
    ]
    assert not raw, raw
    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "240"})
    assert "(default: '\\n')" in result.output  # the config's default, escaped (prmkit.cli.config)
