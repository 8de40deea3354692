"""CLI commands of the label area (see prmkit.cli for the map)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to the root app (filled in as the area lands)."""
