"""Reading the Markdown tables that reports and cards write, for tests that compare cells with numbers."""

from __future__ import annotations


def table_after(text: str, lead: str) -> list[list[str]]:
    """The cells of the Markdown table that follows the line starting with ``lead``: its header row first,
    then its rows, without the |---| line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(lead)) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return [rows[0], *rows[2:]]
