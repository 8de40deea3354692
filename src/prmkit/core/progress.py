"""The shared stderr console and progress bar (built on ``rich``), for any layer that reports progress.

It lives in the core so that library code (labeling jobs, the pipeline runner) can show progress
without importing the CLI; the CLI's ``common`` module re-exports both.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

console = Console(stderr=True)


def progress() -> Progress:
    """A rich progress bar with count, rate-friendly columns and ETA, written to stderr."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
