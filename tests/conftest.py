"""Shared fixtures: where the real data samples live, and small helpers every test area uses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PRMKIT_SHARED", REPO.parent / "shared"))
REAL = SHARED / "data" / "real"


@pytest.fixture(scope="session")
def real_data() -> Path:
    """``../shared/data/real``: verbatim samples of the field's formats (read in place, never copied)."""
    if not REAL.is_dir():
        pytest.fail(f"real data samples not found at {REAL}; CI clones the repo with shared/ beside it")
    return REAL
