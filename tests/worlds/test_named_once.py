"""No code outside ``prmkit.worlds`` names a world: everything else reaches a world through its one
registration (``prmkit.worlds.registry``), so a third world needs no branch anywhere else. Docstrings may
name worlds as examples; code may not (a string equal to a world's name or its oracle's, or an import
of a world's package)."""

from __future__ import annotations

import ast
from pathlib import Path

from prmkit.worlds.registry import WORLDS, oracle_name

SRC = Path(__file__).resolve().parents[2] / "src" / "prmkit"


def _named(path: Path, names: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    }
    keys = {
        id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)
    }  # a record's field, e.g. r["code"]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docs | keys and node.value in names:
            found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value!r}")
        if isinstance(node, ast.ImportFrom | ast.Import):
            modules = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for module in filter(None, modules):
                if any(module.startswith(f"prmkit.worlds.{n}") for n in WORLDS.names()):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: import {module}")
    return found


def test_no_code_outside_the_worlds_package_names_a_world() -> None:
    names = {*WORLDS.names(), *(oracle_name(n) for n in WORLDS.names())}
    found = [
        f
        for p in sorted(SRC.rglob("*.py"))
        if "worlds" not in p.relative_to(SRC).parts
        for f in _named(p, names)
    ]
    assert not found, "\n".join(found)
