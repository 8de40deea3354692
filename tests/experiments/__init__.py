"""Tests of the experiment scripts in ``experiments/`` (outside the library, loaded from their files)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_experiment(name: str) -> ModuleType:
    """``experiments/<name>.py`` as a module (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
