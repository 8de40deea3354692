"""Shared CLI plumbing: error display, progress bars, output paths.

The console and progress bar live in :mod:`prmkit.core.progress` (so lower layers can use them
without importing the CLI) and are re-exported here. Every error a user can cause is shown by
:func:`print_error`: the root group (``prmkit.cli._Group``) for exceptions, :func:`fail` for a command's own
checks, so each located issue stays on its own unwrapped line whatever the terminal width.
"""

from __future__ import annotations

import typer

from prmkit.core.progress import console, progress

__all__ = ["console", "fail", "print_error", "progress"]


def print_error(error: BaseException | str) -> None:
    """``error: <message>`` as is: no markup, no highlighting, no wrapping (a path is never split)."""
    console.print(f"error: {error}", markup=False, highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> None:
    """Print ``message`` as an error and exit with ``code`` (2: bad input or options)."""
    print_error(message)
    raise typer.Exit(code)
