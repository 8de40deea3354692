"""The Python example in docs/search.md runs as written (docs examples must not rot)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "search.md"


def test_search_doc_example_runs(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "docs/search.md lost its Python example"
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})
    out = capsys.readouterr().out
    assert out.count("accuracy") == 5
