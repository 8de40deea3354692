"""Tests of the experiment scripts in ``experiments/`` (outside the library, loaded from their files)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from prmkit.core.results import MARKER, Block, blocks

ROOT = Path(__file__).resolve().parents[2]


def load_experiment(name: str) -> ModuleType:
    """``experiments/<name>.py`` as a module (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shown(page: str, view: str) -> list[tuple[Block, str]]:
    """The results blocks of ``page`` (a path from the repository root) that name ``view``, each with the
    text the page shows between its markers: what a script's view must render from the block's file."""
    text = (ROOT / page).read_text(encoding="utf-8")
    pairs = zip(blocks(text, ROOT), MARKER.finditer(text), strict=True)
    return [(block, m["body"]) for block, m in pairs if block.view == view]
