"""Every package's ``__init__`` docstring is its tree: it names each module (``name.py``) and subpackage
(``name/``) in the package, so a newcomer reading it finds every file, and a new file cannot go unlisted."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "prmkit"
PACKAGES = sorted(p.parent for p in SRC.rglob("__init__.py") if "__pycache__" not in p.parts)


def entries(package: Path) -> list[str]:
    """What the package holds: its modules as ``name.py`` and its subpackages as ``name/``."""
    modules = [p.name for p in package.glob("*.py") if p.name != "__init__.py"]
    subpackages = [f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(modules + subpackages)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(SRC.parent)))
def test_the_init_docstring_lists_every_module(package: Path) -> None:
    init = package / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    missing = [
        name for name in entries(package) if not re.search(rf"(?<![\w./]){re.escape(name)}(?!\w)", doc)
    ]
    assert not missing, (
        f"{init.relative_to(SRC.parent.parent)}: its docstring's tree does not name {missing}; add one line each "
        "saying what the file is for"
    )
