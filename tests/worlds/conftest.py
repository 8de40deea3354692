"""The names of the built-in worlds and a CLI of their commands alone, for the tests of what every world
shares."""

from __future__ import annotations

import pytest
import typer

from prmkit.cli.world import register

WORLD_NAMES = ("arithmetic", "agent", "code")


def cli_app() -> typer.Typer:
    """A root app with only the worlds' commands (``prmkit arithmetic ...``, ``prmkit agent ...``), so a
    test does not depend on other areas' CLI modules."""
    root = typer.Typer()
    register(root)

    @root.callback()
    def _root() -> None: ...

    return root


@pytest.fixture
def app() -> typer.Typer:
    return cli_app()
