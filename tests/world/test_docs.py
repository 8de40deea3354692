"""The Python examples in docs/world.md run as written."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "world.md"


def test_docs_examples_run() -> None:
    """Each block runs; the gold-label example prints a first error, and a block that prints a table
    (the systematic-mode measurement) prints exactly the rows the page shows."""
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks
    for block in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(DOC), "exec"), {})
        printed = out.getvalue()
        if printed.startswith("|"):
            missing = [row for row in printed.splitlines() if f"\n{row}\n" not in text]
            assert not missing, f"docs/world.md does not show these measured rows: {missing}"
        else:
            assert "first error:" in printed
