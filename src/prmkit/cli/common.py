"""Shared CLI plumbing: error display, progress bars, output paths.

The console and progress bar live in :mod:`prmkit.core.progress` (so lower layers can use them
without importing the CLI) and are re-exported here.
"""

from __future__ import annotations

import typer

from prmkit.core.progress import console, progress

__all__ = ["console", "fail", "progress"]


def fail(message: str, code: int = 2) -> None:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)
