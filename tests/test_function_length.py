"""No function in ``src/`` is longer than 80 lines: a longer one is a join doing several things, which
reads better as one function per step (``../shared/STYLE.md``). Counted as ``ast`` counts it, from the
``def`` line to the function's last line, docstring and nested functions included."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_LINES = 80


def test_no_function_in_src_is_longer_than_80_lines() -> None:
    long = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}: {lines} lines")
    assert not long, f"functions over {MAX_LINES} lines:\n" + "\n".join(long)
